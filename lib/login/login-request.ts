/**
 * Reading what a client sends to a login route. Every provider (direct, verified, OAuth2, Telegram, passkey)
 * reads its fields through these functions, so the rules are the same everywhere: one value per key, bounded
 * length, no control characters; `aud` or `site`, `from`, and the session-only flag `session` or `sess`.
 */
import type { FastifyRequest } from 'fastify'
import { HttpError } from '../errors.js'

// Control characters (line breaks included) have no place in a name, address or site id.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/

/** Longest `from` link accepted. */
export const MAX_FROM = 2048
/** Longest audience (site id) accepted. */
export const MAX_AUD = 256

/** The string under `key`, undefined when absent or empty (400 when `required`); 400 when malformed. */
export function queryText (query: Record<string, unknown>, key: string, max: number, required: boolean): string | undefined {
  const v = query[key]
  if (v === undefined || v === '') {
    if (required) throw new HttpError(400, 'bad request', `${key} is required`)
    return undefined
  }
  if (typeof v !== 'string') throw notOneString(key, v)
  if (v.length > max) throw new HttpError(400, 'bad request', `${key} is too long (at most ${max} characters)`)
  if (CONTROL.test(v) || v.trim() === '') throw new HttpError(400, 'bad request', `${key} contains control characters or only spaces`)
  return v
}

/** The 400 of a field that is not one string: a repeated query key or form field, or a JSON number, object, … */
export function notOneString (key: string, value: unknown): HttpError {
  return new HttpError(400, 'bad request', Array.isArray(value) ? `${key} must be given once` : `${key} must be a string`)
}

/**
 * A yes/no field: `1` or `true` is yes, `0` or `false` (or absence) is no; anything else is a 400, so a
 * misspelt flag is noticed rather than silently ignored.
 */
export function queryFlag (query: Record<string, unknown>, key: string): boolean {
  const v = query[key]
  if (v === undefined || v === '' || v === '0' || v === 'false') return false
  if (v === '1' || v === 'true') return true
  throw new HttpError(400, 'bad request', `${key} must be 1, 0, true or false`)
}

/**
 * `trustDevice` of a second-factor step ("trust this device"): a JSON boolean, or a flag as `queryFlag` reads it.
 */
export function trustDeviceFlag (fields: Record<string, unknown>): boolean {
  const v = fields.trustDevice
  return typeof v === 'boolean' ? v : queryFlag(fields, 'trustDevice')
}

/** The common fields of a login request. */
export interface LoginRequest {
  /** `aud` or `site`: the audience of the session. */
  aud: string | undefined
  /** Where the browser asked to go afterwards (not yet checked against the redirect policy). */
  from: string | undefined
  /** `session=1` or `sess=1`: session-only cookies (no Max-Age). */
  sessionOnly: boolean
}

/** The fields of a request: its query, with a form or JSON body's fields taking precedence on POST. */
export function requestFields (request: FastifyRequest): Record<string, unknown> {
  const query = objectOrEmpty(request.query)
  if (request.method !== 'POST') return query
  const body = request.body
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return query
  return { ...query, ...(body as Record<string, unknown>) }
}

/** Reads `aud`/`site`, `from` and `session`/`sess` from the fields of a login request. */
export function readLoginRequest (fields: Record<string, unknown>): LoginRequest {
  return {
    aud: queryText(fields, 'aud', MAX_AUD, false) ?? queryText(fields, 'site', MAX_AUD, false),
    from: queryText(fields, 'from', MAX_FROM, false),
    sessionOnly: queryFlag(fields, 'session') || queryFlag(fields, 'sess')
  }
}

/** The request's body as fields (JSON object or form); empty for anything else. */
export function bodyFields (request: FastifyRequest): Record<string, unknown> {
  return objectOrEmpty(request.body)
}

function objectOrEmpty (v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? v as Record<string, unknown> : {}
}
