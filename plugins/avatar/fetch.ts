/**
 * Fetches a provider's picture without letting the link reach inside the network or exhaust the server:
 * http(s) only, DNS resolved here and every address checked before connecting, the connection pinned to the
 * checked address (no second lookup that a rebinding DNS server could answer differently), size, connect
 * and total time limits, and a bounded number of redirects, each checked like the first link.
 */
import { lookup as dnsLookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import type { LookupFunction } from 'node:net'
import { isPublicIp } from '../../lib/ip.js'
import { Deadline, outboundRequest, OutboundError } from '../../lib/http/request.js'

export interface FetchLimits {
  /** Largest body accepted, in bytes. */
  maxBytes: number
  /** Time allowed to open the TCP connection of each hop, in ms. */
  connectTimeoutMs: number
  /** Time allowed for the whole fetch (every hop, headers and body), in ms. */
  timeoutMs: number
  /** Redirects followed before giving up. */
  maxRedirects: number
  /** Non-public addresses that may be fetched anyway: all (true), none (false), or those matching a predicate. */
  allowPrivate: boolean | ((ip: string) => boolean)
  /** When set, only these hosts (exact, or `.example.com` for any subdomain) may be fetched. */
  allowedHosts: readonly string[] | undefined
  /** Origins (`http://127.0.0.1:8084`) fetched even at non-public addresses: the dev provider's own server. */
  trustedOrigins?: ReadonlySet<string> | undefined
}

/** Why a picture was not fetched; `reason` is short and safe to log (no query strings, no tokens). */
export class PictureFetchError extends Error {
  constructor (readonly reason: string) {
    super(reason)
    this.name = 'PictureFetchError'
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308])
const ACCEPT = 'image/png,image/jpeg,image/gif,image/webp,image/avif;q=0.9'

/**
 * Fetches the picture at `link` (every hop through the package's one outbound call: a deadline timer that
 * destroys the socket, a byte cap on the wire and after decompression). `signal` stops it early (the avatar
 * plugin closing).
 */
export async function fetchPicture (link: string, limits: FetchLimits, signal?: AbortSignal): Promise<Buffer> {
  const deadline = new Deadline(limits.timeoutMs, signal)
  try {
    let url = parseLink(link)
    for (let hop = 0; ; hop++) {
      const addresses = await abortable(checkedAddresses(url, limits), deadline.signal)
      const res = await outboundRequest(url, {
        deadline,
        maxBytes: limits.maxBytes,
        connectTimeoutMs: limits.connectTimeoutMs,
        lookup: pinnedLookup(addresses),
        headers: { accept: ACCEPT, 'user-agent': 'fastify-gatehouse-avatar' },
        readBodyOf: (status) => status === 200,
        span: 'gatehouse.avatar.fetch'
      })
      if (REDIRECTS.has(res.status)) {
        if (hop >= limits.maxRedirects) throw new PictureFetchError(`more than ${limits.maxRedirects} redirects`)
        const location = res.headers.location
        if (location === undefined || location === '') throw new PictureFetchError(`redirect ${res.status} without a Location`)
        url = parseLink(location, url)
        continue
      }
      if (res.status !== 200) throw new PictureFetchError(`status ${res.status} from ${url.host}`)
      return res.body
    }
  } catch (err) {
    if (err instanceof PictureFetchError) throw err
    if (err instanceof OutboundError) {
      if (err.reason === 'timeout' || err.reason === 'too-large' || err.reason === 'aborted') throw new PictureFetchError(err.message)
      throw new PictureFetchError(`fetch failed: ${err.message}`)
    }
    throw new PictureFetchError(`fetch failed: ${(err as NodeJS.ErrnoException)?.code ?? (err as Error)?.message ?? String(err)}`)
  } finally {
    deadline.clear()
  }
}

function parseLink (link: string, base?: URL): URL {
  let url: URL
  try { url = new URL(link, base) } catch { throw new PictureFetchError('not a valid URL') }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new PictureFetchError(`scheme ${url.protocol} refused (http and https only)`)
  if (url.username !== '' || url.password !== '') throw new PictureFetchError('credentials in the URL refused')
  return url
}

type Address = { address: string; family: 4 | 6 }

/** Resolves the host and returns its addresses, every one of them checked. */
async function checkedAddresses (url: URL, limits: FetchLimits): Promise<Address[]> {
  // URL keeps IPv6 literals in brackets; a trailing dot is the same host.
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase()
  if (limits.allowedHosts !== undefined && !hostAllowed(host, limits.allowedHosts)) throw new PictureFetchError(`host ${host} is not in allowedHosts`)
  const literal = isIP(host)
  const found = literal !== 0
    ? [{ address: host, family: literal }]
    : await dnsLookup(host, { all: true, verbatim: true }).catch((err: NodeJS.ErrnoException) => {
      throw new PictureFetchError(`cannot resolve ${host}: ${err.code ?? err.message}`)
    })
  if (found.length === 0) throw new PictureFetchError(`cannot resolve ${host}`)
  if (limits.allowPrivate !== true && limits.trustedOrigins?.has(url.origin) !== true) {
    const allowed = typeof limits.allowPrivate === 'function' ? limits.allowPrivate : () => false
    // All, not just the first: a host that also resolves inside would be a way in on another attempt.
    const inside = found.find((a) => !isPublicIp(a.address) && !allowed(a.address))
    if (inside !== undefined) throw new PictureFetchError(`${host} resolves to non-public address ${inside.address}`)
  }
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }))
}

function hostAllowed (host: string, allowed: readonly string[]): boolean {
  return allowed.some((a) => a.startsWith('.') ? host.endsWith(a) || host === a.slice(1) : host === a)
}

/**
 * Node asks this instead of DNS: the socket goes to the addresses that were checked, nowhere else (no second
 * lookup a rebinding DNS server could answer differently). With `all` (Happy Eyeballs, on by default in Node
 * 20) it may try each of them.
 */
function pinnedLookup (targets: Address[]): LookupFunction {
  return ((_host: string, opts: { all?: boolean | undefined }, cb: (...a: unknown[]) => void) => {
    if (opts?.all === true) cb(null, targets)
    else cb(null, targets[0]!.address, targets[0]!.family)
  }) as unknown as LookupFunction
}

/** DNS lookups cannot be cancelled; stop waiting for one when the total time is up. */
function abortable<T> (p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}
