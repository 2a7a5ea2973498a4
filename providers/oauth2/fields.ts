/**
 * Typed access to untyped provider JSON, for mapping functions. A missing or wrongly typed required field
 * throws, which the engine reports as "userinfo malformed" (502).
 */
import type { MapUserFn } from './engine.js'

/** The nested object at `key`; throws when it is not an object. */
export function objectAt (data: Record<string, unknown>, key: string): Record<string, unknown> {
  const v = data[key]
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error(`field "${key}" is not an object`)
  return v as Record<string, unknown>
}

/** A non-empty string, or undefined. */
export function text (v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined
}

/** A user id: a non-empty string or an integer (GitHub, Battle.net); throws otherwise. */
export function idAt (data: Record<string, unknown>, key: string): string {
  const v = data[key]
  if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v)
  if (typeof v === 'string' && v !== '') return v
  throw new Error(`field "${key}" is not a user id`)
}

/** The first element of the array at `key`, an object (Twitch's and Kick's `{data: [user]}`); throws otherwise. */
export function firstItem (data: Record<string, unknown>, key: string): Record<string, unknown> {
  const v = data[key]
  if (!Array.isArray(v) || v.length === 0) throw new Error(`field "${key}" is not a non-empty list`)
  return objectAt({ item: v[0] }, 'item')
}

/** Standard OIDC claims (userinfo or ID token) to a user: `sub`, a display name, `picture`, a verified e-mail. */
export const mapStandardClaims: MapUserFn = (d) => ({
  id: idAt(d, 'sub'),
  name: text(d.name) ?? text(d.preferred_username) ?? text(d.nickname),
  picture: text(d.picture),
  email: d.email_verified === true ? text(d.email) : undefined
})
