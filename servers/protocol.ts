/**
 * OAuth2 protocol pieces of the local authorization server (RFC 6749, RFC 6750 bearer tokens, RFC 7636
 * PKCE), kept apart from the routes so each rule is written once.
 */
import type { FastifyReply } from 'fastify'
import { safeEqual } from '../lib/compare.js'
import { pkceChallenge } from '../lib/pkce.js'

/** Error codes of RFC 6749 §4.1.2.1 and §5.2 and RFC 6750 §3.1. */
export type OAuthErrorCode =
  | 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unauthorized_client' | 'unsupported_grant_type'
  | 'invalid_scope' | 'access_denied' | 'unsupported_response_type' | 'invalid_token' | 'not_found' | 'server_error'

/** A client-caused failure: status, RFC error code and a human description. */
export class OAuthError extends Error {
  constructor (
    readonly statusCode: number,
    readonly code: OAuthErrorCode,
    readonly description: string,
    /** Extra response headers, e.g. `WWW-Authenticate`. */
    readonly headers: Record<string, string> = {}
  ) {
    super(description)
    this.name = 'OAuthError'
  }
}

/**
 * Sends an error. The body carries both the package's shape (`error`, `details`) and RFC 6749 §5.2's
 * (`error`, `error_description`): the error code sits in `error` for both, and OAuth2 client libraries
 * read `error_description` while the package's users read `details`.
 */
export function sendOAuthError (reply: FastifyReply, err: OAuthError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v)
  return reply.code(err.statusCode).type('application/json; charset=utf-8')
    .send({ error: err.code, error_description: err.description, details: err.description })
}

/** Longest value accepted for any request parameter; longer ones are refused before any work. */
export const MAX_PARAM_LENGTH = 2048

/**
 * A single string parameter: undefined when absent; refused when repeated, not a string, or too long.
 * Query strings and forms may repeat a name (`?a=1&a=2`), which arrives as an array.
 */
export function param (source: unknown, name: string): string | undefined {
  const value = source !== null && typeof source === 'object' ? (source as Record<string, unknown>)[name] : undefined
  if (value === undefined || value === '') return undefined
  if (typeof value !== 'string') throw new OAuthError(400, 'invalid_request', `parameter ${name} must be given once, as a string`)
  if (value.length > MAX_PARAM_LENGTH) throw new OAuthError(400, 'invalid_request', `parameter ${name} is too long`)
  return value
}

export function requiredParam (source: unknown, name: string): string {
  const value = param(source, name)
  if (value === undefined) throw new OAuthError(400, 'invalid_request', `parameter ${name} is required`)
  return value
}

/** Scope list of RFC 6749 §3.3: space-separated tokens of printable ASCII without `"` and `\`. */
export function parseScope (scope: string | undefined): string[] {
  if (scope === undefined) return []
  const scopes = scope.split(' ').filter((s) => s !== '')
  if (!scopes.every((s) => /^[\x21\x23-\x5B\x5D-\x7E]+$/.test(s))) throw new OAuthError(400, 'invalid_scope', 'scope holds characters RFC 6749 §3.3 does not allow')
  return [...new Set(scopes)]
}

/**
 * A redirect URI the client may use: absolute http(s), no fragment (RFC 6749 §3.1.2), and one of the
 * registered URIs (exact string match, no prefix games, RFC 9700 §4.1.3). With none registered, none is.
 */
export function checkRedirectUri (uri: string, registered: readonly string[]): string | undefined {
  let parsed: URL
  try { parsed = new URL(uri) } catch { return 'redirect_uri is not an absolute URL' }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'redirect_uri must be http or https'
  if (parsed.hash !== '' || uri.includes('#')) return 'redirect_uri must not contain a fragment'
  if (parsed.username !== '' || parsed.password !== '') return 'redirect_uri must not contain credentials'
  if (!registered.includes(uri)) return 'redirect_uri is not registered for this client'
  return undefined
}

/** `uri` with the given parameters added to its query (existing ones kept, RFC 6749 §3.1.2). */
export function withQuery (uri: string, params: Record<string, string | undefined>): string {
  const url = new URL(uri)
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v)
  return url.toString()
}

/**
 * PKCE (RFC 7636 §4.2): the request's challenge, the base64url SHA-256 of a 43..128-character verifier. Required
 * (RFC 9700 §2.1.1, ASVS 5.0 10.4.6): a code intercepted on its way back to the client is useless without the
 * verifier. Only S256: `plain` would send the verifier itself through the browser.
 */
export function checkCodeChallenge (challenge: string | undefined, method: string | undefined): string {
  if (challenge === undefined) {
    throw new OAuthError(400, 'invalid_request', method === undefined ? 'code_challenge is required (PKCE with S256)' : 'code_challenge_method given without code_challenge')
  }
  if (method !== 'S256') throw new OAuthError(400, 'invalid_request', 'code_challenge_method must be S256')
  if (!/^[A-Za-z0-9_-]{43}$/.test(challenge)) throw new OAuthError(400, 'invalid_request', 'code_challenge must be 43 base64url characters (S256)')
  return challenge
}

/** Checks a token request's verifier against the challenge stored with the code. */
export function verifyCodeVerifier (challenge: string, verifier: string | undefined): void {
  if (verifier === undefined) throw new OAuthError(400, 'invalid_grant', 'code_verifier is required: the authorization request had a code_challenge')
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) throw new OAuthError(400, 'invalid_grant', 'code_verifier must be 43..128 characters of [A-Za-z0-9._~-]')
  const computed = pkceChallenge(verifier)
  if (!safeEqual(computed, challenge)) throw new OAuthError(400, 'invalid_grant', 'code_verifier does not match code_challenge')
}

/** Client credentials as a token request presented them. */
export interface PresentedClient { id: string; secret: string | undefined; basic: boolean }

/**
 * Reads client authentication: HTTP Basic (`client_secret_basic`, id and secret form-urlencoded inside,
 * RFC 6749 §2.3.1) or `client_id`/`client_secret` in the body (`client_secret_post`). Using both at once
 * is refused, as the RFC requires.
 */
export function presentedClient (authorization: string | undefined, body: unknown): PresentedClient {
  const bodyId = param(body, 'client_id')
  const bodySecret = param(body, 'client_secret')
  if (authorization === undefined || authorization === '') {
    if (bodyId === undefined) throw new OAuthError(401, 'invalid_client', 'client authentication is required (HTTP Basic or client_id and client_secret)')
    return { id: bodyId, secret: bodySecret, basic: false }
  }
  const basicChallenge = { 'WWW-Authenticate': 'Basic realm="oauth2", charset="UTF-8"' }
  const match = /^Basic ([A-Za-z0-9+/]+={0,2})$/i.exec(authorization.trim())
  if (match === null) throw new OAuthError(401, 'invalid_client', 'Authorization must be HTTP Basic client credentials', basicChallenge)
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon < 0) throw new OAuthError(401, 'invalid_client', 'HTTP Basic credentials must be client_id:client_secret', basicChallenge)
  let id: string, secret: string
  try {
    id = formDecode(decoded.slice(0, colon))
    secret = formDecode(decoded.slice(colon + 1))
  } catch {
    throw new OAuthError(401, 'invalid_client', 'HTTP Basic credentials are not form-urlencoded', basicChallenge)
  }
  if (bodySecret !== undefined) throw new OAuthError(400, 'invalid_request', 'use one client authentication method, not HTTP Basic and client_secret together')
  if (bodyId !== undefined && bodyId !== id) throw new OAuthError(401, 'invalid_client', 'client_id differs from the HTTP Basic client', basicChallenge)
  return { id, secret, basic: true }
}

function formDecode (text: string): string {
  return decodeURIComponent(text.replace(/\+/g, ' '))
}

/** Verifies presented credentials against the registered client, in constant time. */
export function authenticateClient (presented: PresentedClient, registered: { cid: string; csecret: string }): void {
  const challenge: Record<string, string> = presented.basic ? { 'WWW-Authenticate': 'Basic realm="oauth2", charset="UTF-8"' } : {}
  // Both comparisons always run, so timing does not tell an unknown client from a wrong secret.
  const idOk = safeEqual(presented.id, registered.cid)
  const secretOk = safeEqual(presented.secret ?? '', registered.csecret)
  if (!idOk) throw new OAuthError(401, 'invalid_client', 'unknown client', challenge)
  if (presented.secret === undefined) throw new OAuthError(401, 'invalid_client', 'client_secret is required', challenge)
  if (!secretOk) throw new OAuthError(401, 'invalid_client', 'wrong client secret', challenge)
}

/** The bearer token of a userinfo request (RFC 6750 §2.1: the Authorization header only). */
export function bearerToken (authorization: string | undefined): string {
  const realm = 'Bearer realm="oauth2"'
  if (authorization === undefined || authorization === '') {
    throw new OAuthError(401, 'invalid_request', 'an Authorization: Bearer token is required', { 'WWW-Authenticate': realm })
  }
  const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/i.exec(authorization.trim())
  if (match === null) {
    throw new OAuthError(401, 'invalid_request', 'Authorization must be a Bearer token', { 'WWW-Authenticate': `${realm}, error="invalid_request"` })
  }
  return match[1]!
}

/** The error for an unknown, expired or revoked bearer token. */
export function invalidToken (description: string): OAuthError {
  return new OAuthError(401, 'invalid_token', description, { 'WWW-Authenticate': 'Bearer realm="oauth2", error="invalid_token"' })
}
