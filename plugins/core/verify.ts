/**
 * Verifying a token: signature with the key its `kid` names in its audience's ring (algorithm pinned per key),
 * then the claims (plugins/core/claims.ts). Expiry is left to the caller, so that refresh can tell "expired but
 * refreshable" from "bad".
 */
import { decodeJws, type JwsKey } from './jws.js'
import { KeyRing, type KeyRings } from './keys.js'
import { audOf, checkClaims, nowSeconds, unauthorized } from './claims.js'
import type { AudienceRule } from './audience.js'
import type { Claims, TokenPurpose } from './types.js'

/** What a verification found: the claims, the key that verified them, and the key that signs now (`current`). */
export type Verify = (token: string, purpose: TokenPurpose) => Promise<{ claims: Claims; key: JwsKey; current: JwsKey }>

/** The refusal of a token whose `kid` is in no ring (its key was removed, or never existed). */
export const UNKNOWN_KEY = 'unknown key id'

export function createVerifier (keys: KeyRings, issuer: string, audiences: AudienceRule): Verify {
  return async function verify (token, purpose) {
    const d = decodeJws(token)
    if (d === null) throw unauthorized('malformed token')
    const aud = d.payload.aud
    // The unverified audience only chooses the ring; a session token has exactly one.
    if (!Array.isArray(aud) || aud.length > 1 || (purpose === 'session' && aud.length !== 1)) throw unauthorized('a session token carries exactly one audience')
    const audience = audOf(d.payload)
    // Refused before any key is looked up: an audience outside the list never reaches the secret reader.
    if (purpose === 'session') audiences.checkSession(audience)
    const r = keys.ring(audience, purpose)
    const ring = r instanceof KeyRing ? r : await r
    const key = ring.pick(d.header.kid)
    if (key === undefined) throw unauthorized(UNKNOWN_KEY)
    if (d.header.alg !== key.alg) throw unauthorized('algorithm not allowed')
    if (!key.verify(d.input, d.signature)) throw unauthorized('invalid token')
    return { claims: checkClaims(d.payload, purpose, issuer, nowSeconds()), key, current: ring.signer }
  }
}
