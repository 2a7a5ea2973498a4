/**
 * The authorization endpoint (RFC 6749 §4.1.1-4.1.2): checks the request, shows the login page (or signs
 * the configured user in at once) and redirects back to the client with a one-time code and the state.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { safeEqual } from '../lib/compare.js'
import { PAGE_HEADERS, pageCsp } from '../lib/html.js'
import {
  OAuthError, checkCodeChallenge, checkRedirectUri, param, parseScope, requiredParam, withQuery
} from './protocol.js'
import { DENY_FIELD, USER_FIELD, defaultLoginPage, type LoginPageContext } from './login-page.js'
import type { AuthorizationRequest, ServerContext } from './types.js'
import { AUTHORIZE_PATH } from './endpoints.js'
import { looksLikeSecret, randomSecret } from './secret-store.js'

/** Hidden form field naming the pending authorization request. */
const REQUEST_FIELD = 'request'
const MAX_USER_NAME = 64

export function registerAuthorizeRoutes (app: FastifyInstance, ctx: ServerContext): void {
  for (const path of [AUTHORIZE_PATH, '/authorize']) {
    app.get(path, async (request, reply) => await authorize(ctx, request, reply))
    app.post(path, async (request, reply) => await submitLogin(ctx, request, reply))
  }
}

async function authorize (ctx: ServerContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const query = request.query
  const { client, redirectUris } = ctx.config
  // Until the client and its redirect URI are known to be good, errors go to the browser, never to the
  // redirect URI (RFC 6749 §4.1.2.1): redirecting there would make this server an open redirector.
  const clientId = requiredParam(query, 'client_id')
  if (!safeEqual(clientId, client.cid)) throw new OAuthError(400, 'invalid_client', 'unknown client_id')
  const givenUri = param(query, 'redirect_uri')
  if (givenUri === undefined && redirectUris.length !== 1) {
    throw new OAuthError(400, 'invalid_request', 'parameter redirect_uri is required')
  }
  const redirectUri = givenUri ?? redirectUris[0]!
  const uriProblem = checkRedirectUri(redirectUri, redirectUris)
  if (uriProblem !== undefined) throw new OAuthError(400, 'invalid_request', uriProblem)

  let state: string | undefined
  let pending: AuthorizationRequest
  try {
    state = param(query, 'state')
    const responseType = requiredParam(query, 'response_type')
    if (responseType !== 'code') throw new OAuthError(400, 'unsupported_response_type', 'only response_type=code is supported')
    const codeChallenge = checkCodeChallenge(param(query, 'code_challenge'), param(query, 'code_challenge_method'))
    pending = {
      redirectUri,
      redirectUriGiven: givenUri !== undefined,
      scopes: parseScope(param(query, 'scope')),
      state,
      codeChallenge,
      nonce: param(query, 'nonce'),
      // Only a login form needs binding to the browser.
      browser: ctx.config.withLoginPage ? browserId(ctx, request, reply) : ''
    }
  } catch (err) {
    if (!(err instanceof OAuthError)) throw err
    return reply.redirect(withQuery(redirectUri, { error: err.code, error_description: err.description, state }), 302)
  }

  if (!ctx.config.withLoginPage) return await grant(ctx, reply, pending, ctx.config.autoLoginUser, 302)
  const loginId = ctx.logins.add(pending)
  ctx.config.logger.logf('[DEBUG] [%s] login page shown for client %s', ctx.config.label, clientId)
  return await showLoginPage(ctx, request, reply, loginId, pending)
}

async function submitLogin (ctx: ServerContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const body = request.body ?? {}
  const loginId = requiredParam(body, REQUEST_FIELD)
  const found = ctx.logins.find(loginId)
  if (found.status !== 'ok') {
    throw new OAuthError(400, 'invalid_request', found.status === 'expired'
      ? 'the login form has expired; start the sign-in again'
      : 'unknown login request; start the sign-in again')
  }
  const pending = found.value
  // The form works only in the browser it was shown in: a forged cross-site submit (login CSRF) carries
  // neither this cookie (SameSite=Lax) nor its value.
  const cookieValue = request.cookies[ctx.browserCookie]
  if (cookieValue === undefined || !safeEqual(cookieValue, pending.browser)) {
    throw new OAuthError(403, 'invalid_request', 'the login form was not shown to this browser')
  }
  if (param(body, DENY_FIELD) !== undefined) {
    ctx.logins.delete(loginId)
    return reply.redirect(withQuery(pending.redirectUri, { error: 'access_denied', error_description: 'the user refused', state: pending.state }), 303)
  }
  const userName = (param(body, USER_FIELD) ?? '').trim()
  const problem = userNameProblem(userName)
  if (problem !== undefined) return await showLoginPage(ctx, request, reply, loginId, pending, problem)
  ctx.logins.delete(loginId)
  return await grant(ctx, reply, pending, userName, 303)
}

/** Issues the one-time code and sends the browser back to the client. */
async function grant (ctx: ServerContext, reply: FastifyReply, pending: AuthorizationRequest, userName: string, status: 302 | 303): Promise<FastifyReply> {
  const code = ctx.codes.add({ ...pending, userName, spent: false, accessToken: undefined })
  ctx.config.logger.logf('[INFO] [%s] user %s signed in, code issued', ctx.config.label, userName)
  return reply.redirect(withQuery(pending.redirectUri, { code, state: pending.state }), status)
}

async function showLoginPage (
  ctx: ServerContext, request: FastifyRequest, reply: FastifyReply, loginId: string, pending: AuthorizationRequest, error?: string
): Promise<FastifyReply> {
  const page: LoginPageContext = {
    action: AUTHORIZE_PATH,
    hidden: { [REQUEST_FIELD]: loginId },
    userField: USER_FIELD,
    denyField: DENY_FIELD,
    clientId: ctx.config.client.cid,
    scopes: pending.scopes
  }
  if (error !== undefined) page.error = error
  // The page must not be framed (clickjacking) and runs no script.
  // Its form is answered with a redirect to the client's redirect URI, which the CSP's form-action must allow.
  reply.headers(PAGE_HEADERS).header('content-security-policy', pageCsp(pending.redirectUri))
  const status = error === undefined ? 200 : 400
  const handler = ctx.config.loginPageHandler
  const html = handler === undefined ? defaultLoginPage(page) : await handler(request, reply, page)
  // A handler that sent the reply returns it, as any async Fastify handler must (its send may still be
  // running its onSend hooks, so `reply.sent` alone cannot tell).
  if (html === reply || reply.sent) return reply
  if (typeof html !== 'string') {
    ctx.config.logger.logf('[ERROR] [%s] loginPageHandler neither sent a reply nor returned HTML', ctx.config.label)
    throw new Error('loginPageHandler neither sent a reply nor returned HTML')
  }
  return reply.code(status).send(html)
}

function userNameProblem (name: string): string | undefined {
  if (name === '') return 'enter a user name'
  if ([...name].length > MAX_USER_NAME) return `a user name has at most ${MAX_USER_NAME} characters`
  if (/\p{Cc}/u.test(name)) return 'a user name cannot contain control characters'
  return undefined
}

/** The browser's binding value: the cookie when it holds one, else a new one set on the reply. */
function browserId (ctx: ServerContext, request: FastifyRequest, reply: FastifyReply): string {
  const current = request.cookies[ctx.browserCookie]
  if (looksLikeSecret(current)) return current
  const fresh = randomSecret()
  reply.setCookie(ctx.browserCookie, fresh, { path: '/', httpOnly: true, sameSite: 'lax' })
  return fresh
}
