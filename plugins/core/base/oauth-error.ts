/**
 * The token and revocation endpoints' refusals, in RFC 6749 §5.2's shape: `error` is the protocol's code and
 * `error_description` says why, beside the package's `details` and `code` (`GATEHOUSE_OAUTH`).
 */
import type { FastifyReply } from 'fastify'
import { ErrorCodes, HttpError, type RateLimitedError } from '../../../lib/errors.js'

/** The codes of RFC 6749 §5.2 (and RFC 8628 §3.5 for the device grant) this server answers. */
export type OAuthErrorCode = 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unauthorized_client' | 'unsupported_grant_type' |
  'authorization_pending' | 'slow_down' | 'access_denied' | 'expired_token' | 'too_many_requests'

export class OAuthError extends HttpError {
  constructor (status: 400 | 401 | 429, readonly error: OAuthErrorCode, description: string, code: string = ErrorCodes.OAUTH) {
    super(status, error, description, code)
    this.name = 'OAuthError'
  }
}

export const invalidRequest = (description: string): OAuthError => new OAuthError(400, 'invalid_request', description)
export const invalidGrant = (description: string): OAuthError => new OAuthError(400, 'invalid_grant', description)
export const invalidClient = (description: string): OAuthError => new OAuthError(401, 'invalid_client', description)
export const unauthorizedClient = (description: string): OAuthError => new OAuthError(400, 'unauthorized_client', description)

/**
 * The 429 of an address locked out of the token endpoints, in RFC 6749's shape. RFC 6749 has no code for it, so
 * `error` is the extension code `too_many_requests` (RFC 6749 §8.5); clients read the status and `Retry-After`
 * (RFC 6585); `code` stays `GATEHOUSE_RATE_LIMITED`, like every 429 of the package.
 */
export function tooManyRequests (err: RateLimitedError): OAuthError {
  return new OAuthError(429, 'too_many_requests', err.details ?? 'too many requests', ErrorCodes.RATE_LIMITED)
}

/** Answers a refusal as RFC 6749 §5.2 asks (never stored by a cache). */
export function sendOAuthError (reply: FastifyReply, err: OAuthError): FastifyReply {
  return reply.code(err.statusCode).header('cache-control', 'no-store').send({
    error: err.error,
    error_description: err.details,
    details: err.details,
    code: err.code
  })
}
