/**
 * Query and form field checks shared by the providers (direct, verified, OAuth2, Telegram): one value per key, bounded length, no
 * control characters; and the audience allow-list checked before anything is sent or stored.
 */
import { HttpError } from './errors.js'
import type { GatehouseAuth } from '../core/types.js'

// Control characters (line breaks included) have no place in a name, address or site id.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/

/** The string under `key`, undefined when absent or empty (400 when `required`); 400 when malformed. */
export function queryText (query: Record<string, unknown>, key: string, max: number, required: boolean): string | undefined {
  const v = query[key]
  if (v === undefined || v === '') {
    if (required) throw new HttpError(400, 'bad request', `${key} is required`)
    return undefined
  }
  if (typeof v !== 'string') throw new HttpError(400, 'bad request', `${key} must be given once`)
  if (v.length > max) throw new HttpError(400, 'bad request', `${key} is too long (at most ${max} characters)`)
  if (CONTROL.test(v) || v.trim() === '') throw new HttpError(400, 'bad request', `${key} contains control characters or only spaces`)
  return v
}

/** `site`/`aud` of a login request (`aud` first, as in the seed's verified routes). */
export function queryAudience (query: Record<string, unknown>): string | undefined {
  return queryText(query, 'aud', 256, false) ?? queryText(query, 'site', 256, false)
}

/** 403 when `audiences` is set and `aud` is not in it: the session would be refused at login anyway. */
export function checkAudience (auth: GatehouseAuth, aud: string | undefined): void {
  const allowed = auth.options.audiences
  if (allowed.length === 0) return
  if (aud === undefined) throw new HttpError(403, 'forbidden', 'an audience (site) is required')
  if (!allowed.includes(aud)) throw new HttpError(403, 'forbidden', `audience "${aud}" is not allowed`)
}

/** `1` → true; anything else false. */
export function queryFlag (query: Record<string, unknown>, key: string): boolean {
  return query[key] === '1'
}
