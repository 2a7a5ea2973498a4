/**
 * The one OAuth2 engine every OAuth2 provider (built-in, custom, OIDC, Apple, dev) is configured on.
 *
 * Why our own thin layer over `fetch` and not @fastify/oauth2: that plugin registers its own start route and
 * cookies (shared names, no Path) outside our provider interface, turns a state mismatch into a plain Error
 * (a 500), has no OIDC nonce or ID-token verification, no `form_post` callback (Apple), and no per-call deadline
 * we control. The protocol part we need is small (one redirect, one form POST, one GET), so owning it keeps
 * every failure a clear JSON error and every security check in one readable place.
 *
 * Routes (mounted at `{authPrefix}/<name>/…` by the OAuth2-family plugins):
 * - `login?site=&from=&session=`: handshake cookie + redirect to the provider (state, PKCE S256, nonce).
 * - `callback`: state check, code exchange, ID-token verification (OIDC), userinfo, mapping, session.
 * - `logout`: the core's logout answer.
 */
import type { Duration } from '../../lib/duration.js'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { JWTPayload } from 'jose'
import type { AuthProvider, ProviderKit } from '../../plugins/core/kit.js'
import { userId, type UserData } from '../../lib/user.js'
import { requestLogger } from '../../lib/logging/logger.js'
import { HttpError } from '../../lib/errors.js'
import { pkceChallenge } from '../../lib/pkce.js'
import { callProvider, causeOf, DEFAULT_TIMEOUT_MS, excerpt, jsonObject, upstreamError, type UpstreamAnswer } from './upstream.js'
import { checkTokenAnswer, type TokenAnswer } from './token-answer.js'
import {
  clearHandshake, DEFAULT_HANDSHAKE_TTL_MS, handshakeCookie, randomToken, setHandshake, takeHandshake, type Handshake, type HandshakeCookie
} from './handshake.js'
import type { StateStoreOption } from '../../stores/state/resolve.js'
import type { StateStore } from '../../lib/state-store.js'
import { OptionsError } from '../../lib/errors.js'
import { optionDuration, optionLifetime, optionUrl, optionName } from '../../lib/options.js'
import { queryText, type LoginRequest } from '../../lib/login/login-request.js'
import type { OidcSettings } from './idtoken.js'
import { keepRules, TokenKeeper, type KeepTokensOptions } from './provider-tokens.js'
import { IDP_FACTOR, idpFactorAt, resolveIdpMfa, type IdpMfaRule } from './idp-mfa.js'

export type { OidcSettings }

/** What a mapping function returns. `id` is the provider's own user id; the engine hashes it into the session's user id. */
export interface MappedUser {
  id: string | number
  /** Display name; `noname_<8 hex>` when empty. */
  name?: string | undefined
  /** The provider's picture link, handed to the avatar proxy. */
  picture?: string | undefined
  email?: string | undefined
  attrs?: Record<string, unknown> | undefined
  role?: string | undefined
}

/** Everything a mapping function may look at besides the userinfo document. */
export interface MapContext {
  provider: string
  /** Verified ID-token claims (OIDC providers only). */
  idToken?: JWTPayload | undefined
  /** Fields of a `form_post` callback (Apple's `user`). */
  form?: Record<string, string> | undefined
  /** The token endpoint's answer (its access token included: do not log it). */
  tokenResponse: Record<string, unknown>
}

/**
 * Converts the userinfo document (parsed JSON object and raw bytes) into a user. For OIDC providers without a
 * userinfo URL, `data` is the verified ID-token claims. Throwing means "malformed userinfo" (502).
 */
export type MapUserFn = (data: Record<string, unknown>, raw: Buffer, ctx: MapContext) => MappedUser | Promise<MappedUser>

/** Full configuration of one OAuth2 provider on the engine. */
export interface OAuth2ProviderConfig {
  /** Route name: `{authPrefix}/<name>/…`; letters, digits, `_` and `-`. */
  name: string
  /** Client id. */
  cid: string
  /** Client secret, or a function making one per exchange (Apple's signed JWT). */
  csecret: string | (() => Promise<string>)
  /** Authorization endpoint. */
  authURL: string
  /** Token endpoint. */
  tokenURL: string
  /** Userinfo endpoint; optional for OIDC providers (the ID token's claims are used instead). */
  infoURL?: string | undefined
  /** Authorization scheme of the userinfo request. Default `Bearer` (Yandex documents `OAuth`). */
  infoAuthScheme?: string | undefined
  /** Minimal scopes, joined by a space. */
  scopes: string[]
  /** Send PKCE S256 (every provider that documents it, and custom ones by default). */
  pkce: boolean
  /** How the client authenticates at the token endpoint: HTTP Basic (RFC 6749 §2.3.1) or form fields. */
  tokenAuth: 'basic' | 'post'
  /** Extra authorization-request parameters. */
  authParams?: Record<string, string> | undefined
  /** Name of the client-id parameter at the authorization and token endpoints. Default `client_id` (TikTok: `client_key`). */
  clientIdParam?: string | undefined
  /** Body of the token request: form fields (RFC 6749) or a JSON object (Notion, Atlassian document JSON). Default `form`. */
  tokenFormat?: 'form' | 'json' | undefined
  /**
   * The token answer may leave out `token_type`, which the provider is documented to omit (Figma); a missing one
   * is then taken as Bearer. Default false: an answer without it is refused (502), as RFC 6749 §5.1 requires it.
   */
  tokenTypeOptional?: boolean | undefined
  /**
   * User-Agent of the token and userinfo requests, for a provider that asks each client for its own (Reddit);
   * `{cid}` becomes the client id. Default the package's own.
   */
  userAgent?: string | undefined
  /** Extra headers of the userinfo request; `{cid}` in a value becomes the client id (Twitch's `Client-Id`). */
  infoHeaders?: Record<string, string> | undefined
  /** Method of the userinfo request (Dropbox and GraphQL APIs take POST). Default `GET`. */
  infoMethod?: 'GET' | 'POST' | undefined
  /** JSON body of a POST userinfo request (a GraphQL query); none when absent. */
  infoBody?: string | undefined
  /**
   * Callback parameters sent on to the token request (VK ID's `device_id` and `state`): each read as a short
   * value, sent only when present.
   */
  tokenParams?: string[] | undefined
  /**
   * Where the userinfo request carries the access token: the `Authorization` header (default), or a POSTed form
   * `{client_id, access_token}` (VK ID's `user_info`).
   */
  infoTokenIn?: 'header' | 'form' | undefined
  /**
   * Where the user's document comes from: the userinfo endpoint (default) or the token endpoint's answer itself
   * (Notion puts the user in the token answer's `owner`). With `token`, `infoURL` is not called.
   */
  userFrom?: 'userinfo' | 'token' | undefined
  /** `form_post`: the callback arrives as a POSTed form (Apple). Default `query`. */
  responseMode?: 'query' | 'form_post' | undefined
  /** OIDC: nonce + ID-token verification. */
  oidc?: OidcSettings | undefined
  mapUser: MapUserFn
  /** Deadline of each call to the provider: ms or `'10s'`. Default 10 seconds. */
  timeout?: Duration | undefined
  /** Lifetime of the login handshake: ms or `'10m'`. Default 10 minutes. */
  handshakeTtl?: Duration | undefined
  /**
   * Where used `state` values are remembered: a StateStore or a `redis://` address (share one between
   * instances behind one URL). Default: the root option `stateStore`, else the app's in-memory store.
   */
  stateStore?: StateStoreOption | undefined
  /**
   * Called once, when the provider is built, with its callback URL (`redirect_uri`). A local OAuth2 server's
   * `providerOptions` set this so that the server accepts exactly this provider's callback.
   */
  onRedirectUri?: ((uri: string) => void) | undefined
  /**
   * Keep the provider's access and refresh tokens for the app, sealed (AES-256-GCM, `key`) in the state store:
   * `getProviderToken(request, name)` answers a fresh one, refreshing it when expired; the logout revokes them
   * (`revocationURL`) and drops them. Default off.
   */
  keepTokens?: KeepTokensOptions | undefined
}

/** One provider's engine: its configuration with defaults, and what its routes share. */
interface Engine {
  kit: ProviderKit
  cfg: OAuth2ProviderConfig
  name: string
  timeoutMs: number
  handshakeTtlMs: number
  formPost: boolean
  cookie: HandshakeCookie
  redirectURI: string
  /** Where used `state` values are remembered. */
  usedStates: StateStore
  verifyIdToken: ((idToken: string, nonce: string | undefined) => Promise<JWTPayload>) | undefined
  /** What of the ID token counts as a multi-factor sign-in at the provider (`oidc.mfa`); undefined when nothing does. */
  idpMfa: IdpMfaRule | undefined
  /** The provider's tokens kept for the app (`keepTokens`); undefined when off. */
  keeper: TokenKeeper | undefined
}

/**
 * Builds the provider (not mounted) on `usedStates`, where used `state` values are remembered. Validates the
 * configuration, naming the bad field. OIDC providers load jose (ID-token verification) here, on first use.
 */
export async function createOAuth2Provider (kit: ProviderKit, cfg: OAuth2ProviderConfig, usedStates: StateStore, onKeeper?: (keeper: TokenKeeper) => void): Promise<AuthProvider> {
  const { timeoutMs, handshakeTtlMs } = validateConfig(cfg, (text) => { kit.logger.logf('[WARN] %s', text) })
  const name = cfg.name
  const formPost = cfg.responseMode === 'form_post'
  const redirectURI = `${kit.url}${kit.authPrefix}/${name}/callback`
  cfg.onRedirectUri?.(redirectURI)
  const engine: Engine = {
    kit,
    cfg,
    name,
    timeoutMs,
    handshakeTtlMs,
    formPost,
    cookie: handshakeCookie(kit, name, formPost),
    redirectURI,
    usedStates,
    verifyIdToken: cfg.oidc === undefined ? undefined : (await import('./idtoken.js')).idTokenVerifier(cfg.oidc, cfg.cid, timeoutMs),
    idpMfa: resolveIdpMfa(`oauth2.${name}.oidc`, cfg.oidc?.mfa),
    keeper: undefined
  }
  const rules = keepRules(`oauth2.${name}`, cfg.keepTokens)
  if (rules !== undefined) {
    const keeper = new TokenKeeper(name, rules, usedStates, {
      token: async (form) => checkTokenAnswer(await tokenRequest(engine, cfg.tokenURL, form, 'token endpoint'), cfg).fields,
      revoke: async (url, form) => (await tokenRequest(engine, url, form, 'revocation endpoint')).status,
      timeoutMs
    })
    engine.keeper = keeper
    onKeeper?.(keeper)
    // Signing out ends the grant at the provider too (best effort: the user is signed out here whatever it answers).
    kit.onLogout(async (request, userId) => {
      await keeper.revoke(userId).catch((err: unknown) => {
        requestLogger(kit.logger, request).logf('[WARN] oauth2 %s: provider tokens not revoked at logout: %s', name, err instanceof Error ? err.message : String(err))
      })
    })
  }
  return {
    name,
    login: async (_request, reply, login) => await startLogin(engine, reply, login),
    callback: async (request, reply) => await callback(engine, request, reply)
  }
}

/** `/login`: the handshake cookie, then the redirect to the provider (the mount checked the request already). */
async function startLogin (e: Engine, reply: FastifyReply, login: LoginRequest): Promise<FastifyReply> {
  const { cfg } = e
  const hs: Handshake = { provider: e.name, state: randomToken() }
  if (cfg.pkce) hs.codeVerifier = randomToken()
  if (cfg.oidc !== undefined) hs.nonce = randomToken()
  // `from` is already one that may be followed, so that nothing else travels through the provider.
  if (login.from !== undefined) hs.from = login.from
  if (login.aud !== undefined) hs.site = login.aud
  if (login.sessionOnly) hs.sessionOnly = true
  await setHandshake(e.kit, reply, e.cookie, hs, e.handshakeTtlMs)

  const target = new URL(cfg.authURL)
  const sp = target.searchParams
  sp.set('response_type', 'code')
  sp.set(cfg.clientIdParam ?? 'client_id', cfg.cid)
  sp.set('redirect_uri', e.redirectURI)
  if (cfg.scopes.length > 0) sp.set('scope', cfg.scopes.join(' '))
  sp.set('state', hs.state)
  if (hs.codeVerifier !== undefined) {
    sp.set('code_challenge', pkceChallenge(hs.codeVerifier))
    sp.set('code_challenge_method', 'S256')
  }
  if (hs.nonce !== undefined) sp.set('nonce', hs.nonce)
  if (e.formPost) sp.set('response_mode', 'form_post')
  for (const [k, v] of Object.entries(cfg.authParams ?? {})) sp.set(k, v)
  return reply.code(302).header('location', target.href).send()
}

async function callback (e: Engine, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  try {
    return await finishLogin(e, request, reply)
  } catch (err) {
    // Details hold status codes and registered OAuth2 error codes, never codes, tokens or secrets. 5xx answers
    // (with their cause: a network error, the peer's host) are logged by the auth routes' error handler.
    if (err instanceof HttpError && err.statusCode < 500) {
      const cause = causeOf(err)
      requestLogger(e.kit.logger, request).logf('[WARN] oauth2 %s: login failed: %d %s (%s)%s', e.name, err.statusCode, err.message, err.details ?? '', cause === '' ? '' : `: ${cause}`)
    }
    throw err
  }
}

/** `/callback`: state, code exchange, ID token, userinfo, mapping, then the session. */
async function finishLogin (e: Engine, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  // Every callback, good or bad, ends the handshake in this browser.
  clearHandshake(e.kit, reply, e.cookie)
  const params = callbackParams(request, e.formPost)
  const error = queryText(params, 'error', 256, false)
  if (error !== undefined) {
    if (error === 'access_denied') throw new HttpError(403, 'access denied', 'the user declined the login at the provider')
    throw new HttpError(400, 'provider refused the login', excerpt(error))
  }
  const code = queryText(params, 'code', 4096, false)
  // The state is consumed only for a callback that can log in: issuer right and a code present.
  const hs = await takeHandshake(e.kit, request, e.cookie, e.name, queryText(params, 'state', 512, false), e.usedStates, () => {
    checkResponseIssuer(e.cfg, queryText(params, 'iss', 2048, false))
    if (code === undefined) throw new HttpError(400, 'missing code', 'the provider did not return an authorization code')
  })

  const { fields: tokenResponse, accessToken } = await exchangeCode(e, code!, hs.codeVerifier, forwardedParams(e.cfg, params))
  const keptFor = (user: UserData): Promise<void> => e.keeper?.keep(user.id, tokenResponse) ?? Promise.resolve()
  let idToken: JWTPayload | undefined
  if (e.verifyIdToken !== undefined) {
    if (typeof tokenResponse.id_token !== 'string') throw upstreamError('token endpoint answered garbage', 'no id_token from an OpenID Connect provider')
    idToken = await e.verifyIdToken(tokenResponse.id_token, hs.nonce)
  }
  const { data, raw } = e.cfg.userFrom === 'token'
    ? { data: tokenResponse, raw: Buffer.from(JSON.stringify(tokenResponse)) }
    : await userDocument(e, accessToken, idToken)
  const form = e.formPost ? stringFields(request.body) : undefined
  let mapped: MappedUser
  try {
    mapped = await e.cfg.mapUser(data, raw, { provider: e.name, idToken, form, tokenResponse })
  } catch (err) {
    throw upstreamError('userinfo malformed', excerpt((err as Error).message ?? err))
  }
  const user = toUserData(e.name, mapped)
  // Kept before the session is issued: a store that cannot keep them fails the login (503), not the later call.
  await keptFor(user)
  // The provider's own second factor, where the app takes its word (ASVS 5.0 6.8.4): confirmed when it signed the user in.
  const idpFactor = e.idpMfa === undefined || idToken === undefined ? undefined : idpFactorAt(e.idpMfa, idToken, Date.now())
  return await e.kit.completeLogin(request, reply, {
    user,
    aud: hs.site,
    from: hs.from,
    sessionOnly: hs.sessionOnly === true,
    avatar: typeof mapped.picture === 'string' && mapped.picture !== '' ? { url: mapped.picture } : undefined,
    ...(idpFactor === undefined ? {} : { secondFactor: IDP_FACTOR, secondFactorAt: idpFactor })
  })
}

/** The user's document: userinfo (about the ID token's subject, when there is one), else the ID token's claims. */
async function userDocument (e: Engine, accessToken: string, idToken: JWTPayload | undefined): Promise<{ data: Record<string, unknown>; raw: Buffer }> {
  if (e.cfg.infoURL === undefined) {
    const data = { ...(idToken ?? {}) }
    return { data, raw: Buffer.from(JSON.stringify(data)) }
  }
  const info = await fetchUserinfo(e, accessToken)
  // OIDC Core §5.3.2: userinfo must be about the ID token's subject.
  if (idToken !== undefined && info.data.sub !== undefined && info.data.sub !== idToken.sub) {
    throw upstreamError('userinfo malformed', 'userinfo subject differs from the id token subject')
  }
  return info
}

/**
 * RFC 9207: a server that names itself in the authorization response must be the one we sent the user to
 * (defeats mix-up attacks when several providers are configured). Issuer templates (per-tenant) are skipped.
 */
function checkResponseIssuer (cfg: OAuth2ProviderConfig, iss: string | undefined): void {
  if (iss === undefined || cfg.oidc === undefined) return
  const issuers = Array.isArray(cfg.oidc.issuer) ? cfg.oidc.issuer : [cfg.oidc.issuer]
  if (issuers.some((i) => i.includes('{'))) return
  if (!issuers.includes(iss)) throw new HttpError(400, 'issuer mismatch', 'the authorization response comes from another issuer')
}

/** The callback parameters a provider wants back at its token endpoint (`tokenParams`), those present. */
function forwardedParams (cfg: OAuth2ProviderConfig, params: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const name of cfg.tokenParams ?? []) {
    const value = queryText(params, name, 512, false)
    if (value !== undefined) out[name] = value
  }
  return out
}

async function exchangeCode (e: Engine, code: string, verifier: string | undefined, forwarded: Record<string, string>): Promise<TokenAnswer> {
  const form = new URLSearchParams({ ...forwarded, grant_type: 'authorization_code', code, redirect_uri: e.redirectURI })
  if (verifier !== undefined) form.set('code_verifier', verifier)
  return checkTokenAnswer(await tokenRequest(e, e.cfg.tokenURL, form, 'token endpoint'), e.cfg)
}

/** A form POST to one of the provider's token endpoints (token, revocation) with the client's authentication. */
async function tokenRequest (e: Engine, url: string, form: URLSearchParams, peer: string): Promise<UpstreamAnswer> {
  const { cfg } = e
  const secret = typeof cfg.csecret === 'function' ? await cfg.csecret() : cfg.csecret
  const json = cfg.tokenFormat === 'json'
  const headers: Record<string, string> = { 'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded', accept: 'application/json', ...userAgent(cfg) }
  if (cfg.tokenAuth === 'basic') {
    headers.authorization = `Basic ${Buffer.from(`${formEncode(cfg.cid)}:${formEncode(secret)}`).toString('base64')}`
  } else {
    form.set(cfg.clientIdParam ?? 'client_id', cfg.cid)
    form.set('client_secret', secret)
  }
  const body = json ? JSON.stringify(Object.fromEntries(form)) : form.toString()
  return await callProvider(url, { method: 'POST', headers, body }, peer, e.timeoutMs)
}

async function fetchUserinfo (e: Engine, accessToken: string): Promise<{ data: Record<string, unknown>; raw: Buffer }> {
  const { cfg } = e
  const inForm = cfg.infoTokenIn === 'form'
  const headers: Record<string, string> = { accept: 'application/json', ...userAgent(cfg) }
  if (!inForm) headers.authorization = `${cfg.infoAuthScheme ?? 'Bearer'} ${accessToken}`
  for (const [k, v] of Object.entries(cfg.infoHeaders ?? {})) headers[k.toLowerCase()] = v.replaceAll('{cid}', cfg.cid)
  let body = cfg.infoBody
  if (inForm) {
    headers['content-type'] = 'application/x-www-form-urlencoded'
    body = new URLSearchParams({ client_id: cfg.cid, access_token: accessToken }).toString()
  } else if (body !== undefined) {
    headers['content-type'] = 'application/json'
  }
  const ans = await callProvider(cfg.infoURL!, { method: inForm ? 'POST' : cfg.infoMethod ?? 'GET', headers, body }, 'userinfo endpoint', e.timeoutMs)
  if (ans.status < 200 || ans.status > 299) throw upstreamError('userinfo request failed', `status ${ans.status}`)
  const data = jsonObject(ans.body)
  if (data === undefined) throw upstreamError('userinfo malformed', 'not a JSON object')
  return { data, raw: ans.body }
}

/** The provider's own User-Agent header (`userAgent`), when it asks for one. */
function userAgent (cfg: OAuth2ProviderConfig): Record<string, string> {
  return cfg.userAgent === undefined ? {} : { 'user-agent': cfg.userAgent.replaceAll('{cid}', cfg.cid) }
}

/** The callback parameters: the query, or the POSTed form for `form_post` (and only there). */
function callbackParams (request: FastifyRequest, formPost: boolean): Record<string, unknown> {
  const src = formPost ? (request.method === 'POST' ? request.body : undefined) : request.query
  return src !== null && typeof src === 'object' ? src as Record<string, unknown> : {}
}

function stringFields (body: unknown): Record<string, string> {
  const out: Record<string, string> = {}
  if (body === null || typeof body !== 'object') return out
  for (const [k, v] of Object.entries(body)) if (typeof v === 'string') out[k] = v
  return out
}

/** RFC 6749 §2.3.1: client id and secret are form-encoded before Basic encoding. */
function formEncode (s: string): string {
  return encodeURIComponent(s).replace(/%20/g, '+')
}

/** The session's user: hashed id (`<provider>_<sha1 hex>`), a name that is never empty, optional extras of the right type. */
export function toUserData (provider: string, mapped: MappedUser): UserData {
  const raw = mapped?.id
  const rawId = typeof raw === 'number' && Number.isFinite(raw) ? String(raw) : raw
  if (typeof rawId !== 'string' || rawId === '') throw upstreamError('userinfo malformed', 'no user id')
  const id = userId(provider, rawId)
  const name = typeof mapped.name === 'string' && mapped.name.trim() !== ''
    ? mapped.name.trim().slice(0, 256)
    : `noname_${id.slice(provider.length + 1, provider.length + 9)}`
  const user: UserData = { id, name }
  if (typeof mapped.email === 'string' && mapped.email !== '') user.email = mapped.email
  if (mapped.attrs !== null && typeof mapped.attrs === 'object') user.attrs = { ...mapped.attrs }
  if (typeof mapped.role === 'string' && mapped.role !== '') user.role = mapped.role
  return user
}

/** Checks the configuration (OptionsError naming the field); answers its durations in ms, defaults applied. */
function validateConfig (cfg: OAuth2ProviderConfig, warn: (text: string) => void): { timeoutMs: number; handshakeTtlMs: number } {
  const label = `oauth2.${typeof cfg?.name === 'string' && cfg.name !== '' ? cfg.name : '(unnamed)'}`
  const bad = (field: string, why: string): never => { throw new OptionsError(`${label}.${field}`, why) }
  optionName(`${label}.name`, cfg.name)
  if (typeof cfg.cid !== 'string' || cfg.cid === '') bad('cid', 'is required (the client id)')
  if (typeof cfg.csecret !== 'function' && (typeof cfg.csecret !== 'string' || cfg.csecret === '')) bad('csecret', 'is required (the client secret)')
  optionUrl(`${label}.authURL`, cfg.authURL)
  optionUrl(`${label}.tokenURL`, cfg.tokenURL)
  if (cfg.infoURL !== undefined) optionUrl(`${label}.infoURL`, cfg.infoURL)
  if (cfg.infoURL === undefined && cfg.oidc === undefined && cfg.userFrom !== 'token') bad('infoURL', 'is required unless the provider is OpenID Connect')
  if (cfg.oidc !== undefined) {
    optionUrl(`${label}.jwksURL`, cfg.oidc.jwksURL)
    const issuers = Array.isArray(cfg.oidc.issuer) ? cfg.oidc.issuer : [cfg.oidc.issuer]
    if (issuers.length === 0 || !issuers.every((i) => typeof i === 'string' && i !== '')) bad('issuer', 'must be a non-empty string')
  }
  if (!Array.isArray(cfg.scopes) || !cfg.scopes.every((s) => typeof s === 'string')) bad('scopes', 'must be a list of strings')
  if (typeof cfg.mapUser !== 'function') bad('mapUser', 'must be a function')
  if (cfg.infoAuthScheme !== undefined && (typeof cfg.infoAuthScheme !== 'string' || !/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,40}$/.test(cfg.infoAuthScheme))) {
    bad('infoAuthScheme', 'must be an HTTP authorization scheme name, e.g. "Bearer"')
  }
  if (cfg.onRedirectUri !== undefined && typeof cfg.onRedirectUri !== 'function') bad('onRedirectUri', 'must be a function (uri)')
  // A header value: printable ASCII only, so that nothing can be smuggled into the provider calls.
  if (cfg.userAgent !== undefined && (typeof cfg.userAgent !== 'string' || !/^[\x20-\x7e]{1,256}$/.test(cfg.userAgent))) {
    bad('userAgent', 'must be 1 to 256 printable ASCII characters')
  }
  return {
    timeoutMs: optionDuration(`${label}.timeout`, cfg.timeout, DEFAULT_TIMEOUT_MS),
    handshakeTtlMs: optionLifetime(`${label}.handshakeTtl`, cfg.handshakeTtl, DEFAULT_HANDSHAKE_TTL_MS, warn)
  }
}
