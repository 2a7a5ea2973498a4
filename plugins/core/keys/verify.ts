/**
 * Verifying a token: signature with the key its `kid` names in its audience's ring (algorithm pinned per key),
 * then the claims (plugins/core/base/claims.ts). Expiry is left to the caller, so that refresh can tell "expired but
 * refreshable" from "bad".
 */
import { decodeJws, type DecodedJws, type JwsKey } from '../base/jws.js'
import { KeyRing, type KeyRings } from './keys.js'
import { audOf, checkClaims, nowSeconds, unauthorized } from '../base/claims.js'
import type { AudienceRule } from '../base/audience.js'
import type { Claims, TokenPurpose } from '../base/types.js'

/** A verified token: its claims, the key that verified them, and the key that signs now (`current`). */
export interface Verified { claims: Claims; key: JwsKey; current: JwsKey }

/**
 * Synchronous when the audience's key ring is (a secret reader that answers synchronously): a first-seen token
 * then costs no promise. Throws (or rejects) HttpError 401.
 */
export type Verify = (token: string, purpose: TokenPurpose) => Verified | Promise<Verified>

/** The refusal of a token whose `kid` is in no ring (its key was removed, or never existed). */
export const UNKNOWN_KEY = 'unknown key id'

export function createVerifier (keys: KeyRings, issuer: string, audiences: AudienceRule): Verify {
  return function verify (token, purpose) {
    const d = decodeJws(token)
    if (d === null) throw unauthorized('malformed token')
    const aud = d.payload.aud
    // The unverified audience only chooses the ring; a session token has exactly one.
    if (!Array.isArray(aud) || aud.length > 1 || (purpose === 'session' && aud.length !== 1)) throw unauthorized('a session token carries exactly one audience')
    const audience = audOf(d.payload)
    // Refused before any key is looked up: an audience outside the list never reaches the secret reader.
    if (purpose === 'session') audiences.checkSession(audience)
    const r = keys.ring(audience, purpose)
    return r instanceof KeyRing ? withRing(r, d, purpose, issuer) : r.then((ring) => withRing(ring, d, purpose, issuer))
  }
}

/** The signature with the key the token's `kid` names in `ring`, then the claims. */
function withRing (ring: KeyRing, d: DecodedJws, purpose: TokenPurpose, issuer: string): Verified {
  const key = checkSignature(ring, d)
  return { claims: checkClaims(d.payload, purpose, issuer, nowSeconds()), key, current: ring.signer }
}

/**
 * The signature layer of a token, before any claim is read: the key its `kid` names in `ring` (a ring of one key
 * also takes a token without `kid`), that key's one algorithm, and its signature. The key, or HttpError 401.
 */
export function checkSignature (ring: KeyRing, d: DecodedJws): JwsKey {
  const key = ring.pick(d.header.kid)
  if (key === undefined) throw unauthorized(UNKNOWN_KEY)
  if (d.header.alg !== key.alg) throw unauthorized('algorithm not allowed')
  if (!key.verify(d.input, d.signature)) throw unauthorized('invalid token')
  return key
}
