/**
 * The token endpoint (RFC 6749 §4.1.3-4.1.4, §5) and the userinfo endpoint (Bearer, RFC 6750).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import {
  OAuthError, authenticateClient, bearerToken, invalidToken, param, presentedClient, requiredParam, verifyCodeVerifier
} from './protocol.js'
import type { ServerContext } from './types.js'
import { TOKEN_PATH, USERINFO_PATH } from './endpoints.js'
import { pictureFile } from './picture.js'

/** The userinfo answer: what a social provider's "me" endpoint gives, reduced to what a login needs. */
export interface LocalUserInfo {
  /** The provider's own user id (here the user name itself). */
  id: string
  name: string
  /** Link to the user's picture on this server. */
  picture: string
  email?: string | undefined
}

export function registerTokenRoutes (app: FastifyInstance, ctx: ServerContext): void {
  for (const path of [TOKEN_PATH, '/token']) app.post(path, async (request, reply) => await exchangeCode(ctx, request, reply))
  for (const path of [USERINFO_PATH, '/userinfo']) app.get(path, async (request) => await userInfo(ctx, request))
}

async function exchangeCode (ctx: ServerContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const body = request.body ?? {}
  if (typeof body !== 'object' || Array.isArray(body)) throw new OAuthError(400, 'invalid_request', 'the body must be a form or a JSON object')
  const grantType = requiredParam(body, 'grant_type')
  if (grantType !== 'authorization_code') throw new OAuthError(400, 'unsupported_grant_type', 'only grant_type=authorization_code is supported')
  authenticateClient(presentedClient(request.headers.authorization, body), ctx.config.client)

  const code = requiredParam(body, 'code')
  const found = ctx.codes.find(code)
  if (found.status !== 'ok') {
    throw new OAuthError(400, 'invalid_grant', found.status === 'expired' ? 'the authorization code has expired' : 'unknown authorization code')
  }
  const record = found.value
  if (record.spent) {
    // A replayed code means it leaked: revoke what it bought (RFC 6749 §4.1.2).
    if (record.accessToken !== undefined) ctx.tokens.delete(record.accessToken)
    ctx.config.logger.logf('[WARN] [%s] authorization code replayed; its access token is revoked', ctx.config.label)
    throw new OAuthError(400, 'invalid_grant', 'the authorization code was already used')
  }
  // Spent at the first presentation, successful or not: a stolen code gets one guess at the verifier.
  record.spent = true

  const redirectUri = param(body, 'redirect_uri')
  if (record.redirectUriGiven && redirectUri === undefined) throw new OAuthError(400, 'invalid_grant', 'redirect_uri is required: the authorization request had one')
  if (redirectUri !== undefined && redirectUri !== record.redirectUri) throw new OAuthError(400, 'invalid_grant', 'redirect_uri differs from the authorization request')
  verifyCodeVerifier(record.codeChallenge, param(body, 'code_verifier'))

  const accessToken = ctx.tokens.add({ userName: record.userName, scopes: record.scopes })
  record.accessToken = accessToken
  ctx.config.logger.logf('[INFO] [%s] access token issued for user %s', ctx.config.label, record.userName)
  const answer: Record<string, unknown> = {
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: ctx.tokens.ttlSeconds,
    scope: record.scopes.join(' ')
  }
  // Not OpenID Connect (no ID token), but the nonce is handed back so a client can see it travelled.
  if (record.nonce !== undefined) answer.nonce = record.nonce
  return reply.type('application/json; charset=utf-8').send(answer)
}

async function userInfo (ctx: ServerContext, request: FastifyRequest): Promise<LocalUserInfo> {
  const token = bearerToken(request.headers.authorization)
  const found = ctx.tokens.find(token)
  if (found.status !== 'ok') throw invalidToken(found.status === 'expired' ? 'the access token has expired' : 'unknown or revoked access token')
  const { userName } = found.value
  const info: LocalUserInfo = { id: userName, name: userName, picture: `${ctx.url}/picture/${pictureFile(userName)}` }
  const email = await emailOf(ctx, userName)
  if (email !== undefined) info.email = email
  return info
}

async function emailOf (ctx: ServerContext, userName: string): Promise<string | undefined> {
  const fn = ctx.config.emailFn
  if (fn === undefined) return undefined
  try {
    const email = await fn(userName)
    return typeof email === 'string' && email !== '' ? email : undefined
  } catch (err) {
    // A failing e-mail function costs the e-mail, not the login.
    ctx.config.logger.logf('[WARN] [%s] emailFn failed for user %s: %v', ctx.config.label, userName, err)
    return undefined
  }
}
