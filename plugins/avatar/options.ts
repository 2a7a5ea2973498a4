import type { AvatarStore } from '../../stores/index.js'
import { OptionsError } from '../../lib/errors.js'
import type { Duration } from '../../lib/duration.js'
import { checkKeys, keyList, optionDuration, optionInt, optionList, optionPrefix, optionUrl } from '../../lib/options.js'
import { compileIpMatcher } from '../../lib/ip.js'
import type { FetchLimits } from './fetch.js'

/** Limits on fetching and decoding a provider's picture. */
export interface AvatarFetchOptions {
  /** Largest picture body accepted, in bytes. Default 2 MiB. */
  maxBytes?: number | undefined
  /** Time to open each connection: ms or `'5s'`. Default 5 s. */
  connectTimeout?: Duration | undefined
  /** Time for the whole fetch, redirects and body included: ms or `'10s'`. Default 10 s. */
  timeout?: Duration | undefined
  /** Redirects followed (each target checked again). Default 3. */
  maxRedirects?: number | undefined
  /** Most pixels (width × height) a picture may have; checked before decoding. Default 4096 × 4096. */
  maxPixels?: number | undefined
  /**
   * Fetch from private, loopback, link-local and other non-public addresses: `true` for all, or a list of
   * addresses and CIDRs (`['10.1.2.0/24']`) for just those. Default false: a picture link must not be a way
   * into the service's own network (cloud metadata at 169.254.169.254, admin ports on loopback).
   */
  allowPrivate?: boolean | string[] | undefined
  /** When set, only pictures from these hosts are fetched (`host`, or `.example.com` for its subdomains). */
  allowedHosts?: string[] | undefined
  /**
   * How long a login waits for its picture: ms or `'1s'`; 0 never waits. Default 1 s. A picture that takes
   * longer is stored when it arrives (within `timeout`), replacing the identicon the login went on with.
   */
  loginWait?: Duration | undefined
}

/** Options of `avatarPlugin`. */
export interface AvatarOptions {
  /**
   * Store instance (any object with put/get/id/remove/list/close) or address: `memory://`, `file:///path` or
   * a plain path, `bolt:///path/file.db`, `mongodb://host:port/db?ava_db=&ava_coll=`. Default in-memory.
   * The plugin closes the store when Fastify closes.
   */
  store?: string | AvatarStore | undefined
  /** Route prefix of `GET {prefix}/<avatar_id>.image`. Default `/avatar`. */
  prefix?: string | undefined
  /** Public base address used in avatar links. Default: the auth core's `url`. */
  url?: string | undefined
  /** Longest side of stored pictures in pixels, resized once at store time; 0 keeps the size. Default 0. */
  resizeLimit?: number | undefined
  /**
   * How long browsers keep a served avatar before revalidating it with the ETag: ms or `'1h'` (sent as `max-age` in
   * whole seconds); 0 revalidates every time. Default 1 hour.
   */
  maxAge?: Duration | undefined
  /** Limits on fetching and decoding pictures. */
  fetch?: AvatarFetchOptions | undefined
}

export interface ResolvedAvatarOptions {
  store: string | AvatarStore | undefined
  loginWaitMs: number
  prefix: string
  url: string | undefined
  resizeLimit: number
  /** `max-age` in seconds. */
  maxAge: number
  maxPixels: number
  fetch: FetchLimits
}

export const AVATAR_KEYS = keyList<AvatarOptions>({ store: true, prefix: true, url: true, resizeLimit: true, maxAge: true, fetch: true })
const KNOWN_FETCH = keyList<AvatarFetchOptions>({
  maxBytes: true, connectTimeout: true, timeout: true, maxRedirects: true, maxPixels: true, allowPrivate: true, allowedHosts: true, loginWait: true
})

/** Validates the options and applies defaults; errors name the option as `avatar.<name>`. */
export function resolveAvatarOptions (opts: AvatarOptions): ResolvedAvatarOptions {
  const o = checkKeys(opts ?? {}, AVATAR_KEYS, 'avatar') as AvatarOptions
  const f = (o.fetch === undefined ? {} : checkKeys(o.fetch, KNOWN_FETCH, 'avatar.fetch')) as AvatarFetchOptions
  if (o.store !== undefined && typeof o.store !== 'string' && (typeof o.store !== 'object' || o.store === null)) {
    throw new OptionsError('avatar.store', 'must be a store object or an address string')
  }
  const hosts = f.allowedHosts === undefined ? undefined : optionList('avatar.fetch.allowedHosts', f.allowedHosts)
  return {
    store: o.store,
    loginWaitMs: f.loginWait === 0 ? 0 : optionDuration('avatar.fetch.loginWait', f.loginWait, 1000),
    prefix: optionPrefix('avatar.prefix', o.prefix, '/avatar'),
    url: o.url === undefined ? undefined : checkUrl(o.url),
    resizeLimit: optionInt('avatar.resizeLimit', o.resizeLimit, 0, 0),
    maxAge: o.maxAge === 0 ? 0 : Math.round(optionDuration('avatar.maxAge', o.maxAge, 3_600_000) / 1000),
    maxPixels: optionInt('avatar.fetch.maxPixels', f.maxPixels, 4096 * 4096, 1),
    fetch: {
      maxBytes: optionInt('avatar.fetch.maxBytes', f.maxBytes, 2 * 1024 * 1024, 1),
      connectTimeoutMs: optionDuration('avatar.fetch.connectTimeout', f.connectTimeout, 5000),
      timeoutMs: optionDuration('avatar.fetch.timeout', f.timeout, 10_000),
      maxRedirects: optionInt('avatar.fetch.maxRedirects', f.maxRedirects, 3, 0),
      allowPrivate: privateRule(f.allowPrivate),
      allowedHosts: hosts?.map((h) => h.toLowerCase())
    }
  }
}

/** The public base address of avatar links, without a trailing slash. */
export function checkUrl (url: unknown): string {
  return optionUrl('avatar.url', url).href.replace(/\/+$/, '')
}

function privateRule (value: unknown): boolean | ((ip: string) => boolean) {
  if (value === undefined) return false
  if (typeof value === 'boolean') return value
  if (!Array.isArray(value)) throw new OptionsError('avatar.fetch.allowPrivate', 'must be a boolean or a list of addresses and CIDRs')
  return compileIpMatcher(value, 'avatar.fetch.allowPrivate')
}
