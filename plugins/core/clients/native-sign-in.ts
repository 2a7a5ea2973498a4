/**
 * Native app sign-in (RFC 8252): `GET {authPrefix}/authorize` opened in the system browser, and the
 * `authorization_code` grant at the token endpoint. A signed-in browser is sent back to the client's registered
 * redirect URI with a one-time code (60 s, bound to the client, the redirect URI and the PKCE S256 challenge); a
 * browser without a session goes to the app's sign-in page first (`loginPage`, with `from` back here), so that
 * every login method works. A sign-in that did not start here (opened by the app) asks the user first, whether the
 * browser was signed in or came back from the sign-in page (see `startedHere`).
 *
 * An unknown client or a redirect URI it did not register is answered here (400 JSON) and never redirected to:
 * no open redirect. The code is kept hashed; a refused exchange consumes nothing, and a code presented again after
 * its exchange ends the family it bought (RFC 6749 §4.1.2).
 */
import { randomBytes } from 'node:crypto'
import { safeEqual } from '../../../lib/compare.js'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError } from '../../../lib/errors.js'
import { pkceChallenge } from '../../../lib/pkce.js'
import type { StateStore } from '../../../lib/state-store.js'
import { allowsRedirect, type RegisteredClient } from '../base/clients.js'
import { hashOf, inputOf, type RefreshFamilies, type TokenResponse } from './refresh-families.js'
import { invalidGrant } from '../base/oauth-error.js'
import { escapeHtml, sendPage } from '../../../lib/html.js'
import type { CrossSiteGuard } from '../../../lib/login/cross-site.js'
import { clientPage, pageAnswer } from './client-pages.js'
import { noteGrant } from '../base/grant-spans.js'
import { clearReplyCookie, requestCookie, setReplyCookie } from '../base/cookie-jar.js'
import type { FieldReader, Grant } from './token-endpoint.js'
import type { Claims } from '../base/types.js'

const CODE = 'ac:'
const CODE_USED = 'ac-used:'
const CODE_TTL_MS = 60_000
/** How long the sign-in page may take: the "started here" cookie lives that long. */
const START_TTL_MS = 10 * 60_000
/** RFC 7636 §4.1: 43-128 characters of the unreserved set (the challenge of S256 is always 43). */
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/
const CHALLENGE = /^[A-Za-z0-9\-_]{43}$/
const MAX_PARAM = 2048

interface CodeRecord { c: string; r: string; ch: string; claims: Claims }

export interface NativeSignInDeps {
  store: StateStore
  clients: ReadonlyMap<string, RegisteredClient>
  families: RefreshFamilies
  /** The browser's cookie session, verified (signature, expiry, revocation), or null. */
  session: (request: FastifyRequest) => Promise<Claims | null>
  /** Where a browser without a session signs in (absolute URL of the app's page). */
  loginPage: string
  /** The issuer, sent back as `iss` (RFC 9207); also where the confirmation page posts (`{issuer}/authorize`). */
  issuer: string
  /** The app's origin: a confirmation is posted from its own page only. */
  origin: string
  /** The package's cross-site rule (`crossSite`), or false when the host turned it off. */
  crossSite: CrossSiteGuard | false
  /** Signs and verifies the "started here" cookie's value (a short-lived token of its own purpose). */
  startToken: { sign: (payload: Record<string, unknown>, ttlMs: number) => Promise<string>; verify: (token: string) => Promise<Claims> }
  /** The "started here" cookie: its name and path (`__Host-` and `/` when the session cookie is a `__Host-` one), Secure. */
  startCookie: { name: string; path: string; secure: boolean }
}

/** A valid authorization request: its client, redirect URI and PKCE challenge, or the error to send back there. */
interface AuthorizationRequest {
  client: RegisteredClient
  redirectUri: string
  state: string | undefined
  challenge: string
  error?: { error: string; error_description: string } | undefined
}

/** The parameters of an authorization request (the query of `GET`, the form of the confirmation's `POST`). */
function readAuthorizationRequest (d: NativeSignInDeps, params: Record<string, unknown>): AuthorizationRequest {
  const param = (name: string): string | undefined => {
    const v = params[name]
    if (v === undefined || v === '') return undefined
    if (typeof v !== 'string' || v.length > MAX_PARAM) throw new HttpError(400, 'bad request', `${name} is repeated or too long`, ErrorCodes.OAUTH)
    return v
  }
  // Client and redirect URI first: until both are known good, nothing is redirected anywhere.
  const client = d.clients.get(param('client_id') ?? '')
  if (client === undefined || client.kind === 'device') throw new HttpError(400, 'bad request', 'unknown client_id, or a client that does not sign in with a redirect', ErrorCodes.OAUTH)
  const redirectUri = param('redirect_uri')
  if (redirectUri === undefined || !allowsRedirect(client, redirectUri)) throw new HttpError(400, 'bad request', 'redirect_uri is not registered for this client', ErrorCodes.OAUTH)
  const challenge = param('code_challenge') ?? ''
  const a: AuthorizationRequest = { client, redirectUri, state: param('state'), challenge }
  if (param('response_type') !== 'code') a.error = { error: 'unsupported_response_type', error_description: 'response_type must be code' }
  else if (param('code_challenge_method') !== 'S256') a.error = { error: 'invalid_request', error_description: 'PKCE with code_challenge_method=S256 is required' }
  else if (!CHALLENGE.test(challenge)) a.error = { error: 'invalid_request', error_description: 'code_challenge must be an S256 challenge' }
  return a
}

/** Sends the browser back to the client's redirect URI with `fields`, `state` and `iss`. */
function sendBack (d: NativeSignInDeps, reply: FastifyReply, a: AuthorizationRequest, fields: Record<string, string>, status: 302 | 303 = 302): FastifyReply {
  return reply.redirect(withParams(a.redirectUri, { ...fields, ...(a.state === undefined ? {} : { state: a.state }), iss: d.issuer }), status)
}

/** A one-time code for the signed-in user, bound to the client, the redirect URI and the PKCE challenge. */
async function newCode (d: NativeSignInDeps, a: AuthorizationRequest, claims: Claims): Promise<string> {
  const code = randomBytes(32).toString('base64url')
  const record: CodeRecord = { c: a.client.id, r: a.redirectUri, ch: a.challenge, claims }
  await d.store.set(CODE + hashOf(code), JSON.stringify(record), CODE_TTL_MS)
  return code
}

/**
 * Whether this request opens the sign-in from no page at all: the app opened it in the system browser
 * (`Sec-Fetch-Site: none`; a client sending no fetch metadata counts so too), not a navigation from another site,
 * nor one from a page of this site. A page of this site is no proof: the sign-in page sends the browser on to
 * whatever `from` it was given, and any site can link to the sign-in page with a `from` of `/authorize` and a
 * client's id and a challenge of its own.
 */
function openedHere (d: NativeSignInDeps, request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site']
  if (site !== undefined && site !== 'none') return false
  return d.crossSite === false || !d.crossSite.isCrossSite(request)
}

/** What the "started here" cookie is bound to: this very request (client, redirect URI, challenge, state). */
const startOf = (a: AuthorizationRequest): string => hashOf(`${a.client.id}\n${a.redirectUri}\n${a.challenge}\n${a.state ?? ''}`)

/**
 * A browser without a session that opened the sign-in here goes through the sign-in page and comes back from this
 * site (or the provider's): the fact that it started here travels in a signed, HttpOnly cookie of this browser,
 * bound to the request, that no other site can give it (a `__Host-` cookie on https).
 */
async function rememberStart (d: NativeSignInDeps, reply: FastifyReply, a: AuthorizationRequest): Promise<void> {
  const token = await d.startToken.sign({ authorize: startOf(a) }, START_TTL_MS)
  const { name, path, secure } = d.startCookie
  setReplyCookie(reply, name, token, { path, secure, httpOnly: true, sameSite: 'lax', maxAge: Math.ceil(START_TTL_MS / 1000) })
}

/** Whether this browser started this very request here before its sign-in (the cookie is used up either way). */
async function startedEarlier (d: NativeSignInDeps, request: FastifyRequest, reply: FastifyReply, a: AuthorizationRequest): Promise<boolean> {
  const { name, path, secure } = d.startCookie
  const token = requestCookie(request, name)
  if (token === undefined || token === '') return false
  clearReplyCookie(reply, name, { path, secure, httpOnly: true, sameSite: 'lax' })
  let claims: Claims
  try { claims = await d.startToken.verify(token) } catch { return false }
  return typeof claims.authorize === 'string' && safeEqual(claims.authorize, startOf(a))
}

/**
 * Whether the sign-in was started here, so that a signed-in user is sent back with a code at once: opened by the
 * app in the system browser, or back from the sign-in page after such a start (the cookie above). Anything else
 * (a navigation from another site, or from a page of this one: the sign-in page's redirect to a `from` someone
 * else chose) asks the user first: a signed-in user must not be handed to whatever app answers that redirect URI
 * without a word (RFC 8252 §8.6: no silent approval when the client's identity cannot be assured).
 */
async function startedHere (d: NativeSignInDeps, request: FastifyRequest, reply: FastifyReply, a: AuthorizationRequest): Promise<boolean> {
  const earlier = await startedEarlier(d, request, reply, a)
  return earlier || openedHere(d, request)
}

/** `GET /authorize`: validates the request, then redirects to the client with a code (or to the sign-in page). */
export function authorizeHandler (d: NativeSignInDeps) {
  return async function authorize (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const query = (request.query ?? {}) as Record<string, unknown>
    const a = readAuthorizationRequest(d, query)
    noteGrant(request, { client: a.client.id, error: a.error?.error })
    if (a.error !== undefined) return sendBack(d, reply, a, a.error)
    const claims = await d.session(request)
    if (claims === null) {
      noteGrant(request, { result: 'sign_in' })
      if (openedHere(d, request)) await rememberStart(d, reply, a)
      return reply.redirect(withParams(d.loginPage, { from: request.url }), 302)
    }
    if (!await startedHere(d, request, reply, a)) {
      noteGrant(request, { result: 'confirmation' })
      return await sendConfirmation(d, reply, a, claims)
    }
    noteGrant(request, { result: 'code' })
    return sendBack(d, reply, a, { code: await newCode(d, a, claims) })
  }
}

/** The page that asks a signed-in user whether to sign the client in, when the request came from another site. */
async function sendConfirmation (d: NativeSignInDeps, reply: FastifyReply, a: AuthorizationRequest, claims: Claims): Promise<FastifyReply> {
  const fields = { response_type: 'code', client_id: a.client.id, redirect_uri: a.redirectUri, code_challenge: a.challenge, code_challenge_method: 'S256', xsrf: claims.jti, ...(a.state === undefined ? {} : { state: a.state }) }
  const hidden = Object.entries(fields).map(([k, v]) => `<input type="hidden" name="${k}" value="${escapeHtml(v)}">`).join('')
  const user = typeof claims.user?.name === 'string' && claims.user.name !== '' ? claims.user.name : 'you'
  const body = `<p id="ask">${escapeHtml(a.client.name)} asks to be signed in as ${escapeHtml(user)}.</p>
<p>This sign-in was opened from another site. Continue only if you started it in ${escapeHtml(a.client.name)} yourself.</p>
<form method="post" action="${escapeHtml(d.issuer)}/authorize">${hidden}<button name="action" value="approve" id="approve">Continue</button><button name="action" value="deny" id="deny">Cancel</button></form>`
  return await sendPage(reply, clientPage(`Sign in to ${a.client.name}?`, body), 200, a.redirectUri)
}

/** `POST /authorize`: the user's answer on the confirmation page (this site's own page, the session's XSRF value). */
export function authorizeConfirmHandler (d: NativeSignInDeps, formOf: (request: FastifyRequest) => FieldReader) {
  return async function confirm (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const { claims, approve } = await pageAnswer(d, request, formOf, 'a sign-in is confirmed')
    const a = readAuthorizationRequest(d, request.body as Record<string, unknown>)
    if (a.error !== undefined) return sendBack(d, reply, a, a.error, 303)
    if (!approve) return sendBack(d, reply, a, { error: 'access_denied', error_description: 'the user cancelled the sign-in' }, 303)
    return sendBack(d, reply, a, { code: await newCode(d, a, claims) }, 303)
  }
}

/** The `authorization_code` grant: the code, its redirect URI and the PKCE verifier, for a first pair. */
export function authorizationCodeGrant (d: NativeSignInDeps): Grant {
  return {
    kinds: new Set(['native', 'spa']),
    async exchange (request: FastifyRequest, client: RegisteredClient, field: FieldReader): Promise<TokenResponse> {
      const code = field('code')
      const redirectUri = field('redirect_uri')
      const verifier = field('code_verifier')
      const hash = hashOf(code)
      const raw = await d.store.get(CODE + hash)
      if (raw === undefined) return await replayed(d, request, client, hash)
      const record = JSON.parse(raw) as CodeRecord
      if (record.c !== client.id) throw invalidGrant('the code was issued to another client')
      if (record.r !== redirectUri) throw invalidGrant('redirect_uri differs from the authorization request')
      if (!VERIFIER.test(verifier) || !safeEqual(pkceChallenge(verifier), record.ch)) throw invalidGrant('the code_verifier does not match the code_challenge')
      if (await d.store.take(CODE + hash) === undefined) throw invalidGrant('the code was already used')
      const pair = await d.families.issue(request, client, inputOf(record.claims), record.claims.auth_time, 'authorization_code')
      await d.store.set(CODE_USED + hash, pair.family, CODE_TTL_MS * 10)
      return pair.response
    }
  }
}

/** A code that is not live: one already exchanged ends the family it bought; anything else is unknown. */
async function replayed (d: NativeSignInDeps, request: FastifyRequest, client: RegisteredClient, hash: string): Promise<never> {
  const family = await d.store.get(CODE_USED + hash)
  if (family !== undefined) await d.families.endFamily(request, client, family)
  throw invalidGrant(family === undefined ? 'unknown or expired code' : 'the code was already used: the tokens it bought are revoked')
}

/** `uri` with `fields` added to its query (a private-use scheme URI included). */
function withParams (uri: string, fields: Record<string, string>): string {
  const url = new URL(uri)
  for (const [k, v] of Object.entries(fields)) url.searchParams.set(k, v)
  return url.href
}
