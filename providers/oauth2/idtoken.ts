/**
 * OpenID Connect ID-token verification (OIDC Core §3.1.3.7): signature through the provider's JWKS (asymmetric
 * algorithms only, so a token MACed with the public client id can never pass), `iss`, `aud` = our client id,
 * `exp`/`iat`, and the `nonce` we sent at login, compared in constant time.
 */
import { errors as joseErrors, jwtVerify, type JWTPayload } from 'jose'
import { HttpError } from '../../lib/errors.js'
import { safeEqual } from '../../lib/compare.js'
import { upstreamError } from './upstream.js'
import { ProviderKeys } from './jwks.js'
import type { IdpMfaOptions } from './idp-mfa.js'

export interface OidcSettings {
  /**
   * Expected `iss`: one value or several (Google uses two spellings). A `{tenantid}` placeholder is replaced by
   * the token's `tid` claim (Microsoft's multi-tenant endpoint issues tokens per tenant).
   */
  issuer: string | string[]
  /** The provider's JWKS document. */
  jwksURL: string
  /**
   * Keep the last good key set when a refetch fails or answers an empty set, asking again after the cooldown
   * (go-pkgz/auth v2.1.7 does this for Apple, whose key endpoint has had bad minutes). Default false: the login
   * answers 502/504.
   */
  keepLastGoodKeys?: boolean | undefined
  /**
   * When the provider's own multi-factor sign-in (the ID token's `amr`/`acr`, recent `auth_time`) counts as the new
   * session's second factor `idp` (ASVS 5.0 6.8.4; idp-mfa.ts). Default: never.
   */
  mfa?: IdpMfaOptions | undefined
}

const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']
/** Clock skew tolerated between us and the provider. */
const CLOCK_TOLERANCE_S = 60

export type IdTokenVerifier = (idToken: string, nonce: string | undefined) => Promise<JWTPayload>

/** Builds a verifier with its own JWKS cache (see jwks.ts: capped fetch, refetch on an unknown `kid` rate-limited). */
export function idTokenVerifier (settings: OidcSettings, clientId: string, timeoutMs: number): IdTokenVerifier {
  const jwks = new ProviderKeys(settings.jwksURL, timeoutMs, settings.keepLastGoodKeys === true).getKey
  const issuers = Array.isArray(settings.issuer) ? settings.issuer : [settings.issuer]
  return async (idToken, nonce) => {
    let payload: JWTPayload
    try {
      ({ payload } = await jwtVerify(idToken, jwks, {
        audience: clientId,
        algorithms: ALGORITHMS,
        requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat'],
        clockTolerance: CLOCK_TOLERANCE_S
      }))
    } catch (err) {
      throw mapJoseError(err)
    }
    const tid = typeof payload.tid === 'string' ? payload.tid : ''
    const allowed = issuers.map((i) => i.replace('{tenantid}', tid))
    if (!allowed.includes(payload.iss ?? '')) throw new HttpError(401, 'id token rejected', `unexpected issuer ${String(payload.iss)}`)
    if (nonce !== undefined) {
      if (typeof payload.nonce !== 'string') throw new HttpError(401, 'id token rejected', 'the id token carries no nonce')
      if (!safeEqual(payload.nonce, nonce)) throw new HttpError(401, 'id token rejected', 'nonce mismatch')
    }
    return payload
  }
}

function mapJoseError (err: unknown): HttpError {
  // The key set could not be fetched or read (502/504), as the key resolver reported it.
  if (err instanceof HttpError) return err
  if (err instanceof joseErrors.JWKSNoMatchingKey) return new HttpError(401, 'id token rejected', 'no key of the provider matches the id token')
  if (err instanceof joseErrors.JWTExpired) return new HttpError(401, 'id token rejected', 'the id token has expired')
  // `alg: none`, an HMAC, or any algorithm outside ALGORITHMS.
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return new HttpError(401, 'id token rejected', 'the id token\'s algorithm is not allowed')
  if (err instanceof joseErrors.JWTClaimValidationFailed) return new HttpError(401, 'id token rejected', `claim ${err.claim} ${err.reason === 'check_failed' ? 'does not match' : 'is missing or invalid'}`)
  if (err instanceof joseErrors.JOSEError) return new HttpError(401, 'id token rejected', err.code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' ? 'bad signature' : err.code)
  // Anything else is unexpected: a provider answer we could not process.
  return upstreamError('id token unusable', 'the id token could not be processed', err)
}
