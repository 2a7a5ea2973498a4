/**
 * The token and revocation endpoints' refusals, in RFC 6749 §5.2's shape: `error` is the protocol's code and
 * `error_description` says why, beside the package's `details` and `code` (`GATEHOUSE_OAUTH`).
 */
import type { FastifyReply } from 'fastify'
import { ErrorCodes, HttpError } from '../../lib/errors.js'

/** The codes of RFC 6749 §5.2 (and RFC 8628 §3.5 for the device grant) this server answers. */
export type OAuthErrorCode = 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unauthorized_client' | 'unsupported_grant_type' |
  'authorization_pending' | 'slow_down' | 'access_denied' | 'expired_token'

export class OAuthError extends HttpError {
  constructor (status: 400 | 401, readonly error: OAuthErrorCode, description: string) {
    super(status, error, description, ErrorCodes.OAUTH)
    this.name = 'OAuthError'
  }
}

export const invalidRequest = (description: string): OAuthError => new OAuthError(400, 'invalid_request', description)
export const invalidGrant = (description: string): OAuthError => new OAuthError(400, 'invalid_grant', description)
export const invalidClient = (description: string): OAuthError => new OAuthError(401, 'invalid_client', description)
export const unauthorizedClient = (description: string): OAuthError => new OAuthError(400, 'unauthorized_client', description)

/** Answers a refusal as RFC 6749 §5.2 asks (never stored by a cache). */
export function sendOAuthError (reply: FastifyReply, err: OAuthError): FastifyReply {
  return reply.code(err.statusCode).header('cache-control', 'no-store').send({
    error: err.error,
    error_description: err.details,
    details: err.details,
    code: err.code
  })
}
