import type { AvatarStore } from '../../stores/index.js'
import { OptionsError } from '../core/options.js'
import { parseDuration, type Duration } from '../core/duration.js'
import { compileIpMatcher } from '../shared/ip.js'
import type { FetchLimits } from './fetch.js'

/** Limits on fetching and decoding a provider's picture. */
export interface AvatarFetchOptions {
  /** Largest picture body accepted, in bytes. Default 2 MiB. */
  maxBytes?: number
  /** Time to open each connection: ms or `'5s'`. Default 5 s. */
  connectTimeout?: Duration
  /** Time for the whole fetch, redirects and body included: ms or `'10s'`. Default 10 s. */
  timeout?: Duration
  /** Redirects followed (each target checked again). Default 3. */
  maxRedirects?: number
  /** Most pixels (width × height) a picture may have; checked before decoding. Default 4096 × 4096. */
  maxPixels?: number
  /**
   * Fetch from private, loopback, link-local and other non-public addresses: `true` for all, or a list of
   * addresses and CIDRs (`['10.1.2.0/24']`) for just those. Default false: a picture link must not be a way
   * into the service's own network (cloud metadata at 169.254.169.254, admin ports on loopback).
   */
  allowPrivate?: boolean | string[]
  /** When set, only pictures from these hosts are fetched (`host`, or `.example.com` for its subdomains). */
  allowedHosts?: string[]
}

/** Options of `avatarPlugin`. */
export interface AvatarOptions {
  /**
   * Store instance (any object with put/get/id/remove/list/close) or address: `memory://`, `file:///path` or
   * a plain path, `bolt:///path/file.db`, `mongodb://host:port/db?ava_db=&ava_coll=`. Default in-memory.
   * The plugin closes the store when Fastify closes.
   */
  store?: string | AvatarStore
  /** Route prefix of `GET {prefix}/<avatar_id>.image`. Default `/avatar`. */
  prefix?: string
  /** Public base address used in avatar links. Default: the auth core's `url`. */
  url?: string
  /** Longest side of stored pictures in pixels, resized once at store time; 0 keeps the size. Default 0. */
  resizeLimit?: number
  /** `max-age` of served avatars, in seconds (clients revalidate with the ETag afterwards). Default 3600. */
  maxAge?: number
  /** Limits on fetching and decoding pictures. */
  fetch?: AvatarFetchOptions
}

export interface ResolvedAvatarOptions {
  store: string | AvatarStore | undefined
  prefix: string
  url: string | undefined
  resizeLimit: number
  maxAge: number
  maxPixels: number
  fetch: FetchLimits
}

const KNOWN = new Set(['store', 'prefix', 'url', 'resizeLimit', 'maxAge', 'fetch'])
const KNOWN_FETCH = new Set(['maxBytes', 'connectTimeout', 'timeout', 'maxRedirects', 'maxPixels', 'allowPrivate', 'allowedHosts'])

/** Validates the options and applies defaults; errors name the option as `avatar.<name>`. */
export function resolveAvatarOptions (opts: AvatarOptions): ResolvedAvatarOptions {
  if (opts === null || typeof opts !== 'object') throw new OptionsError('avatar', 'options must be an object')
  for (const key of Object.keys(opts)) {
    // Fastify passes its own registration options through the same object.
    if (!KNOWN.has(key) && !['prefix', 'logLevel', 'logSerializers'].includes(key)) throw new OptionsError(`avatar.${key}`, 'is not a known option')
  }
  const f = opts.fetch ?? {}
  if (typeof f !== 'object' || f === null) throw new OptionsError('avatar.fetch', 'must be an object')
  for (const key of Object.keys(f)) if (!KNOWN_FETCH.has(key)) throw new OptionsError(`avatar.fetch.${key}`, 'is not a known option')
  if (opts.store !== undefined && typeof opts.store !== 'string' && (typeof opts.store !== 'object' || opts.store === null)) {
    throw new OptionsError('avatar.store', 'must be a store object or an address string')
  }
  if (opts.url !== undefined) checkUrl(opts.url)
  const hosts = f.allowedHosts
  if (hosts !== undefined && (!Array.isArray(hosts) || !hosts.every((h) => typeof h === 'string' && h !== ''))) {
    throw new OptionsError('avatar.fetch.allowedHosts', 'must be a list of host names')
  }
  const allowPrivate = privateRule(f.allowPrivate)
  const maxPixels = int('avatar.fetch.maxPixels', f.maxPixels, 4096 * 4096, 1)
  return {
    store: opts.store,
    prefix: prefix(opts.prefix),
    url: opts.url?.replace(/\/+$/, ''),
    resizeLimit: int('avatar.resizeLimit', opts.resizeLimit, 0, 0),
    maxAge: int('avatar.maxAge', opts.maxAge, 3600, 0),
    maxPixels,
    fetch: {
      maxBytes: int('avatar.fetch.maxBytes', f.maxBytes, 2 * 1024 * 1024, 1),
      connectTimeoutMs: duration('avatar.fetch.connectTimeout', f.connectTimeout, 5000),
      timeoutMs: duration('avatar.fetch.timeout', f.timeout, 10_000),
      maxRedirects: int('avatar.fetch.maxRedirects', f.maxRedirects, 3, 0),
      allowPrivate,
      allowedHosts: hosts?.map((h) => h.toLowerCase())
    }
  }
}

export function checkUrl (url: unknown): string {
  let u: URL | undefined
  try { u = new URL(String(url)) } catch {}
  if (typeof url !== 'string' || u === undefined || (u.protocol !== 'http:' && u.protocol !== 'https:')) {
    throw new OptionsError('avatar.url', 'must be an http(s) URL (the public base address)')
  }
  return url.replace(/\/+$/, '')
}

function privateRule (value: unknown): boolean | ((ip: string) => boolean) {
  if (value === undefined) return false
  if (typeof value === 'boolean') return value
  if (!Array.isArray(value)) throw new OptionsError('avatar.fetch.allowPrivate', 'must be a boolean or a list of addresses and CIDRs')
  try {
    return compileIpMatcher(value)
  } catch (err) {
    throw new OptionsError('avatar.fetch.allowPrivate', `has an ${(err as Error).message}`)
  }
}

function int (name: string, value: unknown, dflt: number, min: number): number {
  if (value === undefined) return dflt
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) throw new OptionsError(name, `must be an integer >= ${min}`)
  return value
}

function duration (name: string, value: unknown, dflt: number): number {
  if (value === undefined) return dflt
  const ms = parseDuration(value as Duration)
  if (ms === undefined) throw new OptionsError(name, `must be a positive duration in ms or like "10s", got ${JSON.stringify(value)}`)
  return ms
}

function prefix (value: unknown): string {
  if (value === undefined) return '/avatar'
  if (typeof value !== 'string' || !/^\/[A-Za-z0-9._~\-/]*$/.test(value)) throw new OptionsError('avatar.prefix', 'must be a path starting with "/"')
  return value.replace(/\/+$/, '') || '/avatar'
}
