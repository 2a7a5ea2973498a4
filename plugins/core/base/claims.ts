/**
 * What a verified token's payload must look like before anything reads it: the purpose and issuer it was made
 * for, numeric dates (`iat` and `nbf` not in the future beyond a small leeway), a `jti`, and for sessions exactly
 * one audience and a numeric `auth_time` (the login time that bounds refresh).
 */
import { ErrorCodes, HttpError } from '../../../lib/errors.js'
import type { Claims, TokenPurpose } from './types.js'

/** Seconds of clock skew tolerated for `nbf`, `iat` and `auth_time`. */
export const LEEWAY_S = 5
/** Longest `jti` taken. */
export const MAX_JTI_LENGTH = 128

/**
 * The 401 of a refused token. Built without a stack trace: it is an answer to a client, not a fault to debug, and
 * capturing a stack would make every forged or garbage token cost several times what refusing it needs.
 */
export function unauthorized (details: string, code: string = ErrorCodes.TOKEN_INVALID): HttpError {
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    return new HttpError(401, 'unauthorized', details, code)
  } finally {
    Error.stackTraceLimit = limit
  }
}

export function nowSeconds (): number { return Math.floor(Date.now() / 1000) }

/** A numeric date (seconds since the epoch, not negative). */
export const isDate = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0

/** Checks a payload whose signature verified; returns it as claims. Throws HttpError 401. */
export function checkClaims (payload: Record<string, unknown>, purpose: TokenPurpose, issuer: string, now: number): Claims {
  if (payload.purpose !== purpose) throw unauthorized('wrong token purpose')
  if (payload.iss !== issuer) throw unauthorized('wrong issuer')
  const { aud, iat, nbf, exp, jti } = payload
  if (!isDate(iat) || !isDate(nbf) || !isDate(exp)) throw unauthorized('iat, nbf and exp must be numeric dates')
  if (typeof jti !== 'string' || jti === '' || jti.length > MAX_JTI_LENGTH) throw unauthorized('malformed claims')
  if (!Array.isArray(aud) || !aud.every((a) => typeof a === 'string')) throw unauthorized('malformed claims')
  if (purpose === 'session') {
    if (aud.length !== 1) throw unauthorized('a session token carries exactly one audience')
    if (!isDate(payload.auth_time) || payload.auth_time > now + LEEWAY_S) throw unauthorized('auth_time must be a numeric date, not in the future')
    if (payload.sess !== undefined && typeof payload.sess !== 'boolean') throw unauthorized('malformed claims')
    if (payload.client_id !== undefined && typeof payload.client_id !== 'string') throw unauthorized('malformed claims')
    if (payload.started_at !== undefined && (!isDate(payload.started_at) || payload.started_at > now + LEEWAY_S)) throw unauthorized('malformed claims')
  } else if (aud.length > 1) {
    throw unauthorized('a token carries at most one audience')
  }
  if (iat > now + LEEWAY_S) throw unauthorized('token issued in the future')
  if (nbf > now + LEEWAY_S) throw unauthorized('token not valid yet')
  return payload as Claims
}

/** The one audience of a token's claims (`''` for none). */
export function audOf (claims: { aud?: unknown }): string {
  const aud = claims.aud
  return Array.isArray(aud) && typeof aud[0] === 'string' ? aud[0] : ''
}

/** The one audience of a session being created: a string, a list of one, or nothing (`''`). 400 otherwise. */
export function sessionAud (aud: unknown): string {
  if (aud === undefined || aud === null) return ''
  if (typeof aud === 'string') return aud
  if (Array.isArray(aud) && aud.length <= 1 && aud.every((a) => typeof a === 'string')) return aud[0] ?? ''
  throw new HttpError(400, 'bad request', 'a session has exactly one audience (aud must be a string)')
}

/** Freezes a claims object and everything in it, so one cached object can serve every request. */
export function deepFreeze<T> (value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    // for…in rather than Object.values: no array per object on the first-seen token's path.
    for (const k in value) deepFreeze((value as Record<string, unknown>)[k])
  }
  return value
}
