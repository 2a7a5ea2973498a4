/**
 * The one parser of `Authorization: Basic` headers, shared by the auth core's basic auth and the toolkit's
 * basic-auth family.
 */

/** NFC form of a credential (RFC 7617 §2.1 with charset UTF-8). */
export function normalizeCredential (s: string): string {
  return s.normalize('NFC')
}

/** Base64 (standard alphabet, padding required) or null: `Buffer.from` alone accepts any garbage. */
export function decodeBase64Strict (s: unknown): Buffer | null {
  if (typeof s !== 'string' || s.length === 0 || s.length % 4 !== 0) return null
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(s)) return null
  return Buffer.from(s, 'base64')
}

/** Outcome of reading `Authorization: Basic …`. */
export type BasicCredentials =
  | { status: 'missing' }
  | { status: 'malformed'; reason: string }
  | { status: 'ok'; user: string; passwd: string }

const BASIC = /^basic +([^ ]*) *$/i

/**
 * Reads the Basic credentials of an Authorization header. Strict: standard base64 with padding, valid UTF-8,
 * a colon between user and password (the password may hold more colons and may be empty).
 */
export function parseBasicCredentials (header: string | undefined): BasicCredentials {
  if (header === undefined || !/^basic(?: |$)/i.test(header)) return { status: 'missing' }
  const m = BASIC.exec(header)
  const bytes = m === null ? null : decodeBase64Strict(m[1])
  if (bytes === null) return { status: 'malformed', reason: 'credentials are not valid base64' }
  let decoded: string
  try {
    decoded = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return { status: 'malformed', reason: 'credentials are not valid UTF-8' }
  }
  const colon = decoded.indexOf(':')
  if (colon === -1) return { status: 'malformed', reason: 'credentials have no colon between user and password' }
  return { status: 'ok', user: normalizeCredential(decoded.slice(0, colon)), passwd: normalizeCredential(decoded.slice(colon + 1)) }
}
