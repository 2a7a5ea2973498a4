import { isIPv4, isIPv6 } from 'node:net'
import { OptionsError } from './errors.js'

/**
 * IP address parsing and classification shared by realIp, onlyFrom, metrics/profiler allow-lists and the
 * avatar fetcher (which refuses private targets). Everything works on bytes, never on text, so that one
 * address written in several ways (`::ffff:10.0.0.1`, `[::1]`, `fe80::1%eth0`) is classified once, the same.
 */

/** A parsed address: 4 bytes for IPv4 (IPv4-mapped IPv6 included), 16 for IPv6. */
export interface ParsedIp { family: 4 | 6; bytes: Uint8Array }

/**
 * Parses an IPv4 or IPv6 address. Accepts `[v6]`, `[v6]:port`, `v4:port` (as sent in some
 * `X-Forwarded-For` headers) and a `%zone` suffix; IPv4-mapped IPv6 (`::ffff:a.b.c.d`) comes back as IPv4.
 * Returns null for anything else (leading zeros in IPv4, hex, host names, empty strings).
 */
export function parseIp (s: string): ParsedIp | null {
  if (typeof s !== 'string' || s.length === 0 || s.length > 64) return null
  // Hot path (every request of realIp/onlyFrom): plain dotted IPv4 without regexes or allocations but one.
  const fast = parseDottedV4(s)
  if (fast !== null) return { family: 4, bytes: fast }
  let text = s.trim()
  if (text.startsWith('[')) {
    const close = text.indexOf(']')
    if (close < 0) return null
    const rest = text.slice(close + 1)
    if (rest !== '' && !/^:\d{1,5}$/.test(rest)) return null
    text = text.slice(1, close)
  } else {
    const v4port = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(text)
    if (v4port !== null) text = v4port[1] as string
  }
  const zone = text.indexOf('%')
  if (zone >= 0) text = text.slice(0, zone)
  if (isIPv4(text)) return { family: 4, bytes: parseV4(text) }
  if (!isIPv6(text)) return null
  const bytes = parseV6(text)
  return isMappedV4(bytes) ? { family: 4, bytes: bytes.slice(12) } : { family: 6, bytes }
}

/**
 * True only for globally routable unicast addresses. False for private, loopback, link-local,
 * unique-local, unspecified, CGNAT, multicast, broadcast, reserved, benchmarking and documentation ranges
 * (and their IPv4-mapped forms), and for anything that is not an address.
 */
export function isPublicIp (ip: string): boolean {
  const known = publicMemo.get(ip)
  if (known !== undefined) return known
  const result = classifyPublic(ip)
  remember(publicMemo, ip, result)
  return result
}

function classifyPublic (ip: string): boolean {
  const parsed = parseIp(ip)
  if (parsed === null) return false
  const ranges = parsed.family === 4 ? NON_PUBLIC_V4 : NON_PUBLIC_V6
  if (ranges.some((r) => inCidr(parsed.bytes, r))) return false
  if (parsed.family === 4) return true
  // Only 2000::/3 is allocated as global unicast; everything else in IPv6 is special-purpose.
  if (((parsed.bytes[0] as number) & 0xe0) !== 0x20) return false
  // 6to4 (2002::/16) carries an IPv4 address that a relay would reach: judge that address.
  if (parsed.bytes[0] === 0x20 && parsed.bytes[1] === 0x02) return classifyPublic(Array.from(parsed.bytes.slice(2, 6)).join('.'))
  return true
}

/**
 * True when `ip` matches `entry`: a full address (compared as bytes, so any spelling matches), a CIDR
 * (`10.0.0.0/8`, `2001:db8::/32`), or a textual prefix (`192.168.`, `2001:db8:`) compared against the
 * address's canonical uncompressed form. Invalid entries and invalid addresses never match.
 */
export function ipMatches (ip: string, entry: string): boolean {
  const matcher = compileEntry(entry)
  return matcher !== null && matcher(parseIp(ip))
}

/**
 * Compiles an allow-list once (registration time) into a fast predicate. Throws an OptionsError naming
 * `option` and the first invalid entry.
 */
export function compileIpMatcher (entries: readonly string[], option = 'allow'): (ip: string) => boolean {
  const matchers = entries.map((entry) => {
    const m = compileEntry(entry)
    if (m === null) throw new OptionsError(option, `has an invalid IP entry ${JSON.stringify(entry)}: expected an address, a CIDR or a prefix`)
    return m
  })
  const memo = new Map<string, boolean>()
  return (ip) => {
    const known = memo.get(ip)
    if (known !== undefined) return known
    const parsed = parseIp(ip)
    let result = false
    if (parsed !== null) for (const m of matchers) if (m(parsed)) { result = true; break }
    remember(memo, ip, result)
    return result
  }
}

// Results are cached per address text: clients repeat, and a Map hit is far cheaper than a parse. The cache
// is bounded (cleared when full), so a flood of distinct or garbage addresses cannot grow memory.
const MEMO_LIMIT = 4096
const publicMemo = new Map<string, boolean>()

function remember (memo: Map<string, boolean>, key: string, value: boolean): void {
  if (typeof key !== 'string' || key.length > 64) return
  if (memo.size >= MEMO_LIMIT) memo.clear()
  memo.set(key, value)
}

/** Canonical text of a parsed address: dotted IPv4, or eight lower-case hex groups without `::`. */
export function formatIp (ip: ParsedIp): string {
  if (ip.family === 4) return Array.from(ip.bytes).join('.')
  const groups: string[] = []
  for (let i = 0; i < 16; i += 2) groups.push((((ip.bytes[i] as number) << 8) | (ip.bytes[i + 1] as number)).toString(16))
  return groups.join(':')
}

interface Cidr { family: 4 | 6; bytes: Uint8Array; bits: number }
type EntryMatcher = (ip: ParsedIp | null) => boolean

function compileEntry (entry: string): EntryMatcher | null {
  if (typeof entry !== 'string') return null
  const e = entry.trim().toLowerCase()
  if (e === '') return null
  if (e.includes('/')) {
    const cidr = parseCidr(e)
    return cidr === null ? null : (ip) => ip !== null && inCidr(ip.bytes, cidr, ip.family)
  }
  const exact = parseIp(e)
  if (exact !== null) {
    return (ip) => ip !== null && ip.family === exact.family && equalBytes(ip.bytes, exact.bytes)
  }
  // A prefix: only address characters, so that garbage is refused at registration.
  if (!/^[0-9a-f.:]+$/.test(e)) return null
  const whole = prefixAsCidr(e)
  if (whole !== null) return (ip) => ip !== null && inCidr(ip.bytes, whole, ip.family)
  return (ip) => ip !== null && formatIp(ip).startsWith(e)
}

// `192.168.` is 192.168.0.0/16 and `2001:db8:` is 2001:db8::/32: compared as bytes, no text per request.
function prefixAsCidr (e: string): Cidr | null {
  if (/^(\d{1,3}\.){1,3}$/.test(e)) {
    const octets = e.slice(0, -1).split('.').map(Number)
    if (octets.some((o, i) => o > 255 || String(o) !== e.split('.')[i])) return null
    const bytes = new Uint8Array(4)
    bytes.set(octets)
    return { family: 4, bytes, bits: octets.length * 8 }
  }
  if (/^([0-9a-f]{1,4}:){1,7}$/.test(e)) {
    const groups = e.slice(0, -1).split(':').map((g) => parseInt(g, 16))
    const bytes = new Uint8Array(16)
    groups.forEach((g, i) => { bytes[i * 2] = g >> 8; bytes[i * 2 + 1] = g & 0xff })
    return { family: 6, bytes, bits: groups.length * 16 }
  }
  return null
}

function parseCidr (text: string): Cidr | null {
  const slash = text.indexOf('/')
  const bitsText = text.slice(slash + 1)
  if (!/^\d{1,3}$/.test(bitsText)) return null
  const addr = text.slice(0, slash)
  let bits = Number(bitsText)
  let parsed: ParsedIp | null = null
  if (isIPv4(addr)) parsed = { family: 4, bytes: parseV4(addr) }
  else if (isIPv6(addr)) {
    const bytes = parseV6(addr)
    // `::ffff:10.0.0.0/104` means 10.0.0.0/8, because mapped addresses are parsed as IPv4.
    if (isMappedV4(bytes) && bits >= 96) { parsed = { family: 4, bytes: bytes.slice(12) }; bits -= 96 } else parsed = { family: 6, bytes }
  }
  if (parsed === null || bits > parsed.bytes.length * 8) return null
  return { family: parsed.family, bytes: parsed.bytes, bits }
}

function inCidr (bytes: Uint8Array, cidr: Cidr, family: 4 | 6 = bytes.length === 4 ? 4 : 6): boolean {
  if (family !== cidr.family) return false
  const whole = cidr.bits >> 3
  for (let i = 0; i < whole; i++) if (bytes[i] !== cidr.bytes[i]) return false
  const rest = cidr.bits & 7
  if (rest === 0) return true
  const mask = (0xff << (8 - rest)) & 0xff
  return ((bytes[whole] as number) & mask) === ((cidr.bytes[whole] as number) & mask)
}

/** Strict dotted-quad IPv4 (no leading zeros, no spaces), or null. */
function parseDottedV4 (s: string): Uint8Array | null {
  const n = s.length
  if (n < 7 || n > 15) return null
  const out = new Uint8Array(4)
  let part = 0
  let value = 0
  let digits = 0
  for (let i = 0; i <= n; i++) {
    const c = i === n ? 46 : s.charCodeAt(i)
    if (c >= 48 && c <= 57) {
      if (digits > 0 && value === 0) return null // leading zero
      value = value * 10 + (c - 48)
      if (++digits > 3 || value > 255) return null
    } else if (c === 46) {
      if (digits === 0 || part > 3) return null
      out[part++] = value
      value = 0
      digits = 0
    } else return null
  }
  return part === 4 ? out : null
}

function parseV4 (text: string): Uint8Array {
  return Uint8Array.from(text.split('.').map(Number))
}

// Called only on text node:net accepted as IPv6, so the shape is known to be valid.
function parseV6 (text: string): Uint8Array {
  const bytes = new Uint8Array(16)
  let head = text
  let tailV4: Uint8Array | null = null
  const lastColon = text.lastIndexOf(':')
  if (text.includes('.', lastColon)) {
    tailV4 = parseV4(text.slice(lastColon + 1))
    head = text.slice(0, lastColon + 1) + '0:0'
  }
  const [left = '', right] = head.split('::')
  const leftGroups = left === '' ? [] : left.split(':')
  const rightGroups = right === undefined || right === '' ? [] : right.split(':')
  const groups = [...leftGroups, ...new Array<string>(8 - leftGroups.length - rightGroups.length).fill('0'), ...rightGroups]
  groups.forEach((g, i) => {
    const v = parseInt(g, 16)
    bytes[i * 2] = v >> 8
    bytes[i * 2 + 1] = v & 0xff
  })
  if (tailV4 !== null) bytes.set(tailV4, 12)
  return bytes
}

function isMappedV4 (bytes: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (bytes[i] !== 0) return false
  return bytes[10] === 0xff && bytes[11] === 0xff
}

function equalBytes (a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

function cidrs (list: string[]): Cidr[] {
  return list.map((c) => {
    const parsed = parseCidr(c)
    if (parsed === null) throw new Error(`bad built-in range ${c}`)
    return parsed
  })
}

// IANA IPv4 special-purpose registry entries that are not globally reachable, plus multicast and 240/4.
const NON_PUBLIC_V4 = cidrs([
  '0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12',
  '192.0.0.0/24', '192.0.2.0/24', '192.88.99.0/24', '192.168.0.0/16', '198.18.0.0/15', '198.51.100.0/24',
  '203.0.113.0/24', '224.0.0.0/4', '240.0.0.0/4'
])

// Inside 2000::/3: documentation (2001:db8::/32, 3fff::/20), benchmarking (2001:2::/48) and ORCHID
// (2001:10::/28, 2001:20::/28). Loopback, unspecified, link-local, unique-local, multicast, NAT64 and the
// deprecated IPv4-compatible form all lie outside 2000::/3. Teredo (2001::/32) is a real client address.
const NON_PUBLIC_V6 = cidrs([
  '2001:db8::/32', '3fff::/20', '2001:2::/48', '2001:10::/28', '2001:20::/28'
])
