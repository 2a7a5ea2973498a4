/** Options of the TOTP provider, checked at registration: each mistake is an OptionsError naming the option. */
import { OptionsError } from '../../lib/errors.js'
import type { Duration } from '../../lib/duration.js'
import { checkKeys, optionBoolean, optionLifetime, optionInt, optionList, optionName, optionString, providerLabel } from '../../lib/options.js'
import type { StateStoreOption } from '../../stores/state/resolve.js'
import type { TotpStoreOption } from '../../stores/totp/index.js'
import { readKey } from './seal.js'

/** Options of `totpProvider`. */
export interface TotpProviderOptions {
  /** Route name: `{authPrefix}/<name>/…`. Default `totp`. */
  name?: string | undefined
  /**
   * The key TOTP secrets are sealed with (AES-256-GCM) and recovery codes hashed with: 32 random bytes, as a Buffer
   * or 64 hex / 44 base64 characters. Required. A key that does not open the store's secrets stops the start.
   */
  encryptionKey: Uint8Array | string
  /**
   * Where secrets and recovery codes live: `memory://` (default; one process), `bolt:///path/totp.db` (one lmdb
   * file), `redis://host:port/db` (shared by every instance), or any `TotpStore` object (left open on close).
   */
  store?: TotpStoreOption | undefined
  /**
   * Where used codes, pending logins, enrolments in progress and the counts of wrong codes are kept: a StateStore
   * that counts (`increment`) or a `redis://` address. Default: the core's. (Step-up confirmations live in the core's.)
   */
  stateStore?: StateStoreOption | undefined
  /** The name authenticator apps show above the code. Default: the host name of the core's `url`. */
  issuer?: string | undefined
  /**
   * Whether `POST …/enrol` answers a QR code (SVG, drawn with the optional package qrcode). `false`: the page draws
   * one from `uri` itself, and qrcode is not needed. Default true.
   */
  qrCode?: boolean | undefined
  /**
   * Direct and SAML providers whose logins must also present a code when the user has an authenticator app. Default
   * none.
   */
  secondFactor?: string[] | undefined
  /** Lifetime of a pending login between the password and the code: ms or `'5m'`. Default 5 minutes. */
  pendingTtl?: Duration | undefined
  /**
   * How recently a code must have been confirmed (signing in with it counts) for removal and new recovery codes
   * without typing one: ms or `'5m'`. Default 5 minutes.
   */
  recentWithin?: Duration | undefined
  /** HMAC of the codes: `SHA1` (default: what every authenticator app reads), `SHA256` or `SHA512`. */
  algorithm?: 'SHA1' | 'SHA256' | 'SHA512' | undefined
  /** Digits per code: 6 (default) or 8. */
  digits?: 6 | 8 | undefined
  /** Seconds per code. Default 30. */
  period?: number | undefined
  /**
   * Time steps before the current one whose codes are still accepted (a code typed as its step ended, an app's clock
   * a little behind), 0-10. Steps ahead are never accepted. Default 1: a code lives at most two steps (60 s).
   */
  window?: number | undefined
}

/** Options after defaults. */
export interface ResolvedTotpOptions {
  name: string
  key: Buffer
  store: unknown
  stateStore: StateStoreOption | undefined
  issuer: string
  qrCode: boolean
  secondFactor: string[]
  pendingTtlMs: number
  recentWithinMs: number
  algorithm: 'SHA1' | 'SHA256' | 'SHA512'
  digits: 6 | 8
  period: number
  window: number
}

const KEYS = ['name', 'encryptionKey', 'store', 'stateStore', 'issuer', 'qrCode', 'secondFactor', 'pendingTtl', 'recentWithin', 'algorithm', 'digits', 'period', 'window']

export function resolveTotpOptions (opts: TotpProviderOptions, url: string, warn: (text: string) => void): ResolvedTotpOptions {
  const o = checkKeys(opts ?? {}, KEYS, 'totp')
  const name = optionName('totp.name', o.name, 'totp')
  const label = providerLabel('totp', name)
  const algorithm = (o.algorithm ?? 'SHA1') as ResolvedTotpOptions['algorithm']
  if (!['SHA1', 'SHA256', 'SHA512'].includes(algorithm)) throw new OptionsError(`${label}.algorithm`, 'must be "SHA1", "SHA256" or "SHA512"')
  const digits = o.digits ?? 6
  if (digits !== 6 && digits !== 8) throw new OptionsError(`${label}.digits`, 'must be 6 or 8')
  return {
    name,
    key: readKey(`${label}.encryptionKey`, o.encryptionKey),
    store: o.store,
    stateStore: o.stateStore as StateStoreOption | undefined,
    issuer: optionString(`${label}.issuer`, o.issuer) ?? new URL(url).hostname,
    qrCode: optionBoolean(`${label}.qrCode`, o.qrCode, true),
    secondFactor: optionList(`${label}.secondFactor`, o.secondFactor),
    pendingTtlMs: optionLifetime(`${label}.pendingTtl`, o.pendingTtl, 5 * 60_000, warn),
    recentWithinMs: optionLifetime(`${label}.recentWithin`, o.recentWithin, 5 * 60_000, warn),
    algorithm,
    digits,
    period: optionInt(`${label}.period`, o.period, 30, 10),
    window: windowOption(`${label}.window`, o.window)
  }
}

function windowOption (option: string, value: unknown): number {
  const window = optionInt(option, value, 1, 0)
  if (window > 10) throw new OptionsError(option, 'must be at most 10 steps (each one lengthens the life of every code)')
  return window
}
