/**
 * OpenID Connect ID-token verification (OIDC Core §3.1.3.7): signature through the provider's JWKS (asymmetric
 * algorithms only, so a token MACed with the public client id can never pass), `iss`, `aud` = our client id,
 * `exp`/`iat`, and the `nonce` we sent at login, compared in constant time.
 */
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose'
import { HttpError } from '../../lib/errors.js'
import { safeEqual } from '../../lib/compare.js'
import { upstreamError, upstreamTimeout } from './upstream.js'

export interface OidcSettings {
  /**
   * Expected `iss`: one value or several (Google uses two spellings). A `{tenantid}` placeholder is replaced by
   * the token's `tid` claim (Microsoft's multi-tenant endpoint issues tokens per tenant).
   */
  issuer: string | string[]
  /** The provider's JWKS document. */
  jwksURL: string
}

const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']
/** Clock skew tolerated between us and the provider. */
const CLOCK_TOLERANCE_S = 60

export type IdTokenVerifier = (idToken: string, nonce: string | undefined) => Promise<JWTPayload>

/** Builds a verifier with its own JWKS cache (keys fetched once, refetched on an unknown `kid`). */
export function idTokenVerifier (settings: OidcSettings, clientId: string, timeoutMs: number): IdTokenVerifier {
  const jwks = createRemoteJWKSet(new URL(settings.jwksURL), { timeoutDuration: timeoutMs })
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
  if (err instanceof joseErrors.JWKSTimeout) return upstreamTimeout('provider keys did not answer in time', 'JWKS fetch timed out')
  // Plain JOSEError: the JWKS answer was not 200 or not JSON.
  if (err instanceof joseErrors.JWKSInvalid || (err instanceof joseErrors.JOSEError && err.code === 'ERR_JOSE_GENERIC')) return upstreamError('provider keys unusable', 'the JWKS document is malformed')
  if (err instanceof joseErrors.JWTExpired) return new HttpError(401, 'id token rejected', 'the id token has expired')
  if (err instanceof joseErrors.JWTClaimValidationFailed) return new HttpError(401, 'id token rejected', `claim ${err.claim} ${err.reason === 'check_failed' ? 'does not match' : 'is missing or invalid'}`)
  if (err instanceof joseErrors.JOSEError) return new HttpError(401, 'id token rejected', err.code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' ? 'bad signature' : err.code)
  // Anything else is the JWKS fetch failing at the network level.
  return upstreamError('provider keys unreachable', (err as Error).message)
}
