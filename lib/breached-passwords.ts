/**
 * Is a password known from data breaches? (ASVS 5.0 6.2.12.) Two sources:
 * - the Pwned Passwords range API of Have I Been Pwned, by k-anonymity: only the first 5 hex characters of the
 *   password's SHA-1 (uppercase) leave the server; the service answers every `SUFFIX:COUNT` line under that prefix
 *   and the match is made here. With `Add-Padding: true` the answer is padded with made-up suffixes of count 0
 *   (so its size tells nothing of the prefix), which are ignored. Facts from
 *   https://haveibeenpwned.com/API/v3#PwnedPasswords and https://haveibeenpwned.com/API/v3#PwnedPasswordsPadding;
 * - an offline list (`file`): one SHA-1 per line, or `SHA1:COUNT` lines as the range API and the downloadable
 *   corpus give them, read once into memory when the check is built.
 * A service that is slow (`timeout`), down, or answers something that is not a range (not one `SUFFIX:COUNT` line) is
 * the host's choice: `onUnavailable: 'allow'` (fail-open, the
 * default: the verdict says it could not check) or `'refuse'` (fail-closed: 503 `GATEHOUSE_UNAVAILABLE`).
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { ErrorCodes, HttpError, OptionsError } from './errors.js'
import { checkKeys, optionDuration, optionInt, optionString, optionUrl } from './options.js'
// The outbound HTTP client loads with the first check, not with the package (the import cost, issue 46).
import type * as OutboundHttp from './http/request.js'
import type { Duration } from './duration.js'

/** Options of `breachedPasswords`. */
export interface BreachedPasswordsOptions {
  /**
   * The range API's base address; the 5-character prefix is appended. Default
   * `https://api.pwnedpasswords.com/range/` (a local mirror or a stand-in in tests).
   */
  rangeUrl?: string | undefined
  /** An offline list instead of the API: a file of SHA-1 hashes, one per line, or `SHA1:COUNT` lines. Default none. */
  file?: string | undefined
  /** Longest wait for the range API: ms or like `'3s'`. Default 3 s. */
  timeout?: Duration | undefined
  /** When the API cannot answer: `'allow'` (fail-open: not breached, `checked: false`) or `'refuse'` (503). Default `'allow'`. */
  onUnavailable?: 'allow' | 'refuse' | undefined
  /** How many breaches make a password "breached". Default 1 (any). */
  minCount?: number | undefined
}

/** What a check found. */
export interface BreachVerdict {
  /** Seen in breaches at least `minCount` times. */
  readonly breached: boolean
  /** How many times (0 when not seen, or not checked). */
  readonly count: number
  /** False when the service could not answer and `onUnavailable` is `'allow'`. */
  readonly checked: boolean
}

/** A breached-password check. */
export interface BreachedPasswords {
  /** Checks one password (never sent anywhere: its SHA-1's first 5 characters at most). */
  check(password: string): Promise<BreachVerdict>
}

const RANGE_URL = 'https://api.pwnedpasswords.com/range/'
/** A padded range answer is 800-1000 lines of 40 bytes; far below this. */
const MAX_RANGE_BYTES = 1024 * 1024
const LINE_RE = /^([0-9A-Fa-f]{40})(?::(\d+))?$/
/** A line of a range answer: a 35-character suffix and its count. */
const RANGE_LINE_RE = /^([0-9A-Fa-f]{35}):(\d+)$/

/** The check the options describe; OptionsError naming `breachedPasswords.<key>` (or `label`). */
export function breachedPasswords (opts: BreachedPasswordsOptions = {}, label = 'breachedPasswords'): BreachedPasswords {
  checkKeys(opts, ['rangeUrl', 'file', 'timeout', 'onUnavailable', 'minCount'], label)
  const minCount = optionInt(`${label}.minCount`, opts.minCount, 1, 1)
  const onUnavailable = opts.onUnavailable ?? 'allow'
  if (onUnavailable !== 'allow' && onUnavailable !== 'refuse') throw new OptionsError(`${label}.onUnavailable`, 'must be \'allow\' or \'refuse\'')
  const file = optionString(`${label}.file`, opts.file)
  if (file !== undefined) {
    if (opts.rangeUrl !== undefined) throw new OptionsError(`${label}.rangeUrl`, 'cannot be given with file: the offline list is the only source then')
    const known = readList(file, `${label}.file`)
    return { check: async (password) => verdict(known.get(sha1(password)) ?? 0, minCount) }
  }
  const base = optionUrl(`${label}.rangeUrl`, opts.rangeUrl ?? RANGE_URL).href
  const timeoutMs = optionDuration(`${label}.timeout`, opts.timeout, 3000)
  return {
    async check (password) {
      const hash = sha1(password)
      let count: number
      try {
        count = await rangeCount(base, hash, timeoutMs)
      } catch (err) {
        if (onUnavailable === 'allow') return { breached: false, count: 0, checked: false }
        throw new HttpError(503, 'service unavailable', 'the breached-password check could not answer; try again', ErrorCodes.UNAVAILABLE, { cause: err })
      }
      return verdict(count, minCount)
    }
  }
}

function sha1 (password: string): string {
  return createHash('sha1').update(password, 'utf8').digest('hex').toUpperCase()
}

function verdict (count: number, minCount: number): BreachVerdict {
  return { breached: count >= minCount, count, checked: true }
}

/** The count of `hash` in its range (0 when absent or a padding line); throws when the API cannot answer. */
async function rangeCount (base: string, hash: string, timeoutMs: number): Promise<number> {
  const url = new URL(hash.slice(0, 5), base.endsWith('/') ? base : `${base}/`)
  const http = await loadHttp()
  const answer = await http.withDeadline(timeoutMs, async (deadline) => await http.outboundRequest(url, {
    headers: { 'add-padding': 'true', accept: 'text/plain' },
    deadline,
    maxBytes: MAX_RANGE_BYTES,
    span: 'gatehouse.breached_passwords.range'
  }))
  if (answer.status !== 200) throw new Error(`the range API answered HTTP ${answer.status}`)
  const suffix = hash.slice(5)
  let ranged = false
  for (const line of answer.body.toString('utf8').split('\n')) {
    const m = RANGE_LINE_RE.exec(line.trim())
    if (m === null) continue
    ranged = true
    // A padding line has count 0: the same as absent.
    if (m[1]!.toUpperCase() === suffix) return Math.min(Number.parseInt(m[2]!, 10), Number.MAX_SAFE_INTEGER)
  }
  // Every range holds hundreds of suffixes, and padding besides: an answer without one is not the range API's (a
  // proxy's error page, a captive portal), and must not pass for "not breached" but count as the service failing.
  if (!ranged) throw new Error('the range API answered no SUFFIX:COUNT line')
  return 0
}

/** The offline list: hash → count (1 for a bare hash); count-0 lines are padding and left out. */
function readList (file: string, option: string): Map<string, number> {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw new OptionsError(option, `cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { cause: err })
  }
  const known = new Map<string, number>()
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim()
    if (line === '' || line.startsWith('#')) continue
    const m = LINE_RE.exec(line)
    if (m === null) throw new OptionsError(option, `line ${i + 1} is not a SHA-1 hash or HASH:COUNT`)
    const count = m[2] === undefined ? 1 : Number.parseInt(m[2], 10)
    if (count > 0) known.set(m[1]!.toUpperCase(), count)
  }
  return known
}

/** The outbound HTTP client (lib/http/request.ts), imported at the first check. */
async function loadHttp (): Promise<typeof OutboundHttp> {
  return await import('./http/request.js')
}
