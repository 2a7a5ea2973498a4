/**
 * The JSON a browser sends after `navigator.credentials.create()` / `.get()` (as @simplewebauthn/browser
 * serializes it), checked for shape and size before any of it is decoded: a malformed body is a 400 naming the
 * field, and only well-formed base64url strings of bounded length reach the CBOR and signature code.
 */
import { HttpError } from '../../lib/errors.js'

/** WebAuthn caps credential ids at 1023 bytes: 1364 base64url characters. */
const MAX_ID = 1364
/** clientDataJSON, authenticatorData, signature, attestationObject: far below the route's body limit. */
const MAX_FIELD = 16 * 1024
const MAX_LABEL = 64
const B64URL = /^[A-Za-z0-9_-]+$/
const TRANSPORTS = new Set(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb'])
// Control characters (line breaks included) have no place in a label.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/

interface Common { id: string; rawId: string; type: 'public-key'; clientExtensionResults: Record<string, unknown>; authenticatorAttachment?: 'platform' | 'cross-platform' | undefined }

export interface RegistrationJSON extends Common {
  response: { clientDataJSON: string; attestationObject: string; transports?: string[] | undefined }
}

export interface AuthenticationJSON extends Common {
  response: { clientDataJSON: string; authenticatorData: string; signature: string; userHandle?: string | undefined }
}

const bad = (details: string): HttpError => new HttpError(400, 'bad request', details)

/** A credential id as it appears in a URL or a response: base64url, bounded. */
export function isCredentialId (v: unknown): v is string {
  return typeof v === 'string' && v.length <= MAX_ID && B64URL.test(v)
}

function object (v: unknown, what: string): Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw bad(`${what} must be a JSON object`)
  return v as Record<string, unknown>
}

function b64 (o: Record<string, unknown>, key: string, max: number, required = true): string | undefined {
  const v = o[key]
  if (v === undefined || v === null) {
    if (required) throw bad(`${key} is required`)
    return undefined
  }
  if (typeof v !== 'string' || v === '' || v.length > max || !B64URL.test(v)) throw bad(`${key} must be base64url (at most ${max} characters)`)
  return v
}

function common (body: unknown): { o: Record<string, unknown>; r: Record<string, unknown>; base: Common } {
  const o = object(body, 'the passkey response')
  const id = b64(o, 'id', MAX_ID)!
  const rawId = b64(o, 'rawId', MAX_ID)!
  if (rawId !== id) throw bad('id and rawId differ')
  if (o.type !== 'public-key') throw bad('type must be "public-key"')
  const ext = o.clientExtensionResults === undefined ? {} : object(o.clientExtensionResults, 'clientExtensionResults')
  const base: Common = { id, rawId, type: 'public-key', clientExtensionResults: ext }
  if (o.authenticatorAttachment === 'platform' || o.authenticatorAttachment === 'cross-platform') base.authenticatorAttachment = o.authenticatorAttachment
  return { o, r: object(o.response, 'response'), base }
}

/** A registration response (`…/register`); transports outside the known set are dropped. */
export function readRegistration (body: unknown): RegistrationJSON {
  const { r, base } = common(body)
  const response: RegistrationJSON['response'] = {
    clientDataJSON: b64(r, 'clientDataJSON', MAX_FIELD)!,
    attestationObject: b64(r, 'attestationObject', MAX_FIELD)!
  }
  if (r.transports !== undefined) {
    if (!Array.isArray(r.transports) || r.transports.length > 8) throw bad('transports must be a short list')
    response.transports = r.transports.filter((t): t is string => typeof t === 'string' && TRANSPORTS.has(t))
  }
  return { ...base, response }
}

/** An authentication response (`…/login`). */
export function readAuthentication (body: unknown): AuthenticationJSON {
  const { r, base } = common(body)
  const response: AuthenticationJSON['response'] = {
    clientDataJSON: b64(r, 'clientDataJSON', MAX_FIELD)!,
    authenticatorData: b64(r, 'authenticatorData', MAX_FIELD)!,
    signature: b64(r, 'signature', MAX_FIELD)!
  }
  // Browsers send an empty user handle as null or leave it out.
  const userHandle = r.userHandle === '' ? undefined : b64(r, 'userHandle', 128, false)
  if (userHandle !== undefined) response.userHandle = userHandle
  return { ...base, response }
}

/** The optional name a user gives a passkey when adding it. */
export function readLabel (body: unknown): string | undefined {
  const v = (body as Record<string, unknown>).label
  if (v === undefined || v === null || v === '') return undefined
  if (typeof v !== 'string' || v.length > MAX_LABEL || CONTROL.test(v)) throw bad(`label must be text of at most ${MAX_LABEL} characters`)
  return v
}
