/**
 * Public types of the auth core. Declaration merging into Fastify happens here and only here.
 */
import type { JsonWebKey, KeyObject } from 'node:crypto'
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify'
import type { BasicAuthChecker, MaybePromise, ReadonlyUser, User, UserData } from '../../../lib/user.js'

export type { BasicAuthChecker, BasicAuthResult, MaybePromise, ReadonlyUser } from '../../../lib/user.js'
import type { Logger } from '../../../lib/logging/logger.js'
import type { Audit } from '../../../lib/audit/audit.js'
import type { RegisteredClient } from './clients.js'
import type { JwsKey } from './jws.js'
import type { ResolvedRateLimit } from '../../../lib/throttle/options.js'
import type { ClientKey } from '../../../lib/throttle/client.js'
import type { CrossSiteGuard } from '../../../lib/login/cross-site.js'
import type { ResolvedCaptcha } from '../../../lib/captcha/verifier.js'
import type { ResolvedLastLoginMethod } from './last-login.js'
import type { LoginRequest } from '../../../lib/login/login-request.js'
import type { StepUpOptions } from '../../../lib/login/step-up.js'

/** JWT payload (claims layout version 2: registered claims, `aud` as an array, numeric dates). */
export interface Claims {
  aud: string[]
  exp: number
  nbf: number
  iat: number
  jti: string
  iss: string
  user?: UserData | undefined
  /** Token kind: session tokens cannot stand in for handshake or confirmation tokens and vice versa. */
  purpose: TokenPurpose
  /** Session-only cookie flag (`session=1`). */
  sess?: boolean | undefined
  /**
   * Original login time (seconds, with millisecond precision); required in session tokens. Refresh stops
   * `session.maxAge` after it, and `revokeUser` ends the sessions whose login came before the call.
   */
  auth_time?: number | undefined
  /**
   * The registered client whose refresh family the token is an access token of (RFC 9068 §2.2); set by the service
   * only. Such a token is renewed at the token endpoint only, never by a refresh of the token itself.
   */
  client_id?: string | undefined
  /**
   * When the session started on this service (seconds), when that is later than its sign-in (`auth_time`): a
   * session moved from go-pkgz/auth, a client's family opened from a browser's session. The state store's
   * revocation epoch is compared with it: no revocation of this session can predate it. Set by the service only.
   */
  started_at?: number | undefined
  /** Anything a claims updater adds travels in the token. */
  [extra: string]: unknown
}

export type TokenPurpose = 'session' | 'handshake' | 'confirm' | 'device'

/** What a caller supplies to create a session: everything else is filled by the token service. */
export interface ClaimsInput {
  user?: UserData | undefined
  aud?: string | string[] | undefined
  sess?: boolean | undefined
  [extra: string]: unknown
}


/** One HMAC key of an audience in a key list (see `SecretValue`). */
export interface SecretKeyEntry {
  /** Key id carried in the token header (`kid`): 1-64 letters, digits, `.`, `_` or `-`. */
  kid: string
  secret: string
}

/**
 * What the secret reader returns for an audience: one secret (its key id is `default`), or a key list whose first
 * key signs new tokens and every key verifies the tokens naming it (rotation: add a key in front, remove the old
 * one once its sessions may end).
 */
export type SecretValue = string | readonly SecretKeyEntry[]

/** Returns the signing secret(s) for an audience (`''` when the token has none). */
export type SecretFunc = (aud: string) => MaybePromise<SecretValue>
/** go-pkgz/auth's secret reader: `{ get(aud) }`, the object form of `SecretFunc`. */
export interface SecretReader { get(aud: string): MaybePromise<SecretValue> }
/**
 * The `secret` option: one string (32+ bytes) for every audience, or `(aud) => secret` (sync or async) returning a
 * secret or a key list `[{ kid, secret }, …]` (rotation), or go-pkgz's `{ get(aud) }`.
 */
export type SecretOption = string | SecretFunc | SecretReader

/** An asymmetric session-signing key (the `session.signingKeys` option). */
export interface SessionKey {
  /** Key id published in the JWKS and carried in the tokens: 1-64 letters, digits, `.`, `_` or `-`. */
  kid: string
  /** `EdDSA` (an Ed25519 key) or `ES256` (a P-256 key). */
  alg: 'EdDSA' | 'ES256'
  /** PEM text, a private JWK or a `KeyObject`. */
  privateKey: string | JsonWebKey | KeyObject
}

/** The validator as a function: false refuses the request (go-pkgz/auth's `ValidatorFunc`). */
export type ValidatorFunc = (token: string, claims: Claims) => MaybePromise<boolean>
/**
 * The `validator` option: `(token, claims) => boolean` (sync or async), called on every authenticated request;
 * false refuses it. go-pkgz/auth's object form `{ validate(token, claims) }` is taken too.
 */
export type Validator = ValidatorFunc | { validate(token: string, claims: Claims): MaybePromise<boolean> }

/** The claims updater as a function (go-pkgz/auth's `ClaimsUpdFunc`). */
export type ClaimsUpdFunc = (claims: Claims) => MaybePromise<Claims>
/**
 * The `claimsUpdater` option: `(claims) => claims` (sync or async), called when a token is created or refreshed;
 * returns the claims to sign. go-pkgz/auth's object form `{ update(claims) }` is taken too.
 */
export type ClaimsUpdater = ClaimsUpdFunc | { update(claims: Claims): MaybePromise<Claims> }

/** The user updater as a function (go-pkgz/auth's `UserUpdFunc`). */
export type UserUpdFunc = (user: User) => MaybePromise<User>
/**
 * A user updater (the `userUpdater` option, `fastify.auth.updateUser(updater)`): `(user) => user` (sync or
 * async), given a copy of the request's user. go-pkgz/auth's object form `{ update(user) }` is taken too.
 */
export type UserUpdater = UserUpdFunc | { update(user: User): MaybePromise<User> }


/**
 * Credential checker of a direct provider. `passwd` may be any prepared hash. Answers `true`/`false`, or
 * `{ ok, user }` naming the account the credentials belong to (see `CredCheckResult`).
 */
export type CredChecker = (user: string, passwd: string) => MaybePromise<boolean | CredCheckResult>

/**
 * A direct provider's checker's answer naming the account: `{ ok: true, user: 'alice' }` (its canonical name) or
 * `{ ok: true, user: { name, id?, email?, attrs?, role? } }`. Every spelling of a name your store accepts then
 * signs in one user with one id, so the second factor, the session list, lockout and `revokeUser` see one account.
 */
export interface CredCheckResult {
  /** True signs the user in; false is a wrong user or password. */
  ok: boolean
  /**
   * Who signed in, when `ok`: the account's name as your store keeps it, or its user. Absent: the typed name as
   * the lockout counts it (`rateLimit.failures.accountKey`, default `normaliseAccountName`).
   */
  user?: string | CheckedUser | undefined
}

/** The account a checker recognised (`CredCheckResult.user`). */
export interface CheckedUser {
  /** The account's name as your store keeps it (1-256 characters): the session's `name`. */
  name: string
  /**
   * The account's own key in your store (a database id, 1-256 characters): the session's id is
   * `<provider>_<sha1 of it>`, so a renamed account keeps its sessions and second factors. Default: derived from
   * `name` as the lockout counts it.
   */
  id?: string | undefined
  email?: string | undefined
  attrs?: Record<string, unknown> | undefined
  role?: string | undefined
}

/** Cache of refreshed claims keyed by the expired token, so concurrent requests refresh once. */
export interface RefreshCache {
  get(key: string): Claims | undefined
  set(key: string, claims: Claims): void
}

/**
 * A login method. Every provider (direct, verified, OAuth2, Apple, Telegram, passkey, self-implemented) is one
 * of these, mounted at `{authPrefix}/<name>/{login,callback,logout}` (GET and POST each). A provider without
 * `callback` answers the core's one "no callback" 404 there; without `logout`, the core's one logout answer.
 * Handlers may throw `HttpError` for 4xx JSON answers.
 */
export interface AuthProvider {
  readonly name: string
  /**
   * Runs after the login prelude of the mount: the request is not cross-site (or was answered), was counted
   * (`rateLimit.login`), and its common fields are read and checked into `login` (`from` only when it may be
   * followed).
   */
  login(request: FastifyRequest, reply: FastifyReply, login: LoginRequest): unknown
  callback?(request: FastifyRequest, reply: FastifyReply): unknown
  logout?(request: FastifyRequest, reply: FastifyReply): unknown
}

/** Avatar proxy as the core sees it (implemented by the avatar plugin). */
export interface AvatarSaver {
  /**
   * Stores the user's avatar from a picture link or from bytes; falls back to an identicon; returns the full
   * public link `{url}{avatar.prefix}/<id>.image`, or undefined when nothing could be stored.
   */
  save(userId: string, source: { url?: string | undefined; bytes?: Uint8Array | undefined }): Promise<string | undefined>
  /**
   * Lets pictures be fetched from exactly this origin (scheme, host and port) even at a non-public address: the
   * dev provider's own loopback server. Any other link keeps the fetch guard's rules.
   */
  trustOrigin?(origin: string): void
}

/** What a provider hands to the kit's `completeLogin` once it knows who the user is. */
export interface LoginResult {
  user: UserData
  /** `site`/`aud` of the login. */
  aud?: string | undefined
  /** Where to send the browser afterwards (checked against the allowed origins). */
  from?: string | undefined
  /** Session-only cookies. */
  sessionOnly?: boolean | undefined
  /** The provider's picture link or bytes, handed to the avatar proxy. */
  avatar?: { url?: string | undefined; bytes?: Uint8Array | undefined } | undefined
  /**
   * The second factor this login confirmed (`totp`, `recovery`, `passkey`): recorded for the new session, so
   * that `fastify.auth.recent()` sees it at once in that session (and in no other).
   */
  secondFactor?: string | undefined
  /**
   * When `secondFactor` was confirmed (ms since the epoch), when not just now: an identity provider's multi-factor
   * sign-in at its `auth_time`. `recent()` counts from it. Default now.
   */
  secondFactorAt?: number | undefined
  /**
   * The user asked to trust this browser (`trustDevice` with the second factor): with the core's `trustedDevices`
   * on and `secondFactor` given, a browser (no token header) gets the user's device cookie and later skips the
   * second factor. Ignored otherwise.
   */
  trustDevice?: boolean | undefined
  /**
   * The sign-in method the user chose, when it is not the provider whose route completes the login: a second
   * factor's route passes the first factor's provider (`local` after a password and a code). The last-login-method
   * cookie names it. Default: the completing route's provider.
   */
  method?: string | undefined
}

export type { Logger }
export type AuthHook = preHandlerAsyncHookHandler

/** Token service: the one place where tokens are signed, verified, set on replies and read from requests. */
export interface TokenService {
  /**
   * Creates a session token. Fills `iss`, `iat`, `nbf`, `exp`, `jti` and `auth_time`, rejects audiences
   * outside `audiences` (HttpError 403), runs the claims updater.
   */
  create(input: ClaimsInput): Promise<{ token: string; claims: Claims }>
  /**
   * Verifies a session token: signature with the key its `kid` names for its audience (algorithm pinned per key),
   * claims, revocation. Throws HttpError 401 on any failure.
   */
  parse(token: string, opts?: { allowExpired?: boolean | undefined }): Promise<Claims>
  /** Creates a session token and sets the JWT and XSRF cookies on the reply. */
  set(reply: FastifyReply, input: ClaimsInput): Promise<{ token: string; claims: Claims }>
  /**
   * Reads the session from the sources of `tokenSources` (by default header `X-JWT`, `Authorization: Bearer`, then
   * cookie `JWT`); checks XSRF for cookie sessions, the audience allow-list, revocation and the validator;
   * refreshes an expired cookie session (a header one under `tokenSources.headerRefresh`)
   * within `session.maxAge` (and `session.idleTimeout`). Returns null when the request carries no token; throws HttpError
   * 401 when it is bad. The claims and user are frozen: they may be shared with other requests of the session.
   */
  read(request: FastifyRequest, reply: FastifyReply): Promise<Session | null>
  /** Clears the JWT and XSRF cookies (logout). */
  reset(reply: FastifyReply): void
  /**
   * The first token pair of a registered client (`clients`) for a user the app signed in itself: a new refresh
   * family, listed among the user's sessions, ended by `revokeSession`, `revokeUser` and logout everywhere. The
   * answer is RFC 6749 §5.1's (`access_token`, `token_type`, `expires_in`, `refresh_token`). OptionsError for a
   * client that is not registered (`fastify.auth.tokens.issuePair`).
   */
  issuePair(request: FastifyRequest, client: string, input: ClaimsInput): Promise<TokenPairResponse>
}

/** A verified session: its token, claims and user (frozen, shared by the requests of the session). */
export interface Session {
  readonly token: string
  readonly claims: Claims
  readonly user: User | null
}

/** One session of a user's list (`GET {authPrefix}/sessions`, `fastify.auth.listSessions`). Times are ISO 8601. */
export interface ListedSession {
  /** The session's id (its `jti`): `DELETE {authPrefix}/sessions/<id>` or `revokeSession(id)` ends it. */
  id: string
  /** True for the session of the request that asked (always false from `listSessions`). */
  current: boolean
  /** The provider of the login; null for a session the app created itself. */
  provider: string | null
  createdAt: string
  /** Last request seen (written at most once a minute per instance). */
  lastSeenAt: string
  /** When the session ends at the latest (its absolute lifetime). */
  expiresAt: string
  /** The client's user agent reduced to a label: "Firefox on Linux". */
  device: string
  /** The client's address as throttling sees it, its hash, or null (`revocation.sessionList.ip`). */
  ip: string | null
}

/** Core options after defaults; what the core and the providers read. Groups as in `CoreOptions`. */
export interface ResolvedOptions {
  secret: SecretFunc
  /** Public base address without a trailing slash. */
  url: string
  origin: string
  issuer: string
  authPrefix: string
  audiences: string[]
  allowedRedirectHosts: string[]
  validator: ValidatorFunc | undefined
  claimsUpdater: ClaimsUpdFunc | undefined
  userUpdater: UserUpdFunc | undefined
  logger: Logger
  /** The name `fastify.auth` is decorated under. */
  decoratorName: string
  session: {
    tokenDurationMs: number
    /** Absolute session lifetime and cookie Max-Age (ms). */
    maxAgeMs: number
    /** 0 when off. */
    idleTimeoutMs: number
    /** Entries of the verified-session cache; 0 when off. */
    cacheSize: number
    /** Asymmetric session keys (first signs), or undefined for HMAC sessions. */
    signingKeys: JwsKey[] | undefined
    refreshCache: RefreshCache | undefined
  }
  cookies: { sessionName: string; xsrfName: string; sameSite: 'strict' | 'lax' | 'none'; secure: boolean; domain: string | undefined }
  /** `headerName` in lower case. */
  xsrf: { disable: boolean; ignoreMethods: Set<string>; headerName: string; navigation: boolean }
  /** Header name (lower case) and query parameter (null when that source is off), the bearer and extractor sources, header refresh. */
  tokenSources: {
    header: string | null
    query: string | null
    bearer: boolean
    extract: ((request: FastifyRequest) => string | undefined | null) | null
    headerRefresh: boolean
  }
  basicAuth: { adminPasswd: string | undefined; checker: BasicAuthChecker | undefined }
  /** null when revocation is off; `sessionList` null when the list is off. */
  revocation: { recheckMs: number; sessionList: { maxPerUser: number; ip: 'address' | 'hash' | false } | null } | null
  /** How recent a sign-in a change of factors needs (ms), and whether ending other sessions is one. */
  reauthentication: { withinMs: number; otherSessions: boolean }
  /** `trustedDevices` after defaults; null when off. */
  trustedDevices: { ttlMs: number; maxPerUser: number } | null
  /** `rateLimit` after defaults; false when off. */
  rateLimit: ResolvedRateLimit | false
  /** The client a request counts for (`rateLimit.clientKey`, default its address, IPv6 by /64). */
  clientKey: ClientKey
  /** The cross-site check of login, confirm and logout routes; false when off. */
  crossSite: CrossSiteGuard | false
  /** The captcha of the login routes; undefined when off. */
  captcha: ResolvedCaptcha | undefined
  /** The last-login-method cookie; undefined when off. */
  lastLoginMethod: ResolvedLastLoginMethod | undefined
  /** Publishes the audit events (`onEvent` and the `gatehouse:audit` channel); `audit.on` before building one. */
  audit: Audit
  /** The registered clients (`clients`) by id; empty when none. */
  clients: ReadonlyMap<string, RegisteredClient>
  /** The app's sign-in page as an absolute URL (`loginPage`). */
  loginPage: string
  /** Sessions of another service accepted during a move; `goPkgz` null when off. */
  migration: { goPkgz: ResolvedGoPkgz | null }
}

/** `migration.goPkgz` after checks: the Go service's secret per audience and its cookie names. */
export interface ResolvedGoPkgz {
  secret: (aud: string) => MaybePromise<string>
  cookieName: string
  xsrfCookieName: string
}

/**
 * `fastify.auth` (its type under any `decoratorName`): the app's API, thirteen members: the hooks
 * (`authenticate`, `optionalUser`, `admin`, `rbac`, `stepUp`, `xsrf`, `updateUser`), the user getters, the
 * sessions of a user (`sessions.list/revoke/revokeUser`), session tokens (`tokens`), the provider list and the
 * JWKS; and the seed's `add*Provider` methods (go-pkgz/auth v2's, see `ProviderMethods` in
 * `fastify-gatehouse/compat`). What providers need is in the provider kit (`providerKit(fastify)`), not here.
 */
export interface GatehouseAuth {
  /** preHandler: user required (401 otherwise). */
  readonly authenticate: AuthHook
  /**
   * preHandler: attaches the user when the request carries a valid session, never rejects (go-pkgz's `Trace`;
   * not the toolkit's `requestIdPlugin`, which sets the request id).
   */
  readonly optionalUser: AuthHook
  /** preHandler: admin user required (401 without a user, 403 for a non-admin). */
  readonly admin: AuthHook
  /** preHandler: user holding one of the roles required (401 / 403). */
  rbac(roles: readonly string[]): AuthHook
  /**
   * preHandler for routes that need a fresh second factor (step-up): a user (401) who confirmed a factor (a TOTP
   * code) within `within` (401 `GATEHOUSE_STEP_UP` otherwise).
   */
  stepUp(opts: StepUpOptions): AuthHook
  /** preHandler for session-less routes: XSRF header must equal the XSRF cookie (403 otherwise). */
  readonly xsrf: AuthHook
  /** preHandler: replaces `request.user` through the updater (default: the `userUpdater` option). */
  updateUser(updater?: UserUpdater): AuthHook

  /**
   * The user an auth hook (`authenticate`, `optionalUser`, `admin`, `rbac`, `updateUser`) attached to this
   * request, or null. It does not read the session: on a route without one of those hooks it is null even for a
   * signed-in user (add `optionalUser` where signing in is optional). Never throws.
   */
  getUser(request: FastifyRequest): ReadonlyUser | null
  /**
   * Like `getUser`, but without the `null`: the typed way to the user on a route behind `authenticate`, `admin`
   * or `rbac` (no `!` needed). Throws HttpError 401 when no hook attached a user (a route without one of them).
   */
  mustGetUser(request: FastifyRequest): ReadonlyUser

  /** The sessions of a user, for an admin page: list them, end one, end them all (needs `revocation`). */
  readonly sessions: {
    /**
     * The live sessions of a user: provider, times, device, address (`current` is false). End one with
     * `sessions.revoke(id)`. OptionsError when `revocation.sessionList` is off; 400 for an id that is not 1-256
     * characters; 503 when the store is down.
     */
    list(userId: string): Promise<ListedSession[]>
    /**
     * Ends one session (its `jti`, the XSRF cookie's value) on every instance sharing the state store, from the
     * next request on. HttpError 400 for an id that is not 1-256 characters; 503 when the store is down.
     */
    revoke(jti: string): Promise<void>
    /**
     * Ends every session of a user that started before this call (password change, account disabled, "sign out
     * everywhere"); a session started afterwards is not affected. Same errors as `revoke`.
     */
    revokeUser(userId: string): Promise<void>
  }
  /** Session tokens, for the app's own use (e.g. a session for a user the app signed in itself). */
  readonly tokens: TokenService
  /** Names of every mounted provider, in registration order (was `providerNames()`). */
  providers(): string[]
  /** The public keys of `session.signingKeys` as a JWKS (also served at `{authPrefix}/.well-known/jwks.json`); null for HMAC sessions. */
  readonly jwks: { keys: JsonWebKey[] } | null

  /** @deprecated Use `optionalUser` (the toolkit's `requestIdPlugin` is the other "trace"); goes in 1.0. */
  readonly trace: AuthHook
  /** @deprecated Use `stepUp`; goes in 1.0. */
  recent(opts: StepUpOptions): AuthHook
  /** @deprecated Use `sessions.revoke`; goes in 1.0. */
  revokeSession(jti: string): Promise<void>
  /** @deprecated Use `sessions.revokeUser`; goes in 1.0. */
  revokeUser(userId: string): Promise<void>
  /** @deprecated Use `sessions.list`; goes in 1.0. */
  listSessions(userId: string): Promise<ListedSession[]>
}

/** A token response of RFC 6749 §5.1: the access token (a session JWT) and the refresh token of its family. */
export interface TokenPairResponse {
  access_token: string
  token_type: 'Bearer'
  /** Seconds the access token lives (`session.tokenDuration`). */
  expires_in: number
  refresh_token: string
}
