/**
 * What an OpenID provider says of its own sign-in (ASVS 5.0 6.8.4), read where the app says so: an ID token whose
 * `amr` (RFC 8176) names a second factor, or whose `acr` is one the app lists, and whose `auth_time` is recent, is
 * a multi-factor sign-in at the provider; the session it opens then counts as having confirmed the factor `idp`
 * at that time (what `recent()` checks). Without the `mfa` option nothing the provider says is taken: a sign-in
 * through it is one factor, whatever happened there.
 */
import type { JWTPayload } from 'jose'
import type { Duration } from '../../lib/duration.js'
import { OptionsError } from '../../lib/errors.js'
import { checkKeys, optionDuration, optionList } from '../../lib/options.js'

/** The `mfa` option of an OpenID provider: what counts as a multi-factor sign-in there. */
export interface IdpMfaOptions {
  /**
   * `amr` values (RFC 8176) any of which says the provider checked a second factor: `mfa`, `otp`, `hwk`, `swk`,
   * `sms`, … as the provider sends them.
   */
  amr?: string[] | undefined
  /** `acr` values that stand for a multi-factor sign-in at this provider (its own names: a URI, or a level like `2`). */
  acr?: string[] | undefined
  /**
   * How long ago the provider's sign-in (`auth_time`) may have been for its factor to count: ms or like `'5m'`, at
   * most 24 hours. A token without `auth_time` never counts. Default 5 minutes.
   */
  maxAge?: Duration | undefined
}

/** The `mfa` option, checked. */
export interface IdpMfaRule { amr: ReadonlySet<string>; acr: ReadonlySet<string>; maxAgeMs: number }

/** The factor name an IdP's multi-factor sign-in is recorded under (`recent({ factor: 'idp' })`). */
export const IDP_FACTOR = 'idp'
const MAX_AGE_MS = 24 * 3600_000
/** The clock skew tolerated between us and the provider (as for the ID token's own dates). */
const CLOCK_TOLERANCE_MS = 60_000

/** Reads the `mfa` option (undefined: off). OptionsError naming `<label>.mfa…`. */
export function resolveIdpMfa (label: string, value: unknown): IdpMfaRule | undefined {
  if (value === undefined) return undefined
  const name = `${label}.mfa`
  const o = checkKeys(value, ['amr', 'acr', 'maxAge'], name) as IdpMfaOptions
  const amr = optionList(`${name}.amr`, o.amr)
  const acr = optionList(`${name}.acr`, o.acr)
  if (amr.length === 0 && acr.length === 0) throw new OptionsError(name, 'names no amr or acr value: say which of the provider\'s sign-ins are multi-factor, or leave mfa out')
  const maxAgeMs = optionDuration(`${name}.maxAge`, o.maxAge, 5 * 60_000)
  if (maxAgeMs > MAX_AGE_MS) throw new OptionsError(`${name}.maxAge`, 'must be at most 24 hours')
  return { amr: new Set(amr), acr: new Set(acr), maxAgeMs }
}

/**
 * When the provider's multi-factor sign-in happened (ms since the epoch), if the verified ID token `claims` shows one
 * the rule takes, at most `maxAge` ago; undefined otherwise.
 */
export function idpFactorAt (rule: IdpMfaRule, claims: JWTPayload, now: number): number | undefined {
  const amr = Array.isArray(claims.amr) ? claims.amr : []
  const strong = amr.some((v) => typeof v === 'string' && rule.amr.has(v)) || (typeof claims.acr === 'string' && rule.acr.has(claims.acr))
  const at = typeof claims.auth_time === 'number' && Number.isFinite(claims.auth_time) ? claims.auth_time * 1000 : undefined
  // Older than maxAge: not counted. A little ahead (the provider's clock, within the ID token's tolerance) counts as
  // now; further ahead is no time a sign-in happened.
  if (!strong || at === undefined || now - at > rule.maxAgeMs || at - now > CLOCK_TOLERANCE_MS) return undefined
  return Math.min(at, now)
}
