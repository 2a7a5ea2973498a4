/**
 * Options of the auth core: a few top-level keys with one meaning each, and groups (`session`, `cookies`, `xsrf`,
 * `tokenSources`, `basicAuth`, `revocation`, `reauthentication`, `rateLimit`, `crossSite`), each one object. The key lists below are
 * written as records of the option types (`keyList`), so the compiler refuses a list that misses a key; validation
 * and the root plugin's split both use them.
 */
import type {
  BasicAuthChecker, ClaimsUpdater, RefreshCache, ResolvedOptions, SecretFunc, SecretOption, SessionKey, UserUpdater, Validator
} from './base/types.js'
import type { FastifyRequest } from 'fastify'
import { sessionKeysOption } from './keys/keys.js'
import { resolveClients, type ClientOptions, type RegisteredClient } from './base/clients.js'
import { noopLogger, type Logger } from '../../lib/logging/logger.js'
import { Audit } from '../../lib/audit/audit.js'
import type { AuditListener } from '../../lib/audit/events.js'
import type { Duration } from '../../lib/duration.js'
import { OptionsError } from '../../lib/errors.js'
import { warnDeprecated } from '../../lib/deprecation.js'
import { MAKE_SECRET, MIN_SECRET_BYTES } from './base/startup-check.js'
import {
  adaptFunction, checkKeys, keyList, optionBoolean, optionDuration, optionFunction, optionGroup, optionInt, optionLifetime, optionList,
  optionPrefix, optionString, optionUrl
} from '../../lib/options.js'
import type { StateStoreOption } from '../../stores/state/resolve.js'
import { resolveRateLimit, type RateLimitOptions } from '../../lib/throttle/options.js'
import { defaultClientKey, type ClientKey } from '../../lib/throttle/client.js'
import { crossSiteGuard, type CrossSiteOptions } from '../../lib/login/cross-site.js'
import { resolveCaptcha, type CaptchaOption } from '../../lib/captcha/verifier.js'
import { resolveLastLoginMethod, type LastLoginMethodOptions } from './base/last-login.js'
import { resolveMigration, type MigrationOptions } from './sessions/migration.js'

/** How long sessions live and how they are kept (`session` group). */
export interface SessionOptions {
  /** Lifetime of one token: ms or `'15m'`. A cookie session refreshes its token once it expires. Default 15 minutes. */
  tokenDuration?: Duration | undefined
  /** Absolute lifetime of a session (no refresh past it) and `Max-Age` of its cookies: ms or `'31d'`. Default 31 days. */
  maxAge?: Duration | undefined
  /**
   * A cookie session whose token was issued (at login or its last refresh) longer ago than this is not refreshed.
   * Must exceed `tokenDuration`: inactivity longer than `idleTimeout` always ends the session, inactivity
   * shorter than `idleTimeout - tokenDuration` never does. Default off.
   */
  idleTimeout?: Duration | undefined
  /** Entries of the verified-session cache (verified tokens by their exact string); 0 turns it off. Default 10 000. */
  cacheSize?: number | undefined
  /**
   * Sign session tokens with EdDSA (Ed25519) or ES256 keys instead of the HMAC secret: `[{ kid, alg, privateKey }]`,
   * the first signs, every key verifies. Their public keys are served as a JWKS at
   * `{authPrefix}/.well-known/jwks.json`, so other services can verify sessions without a secret. HMAC-signed
   * session tokens are then refused. Default off (HS256).
   */
  signingKeys?: SessionKey[] | undefined
  /** Refreshed claims by expired token (`{ get, set }`), so concurrent requests refresh once. Default in-memory, bounded. */
  refreshCache?: RefreshCache | undefined
}

/** The session and XSRF cookies (`cookies` group). */
export interface CookieOptions {
  /** Cookie carrying the session token. Default `__Host-JWT` on https (no `domain`), else `JWT`. */
  sessionName?: string | undefined
  /** Cookie carrying the XSRF value (readable by scripts). Default `__Host-XSRF-TOKEN` on https (no `domain`), else `XSRF-TOKEN`. */
  xsrfName?: string | undefined
  /** SameSite attribute of the session cookies (any letter case). Default `Lax`. */
  sameSite?: 'Strict' | 'Lax' | 'None' | 'strict' | 'lax' | 'none' | undefined
  /** Secure attribute of the session cookies. Default: true when `url` is https. */
  secure?: boolean | undefined
  /**
   * Domain attribute of the session cookies, to share a session with subdomains. Default none (host-only cookies).
   * With a domain the default names drop the `__Host-` prefix (`__Secure-` on https); a `__Host-` name is refused.
   */
  domain?: string | undefined
}

/** The XSRF check of cookie sessions (`xsrf` group). */
export interface XsrfOptions {
  /** Turns every XSRF check off (testing and debugging only). Default false. */
  disable?: boolean | undefined
  /** Methods exempt from the check. Adding anything but safe methods weakens protection. Default none. */
  ignoreMethods?: string[] | undefined
  /** Request header carrying the XSRF value. Default `X-XSRF-TOKEN`. */
  headerName?: string | undefined
  /**
   * Accept a cookie session without the XSRF header on a browser's page navigation: a GET or HEAD whose Fetch
   * Metadata says `Sec-Fetch-Mode: navigate` and `Sec-Fetch-Site: same-origin` or `none` (typed, bookmarked),
   * so that server-rendered pages see the signed-in user. Cross-site and same-site (sibling subdomain)
   * navigations, other methods and requests without Fetch Metadata still need the header. Only for apps whose
   * GET routes change nothing (see the security guide). Default false.
   */
  navigation?: boolean | undefined
}

/**
 * Where tokens are read besides the session cookie (`tokenSources` group), tried in this order: `extract`,
 * `query`, `header`, `bearer`, then the cookie; `false` turns a source off.
 */
export interface TokenSourceOptions {
  /** Request header carrying a token. Default `X-JWT`. */
  header?: string | false | undefined
  /**
   * Query parameter carrying a token: `true` for `token` (the seed's), a name, or `false`. Default `false`: a
   * token in a URL leaks through history, logs and the Referer header (OWASP ASVS 5.0 14.2.1).
   */
  query?: string | boolean | undefined
  /** `Authorization: Bearer <token>` (RFC 6750). Default `true`. */
  bearer?: boolean | undefined
  /**
   * The app's own place for a token (like @fastify/jwt's `extractToken`): `(request) => token`, tried first; an
   * empty or non-string answer means none. It must not throw. Default none.
   */
  extract?: ((request: FastifyRequest) => string | undefined | null) | undefined
  /**
   * go-pkgz's `SendJWTHeader`: an expired header or bearer token still within `session.maxAge` (and
   * `session.idleTimeout`) is refreshed as a cookie session is, and the new token is answered in the `X-JWT`
   * response header (a login answers it there too). Default `false`: a token outside a cookie dies at its `exp`.
   */
  headerRefresh?: boolean | undefined
}

/**
 * Basic authentication on the auth hooks (`basicAuth` group, go-pkgz/auth's `AdminPasswd` and `BasicAuthChecker`); off
 * unless one of these is set. Not the toolkit's `basicAuthPlugin` options (`BasicAuthOptions`).
 */
export interface AdminBasicAuthOptions {
  /** Enables basic auth as user `admin` with this password. */
  adminPasswd?: string | undefined
  /** Basic-auth checker `(user, passwd) => ({ ok, user })`; when set, `adminPasswd` is ignored. */
  checker?: BasicAuthChecker | undefined
}

/** Server-side session revocation (`revocation` group). */
export interface RevocationOptions {
  /**
   * Longest a cached session goes without its revocation being looked up in the state store: the bound for
   * revocation messages an instance missed. Default 30 s.
   */
  recheckInterval?: Duration | undefined
  /**
   * The list of each user's sessions ("where you're signed in": `GET/DELETE {authPrefix}/sessions`,
   * `fastify.auth.listSessions`), kept in the state store beside the revocations. `false` turns it off (the
   * routes answer 404, `listSessions` throws). Default on, `{ maxPerUser: 50, ip: 'address' }`.
   */
  sessionList?: SessionListOptions | false | undefined
}

/** The session list (`revocation.sessionList` group). */
export interface SessionListOptions {
  /** Most sessions listed per user; past it the least recently seen are dropped from the list (not ended). Default 50. */
  maxPerUser?: number | undefined
  /**
   * What the list keeps of a client's address: `'address'` (as throttling sees it, `rateLimit.clientKey`), `'hash'`
   * (a salted SHA-256 prefix: tells addresses apart without showing them; an IPv4 hash can be reversed by trying
   * every address) or `false` (nothing). Default `'address'`.
   */
  ip?: 'address' | 'hash' | false | undefined
}

/** The `trustedDevices` option ("trust this device" after a second factor); `true` for the defaults. */
export interface TrustedDevicesOptions {
  /** How long a trusted browser skips the second factor: ms or `'30d'`, 1 hour to 400 days. Default 30 days. */
  ttl?: Duration | undefined
  /** Most trusted browsers kept per user; past it the oldest is forgotten. 1 to 100, default 10. */
  maxPerUser?: number | undefined
}

/**
 * Re-authentication before a change of factors (`reauthentication` group, ASVS 5.0 7.5.1): adding or removing an
 * authenticator app or a passkey, new recovery codes and (with `otherSessions`) ending other sessions need a cookie
 * session whose sign-in is recent, or the password (or a passkey assertion) in the request. A header or query token
 * never changes factors.
 */
export interface ReauthenticationOptions {
  /**
   * How recent the session's sign-in (its `auth_time`) must be for such a change without the password in the
   * request: ms or `'5m'`, at most 1 hour. Default 5 minutes.
   */
  within?: Duration | undefined
  /**
   * Whether ending other sessions (`DELETE {authPrefix}/sessions[/:id]`, `POST {authPrefix}/logout?all=1`) needs it
   * too; either way they take a cookie session. Default true.
   */
  otherSessions?: boolean | undefined
}

/** Options of the auth core (`gatehouse-core`); the root plugin's options are these plus `avatar` and `providers`. */
export interface CoreOptions {
  /**
   * Signing secret per audience: `{ get(aud) }` or `(aud) => secret`, sync or async. It may return a key list
   * `[{ kid, secret }, …]` instead: the first key signs, every key verifies the tokens naming its `kid`, and
   * removing a key ends its sessions (rotation). Required (it also keys the OAuth2 handshake and confirmation
   * tokens when `session.signingKeys` signs the sessions). A plain string is one secret for every audience
   * (32+ bytes, checked when the options are read).
   */
  secret: SecretOption
  /** Public base address of the service, e.g. `https://example.com`. Required. */
  url: string
  /** `iss` of every token. Default `fastify-gatehouse`. */
  issuer?: string | undefined
  /** Prefix of the auth routes. Default `/auth`. */
  authPrefix?: string | undefined
  /** Allowed audiences; when non-empty, other audiences are refused at creation and in the hooks. */
  audiences?: string[] | undefined
  /** Called on every authenticated request; false rejects. */
  validator?: Validator | undefined
  /** Called when a token is created or refreshed; returns the claims to sign. */
  claimsUpdater?: ClaimsUpdater | undefined
  /** Default updater of the `updateUser` hook. */
  userUpdater?: UserUpdater | undefined
  /** Logger (`noopLogger`, `stdLogger()`, `funcLogger(fn)`, `pinoLogger(log)`). Default: Fastify's log. */
  logger?: Logger | undefined
  /**
   * The name the app's API is decorated under (as @fastify/jwt's option of that name): `fastify.auth` by default.
   * Rename it to register @fastify/auth (which decorates `auth` too) beside the package: `decoratorName: 'gatehouse'`
   * gives `fastify.gatehouse`. A name already decorated is an OptionsError at startup. A JavaScript identifier.
   */
  decoratorName?: string | undefined
  /**
   * Where one-time tokens, used OAuth2 states, pending logins and revocations live: a store object or a
   * `redis://` address. Share one between instances behind one URL. Default in-memory.
   */
  stateStore?: StateStoreOption | undefined
  /** Token and session lifetimes, the verified-session cache, signing keys. */
  session?: SessionOptions | undefined
  /** Names and attributes of the session and XSRF cookies. */
  cookies?: CookieOptions | undefined
  /** The XSRF check of cookie sessions. */
  xsrf?: XsrfOptions | undefined
  /** The header and query parameter a token may also come in. */
  tokenSources?: TokenSourceOptions | undefined
  /** Basic authentication on the auth hooks. */
  basicAuth?: AdminBasicAuthOptions | undefined
  /**
   * Server-side session revocation (logout, `revokeSession`, `revokeUser`) in the state store. `false` turns
   * revocation off: logout then only clears cookies.
   */
  revocation?: RevocationOptions | false | undefined
  /**
   * The login routes of every provider (the login prelude): throttling and lockout, the captcha, the cross-site
   * check, the last-login-method cookie, where `from` may redirect, the app's sign-in page.
   */
  login?: LoginOptions | undefined
  /** The second-factor policy: how recent a sign-in a change of factors needs, "trust this device". */
  factors?: FactorOptions | undefined
  /**
   * Receives every audit event of this instance (login succeeded or failed, lockout, refusal, revocation, …; the
   * catalogue is docs/reference/events.md), beside the `gatehouse:audit` diagnostics channel. An error it throws
   * (or a promise it rejects) is logged and never fails the request. Events carry no token, password, secret,
   * one-time value or full e-mail address. Default none.
   */
  onEvent?: AuditListener | undefined
  /**
   * Sessions of another service accepted while users move over: `{ goPkgz: { secret } }` exchanges each session
   * token of a go-pkgz/auth v2 service, once, for a session of this package (see the migration guide). Default off.
   */
  migration?: MigrationOptions | undefined
  /**
   * The app's own clients without cookies (mobile apps, CLIs, browser apps on another origin): public clients
   * that get token pairs at `{authPrefix}/token` (see the guide "API, mobile and CLI clients"). Needs `revocation`.
   * Default none (no token endpoint).
   */
  clients?: readonly ClientOptions[] | undefined

  /** @deprecated Use `login.redirectHosts`; goes in 1.0. */
  allowedRedirectHosts?: string[] | undefined
  /** @deprecated Use `login.rateLimit`; goes in 1.0. */
  rateLimit?: RateLimitOptions | false | undefined
  /** @deprecated Use `login.captcha`; goes in 1.0. */
  captcha?: CaptchaOption | undefined
  /** @deprecated Use `login.crossSite`; goes in 1.0. */
  crossSite?: CrossSiteOptions | false | undefined
  /** @deprecated Use `login.lastMethod`; goes in 1.0. */
  lastLoginMethod?: boolean | LastLoginMethodOptions | undefined
  /** @deprecated Use `login.page`; goes in 1.0. */
  loginPage?: string | undefined
  /** @deprecated Use `factors.reauthentication`; goes in 1.0. */
  reauthentication?: ReauthenticationOptions | undefined
  /** @deprecated Use `factors.trustedDevices`; goes in 1.0. */
  trustedDevices?: TrustedDevicesOptions | boolean | undefined
}

/**
 * The login routes of every provider (`login` group): what the login prelude (core/mount.ts) checks before any
 * provider runs, and where a login may send the browser afterwards.
 */
export interface LoginOptions {
  /**
   * Throttling and lockout of login routes (see the guide "Throttling"): login requests per address, failed
   * credential checks per account and per address, confirmation sends per address. On by default; `false`
   * turns every limit off.
   */
  rateLimit?: RateLimitOptions | false | undefined
  /**
   * A captcha on the login routes of every provider (or those the verifier names): `turnstileVerifier({ secret })`,
   * `hcaptchaVerifier(…)`, `recaptchaV3Verifier(…)` or your own `(check) => boolean`. Checked after the login count
   * and before the provider (no checker, mail or redirect without a solved captcha); 400/403 `GATEHOUSE_CAPTCHA`,
   * 503 when the service cannot tell. Default off.
   */
  captcha?: CaptchaOption | undefined
  /**
   * Which pages may send login, confirm and logout requests: cross-site ones are refused (403
   * `GATEHOUSE_CROSS_SITE`). `{ trustedOrigins, allowSameSite }` widens it; `false` turns the check off.
   */
  crossSite?: CrossSiteOptions | false | undefined
  /**
   * A readable cookie naming the provider of the last sign-in in this browser, for the sign-in page to highlight
   * it: `true` or `{ cookieName?, maxAge? }`. Never a secret in it; not HttpOnly, so that the page's script can read
   * it. Default off.
   */
  lastMethod?: boolean | LastLoginMethodOptions | undefined
  /** Hosts `from` may redirect to besides the origin of `url`. Default none. */
  redirectHosts?: string[] | undefined
  /**
   * The app's sign-in page, a path on `url`: `{authPrefix}/authorize` sends a browser without a session there with
   * `?from=` (back to the authorization request), so that a native client signs in with any login method. Default
   * `/login`.
   */
  page?: string | undefined
}

/** The second-factor policy (`factors` group). */
export interface FactorOptions {
  /** How recent a sign-in a change of factors needs, or the password in the request (see `ReauthenticationOptions`). */
  reauthentication?: ReauthenticationOptions | undefined
  /**
   * "Trust this device": a browser whose second factor was confirmed with `trustDevice` asked for gets a signed,
   * HttpOnly device cookie for its user and skips the second factor at later logins, for `ttl` (default 30 days),
   * until forgotten from the session list (`DELETE {authPrefix}/sessions/devices/:id`) or by `sessions.revokeUser`.
   * Never for header or bearer clients. `true` for the defaults; off by default.
   */
  trustedDevices?: TrustedDevicesOptions | boolean | undefined
}

/** The keys the core reads; the root plugin hands it exactly these (the deprecated ones included, until 1.0). */
export const CORE_OPTION_KEYS = keyList<CoreOptions>({
  secret: true, url: true, issuer: true, authPrefix: true, audiences: true, validator: true, claimsUpdater: true, userUpdater: true,
  logger: true, decoratorName: true, stateStore: true, session: true, cookies: true, xsrf: true, tokenSources: true, basicAuth: true,
  revocation: true, login: true, factors: true, onEvent: true, migration: true, clients: true,
  allowedRedirectHosts: true, reauthentication: true, rateLimit: true, crossSite: true, captcha: true, lastLoginMethod: true,
  trustedDevices: true, loginPage: true
})
/** The top-level keys that moved into a group, each to its new place: accepted until 1.0, warning once. */
export const MOVED_OPTION_KEYS = {
  allowedRedirectHosts: 'login.redirectHosts',
  rateLimit: 'login.rateLimit',
  captcha: 'login.captcha',
  crossSite: 'login.crossSite',
  lastLoginMethod: 'login.lastMethod',
  loginPage: 'login.page',
  reauthentication: 'factors.reauthentication',
  trustedDevices: 'factors.trustedDevices'
} as const satisfies Partial<Record<keyof CoreOptions, string>>
export const LOGIN_KEYS = keyList<LoginOptions>({ rateLimit: true, captcha: true, crossSite: true, lastMethod: true, redirectHosts: true, page: true })
export const FACTOR_KEYS = keyList<FactorOptions>({ reauthentication: true, trustedDevices: true })
export const TRUSTED_DEVICES_KEYS = keyList<TrustedDevicesOptions>({ ttl: true, maxPerUser: true })
export const SESSION_KEYS = keyList<SessionOptions>({
  tokenDuration: true, maxAge: true, idleTimeout: true, cacheSize: true, signingKeys: true, refreshCache: true
})
export const COOKIE_KEYS = keyList<CookieOptions>({ sessionName: true, xsrfName: true, sameSite: true, secure: true, domain: true })
export const XSRF_KEYS = keyList<XsrfOptions>({ disable: true, ignoreMethods: true, headerName: true, navigation: true })
export const TOKEN_SOURCE_KEYS = keyList<TokenSourceOptions>({ header: true, query: true, bearer: true, extract: true, headerRefresh: true })
export const BASIC_AUTH_KEYS = keyList<AdminBasicAuthOptions>({ adminPasswd: true, checker: true })
export const REVOCATION_KEYS = keyList<RevocationOptions>({ recheckInterval: true, sessionList: true })
export const SESSION_LIST_KEYS = keyList<SessionListOptions>({ maxPerUser: true, ip: true })
export const REAUTHENTICATION_KEYS = keyList<ReauthenticationOptions>({ within: true, otherSessions: true })
/** The longest `reauthentication.within`: a change of factors is a moment, not a session. */
const MAX_REAUTH_MS = 3_600_000

/** Validates the core options and applies defaults. Throws OptionsError naming the first bad option by its path. */
export function resolveOptions (opts: CoreOptions): ResolvedOptions {
  const o = checkKeys(opts, CORE_OPTION_KEYS) as CoreOptions & Record<string, unknown>
  if (o.url === undefined || o.url === '') throw new OptionsError('url', 'is required (the public base address, e.g. https://example.com)')
  const url = optionUrl('url', o.url)
  const logger = o.logger ?? noopLogger
  if (typeof logger?.logf !== 'function') throw new OptionsError('logger', 'must have a logf(format, ...args) method')
  const m = movedSettings(o)
  const allowedRedirectHosts = optionList(m.redirectHosts.name, m.redirectHosts.value).map((h) => h.toLowerCase())
  const warn = (text: string): void => { logger.logf('[WARN] auth options: %s', text) }
  const session = sessionGroup(o.session, warn)
  const rateLimit = resolveRateLimit(m.rateLimit.value, m.rateLimit.name)
  const clientKey = (rateLimit === false ? undefined : (m.rateLimit.value as RateLimitOptions | undefined)?.clientKey) ?? defaultClientKey as ClientKey
  return {
    secret: secretOption(o.secret),
    url: url.href.replace(/\/$/, ''),
    origin: url.origin,
    issuer: optionString('issuer', o.issuer) ?? 'fastify-gatehouse',
    authPrefix: optionPrefix('authPrefix', o.authPrefix, '/auth'),
    audiences: optionList('audiences', o.audiences),
    allowedRedirectHosts,
    validator: adaptFunction('validator', o.validator, 'validate'),
    claimsUpdater: adaptFunction('claimsUpdater', o.claimsUpdater, 'update'),
    userUpdater: adaptFunction('userUpdater', o.userUpdater, 'update'),
    logger,
    decoratorName: decoratorNameOption(o.decoratorName),
    session,
    cookies: cookiesGroup(o.cookies, url),
    xsrf: xsrfGroup(o.xsrf),
    tokenSources: tokenSourcesGroup(o.tokenSources),
    basicAuth: basicAuthGroup(o.basicAuth),
    revocation: revocationGroup(o.revocation, session.tokenDurationMs),
    reauthentication: reauthenticationGroup(m.reauthentication.value, warn, m.reauthentication.name),
    trustedDevices: trustedDevicesGroup(m.trustedDevices.value, warn, m.trustedDevices.name),
    rateLimit,
    clientKey,
    crossSite: crossSiteGuard(m.crossSite.value, url.origin, allowedRedirectHosts, m.crossSite.name),
    captcha: resolveCaptcha(m.captcha.value, m.captcha.name),
    lastLoginMethod: resolveLastLoginMethod(m.lastMethod.value, url, m.lastMethod.name),
    audit: new Audit(optionFunction<AuditListener>('onEvent', o.onEvent), logger, clientKey),
    migration: resolveMigration(o.migration),
    clients: clientsOption(o.clients, session.maxAgeMs, o.revocation),
    loginPage: loginPageOption(m.page.value, url, m.page.name)
  }
}

/** One setting of a group: its value and the name an OptionsError gives it (where the app wrote it). */
interface Setting { readonly value: unknown; readonly name: string }

/**
 * The settings of the `login` and `factors` groups, each from its group or, until 1.0, from the top-level key it
 * had before (`rateLimit`, …), which warns once (lib/deprecation.ts). Both at once is an OptionsError.
 */
function movedSettings (o: CoreOptions & Record<string, unknown>): Record<'redirectHosts' | 'rateLimit' | 'captcha' | 'crossSite' | 'lastMethod' | 'page' | 'reauthentication' | 'trustedDevices', Setting> {
  const groups: Record<string, Record<string, unknown>> = {
    login: optionGroup<LoginOptions>('login', o.login, LOGIN_KEYS) as Record<string, unknown>,
    factors: optionGroup<FactorOptions>('factors', o.factors, FACTOR_KEYS) as Record<string, unknown>
  }
  const pick = (old: keyof typeof MOVED_OPTION_KEYS): Setting => {
    const name = MOVED_OPTION_KEYS[old]
    const [group, key] = name.split('.') as [string, string]
    const now = groups[group]![key]
    if (o[old] === undefined) return { value: now, name }
    if (now !== undefined) throw new OptionsError(name, `is given twice: as ${name} and as ${old}, its old name (keep ${name})`)
    warnDeprecated(old)
    return { value: o[old], name: old }
  }
  return {
    redirectHosts: pick('allowedRedirectHosts'),
    rateLimit: pick('rateLimit'),
    captcha: pick('captcha'),
    crossSite: pick('crossSite'),
    lastMethod: pick('lastLoginMethod'),
    page: pick('loginPage'),
    reauthentication: pick('reauthentication'),
    trustedDevices: pick('trustedDevices')
  }
}

/**
 * The secret reader: a function or `{ get(aud) }` as given, or a plain string checked here (empty or short fails
 * at once, as the startup check would) and served for every audience.
 */
function secretOption (value: unknown): SecretFunc {
  if (value === undefined) {
    throw new OptionsError('secret', `is required: a string of ${MIN_SECRET_BYTES}+ bytes, (aud) => secret or { get(aud) } (is the environment variable that holds it set?); ${MAKE_SECRET}`)
  }
  if (typeof value !== 'string') return adaptFunction<SecretFunc>('secret', value, 'get', true)!
  const bytes = Buffer.byteLength(value, 'utf8')
  if (bytes === 0) throw new OptionsError('secret', `is an empty string (is the environment variable that holds it set?); ${MAKE_SECRET}`)
  if (bytes < MIN_SECRET_BYTES) throw new OptionsError('secret', `is ${bytes} bytes; at least ${MIN_SECRET_BYTES} are needed, ${MAKE_SECRET}`)
  return () => value
}

/** `clients`: validated, and only with revocation (a family's end is a revoked session). */
function clientsOption (value: unknown, maxAgeMs: number, revocation: unknown): ReadonlyMap<string, RegisteredClient> {
  const clients = resolveClients(value, maxAgeMs)
  if (clients.size > 0 && revocation === false) throw new OptionsError('clients', 'need revocation: a refresh family ends by revoking its session (leave `revocation` on)')
  return clients
}

/** `login.page`: a path on `url`'s origin (never another host: it is where a sign-in is sent), as an absolute URL. */
function loginPageOption (value: unknown, url: URL, name: string): string {
  const path = optionString(name, value) ?? '/login'
  if (!path.startsWith('/') || path.startsWith('//') || path.includes('\\')) throw new OptionsError(name, `must be a path on url, like /login (got "${path}")`)
  return new URL(path, url.origin).href
}

/** `decoratorName`: a JavaScript identifier, `auth` by default. */
function decoratorNameOption (value: unknown): string {
  const name = optionString('decoratorName', value) ?? 'auth'
  if (!/^[A-Za-z_$][\w$]*$/.test(name)) throw new OptionsError('decoratorName', `must be a JavaScript identifier, e.g. 'gatehouse' (got "${name}")`)
  return name
}

function sessionGroup (value: unknown, warn: (text: string) => void): ResolvedOptions['session'] {
  const s = optionGroup<SessionOptions>('session', value, SESSION_KEYS)
  const tokenDurationMs = optionLifetime('session.tokenDuration', s.tokenDuration, 15 * 60_000, warn)
  const idleTimeoutMs = optionLifetime('session.idleTimeout', s.idleTimeout, 0, warn)
  if (idleTimeoutMs !== 0 && idleTimeoutMs <= tokenDurationMs) {
    throw new OptionsError('session.idleTimeout', 'must be longer than session.tokenDuration (an active session refreshes once per tokenDuration)')
  }
  const refreshCache = s.refreshCache
  if (refreshCache !== undefined && (typeof refreshCache?.get !== 'function' || typeof refreshCache?.set !== 'function')) {
    throw new OptionsError('session.refreshCache', 'must have get(key) and set(key, claims) methods')
  }
  return {
    tokenDurationMs,
    maxAgeMs: optionLifetime('session.maxAge', s.maxAge, 31 * 86_400_000, warn),
    idleTimeoutMs,
    cacheSize: optionInt('session.cacheSize', s.cacheSize, 10_000),
    signingKeys: sessionKeysOption(s.signingKeys),
    refreshCache
  }
}

const DOMAIN_RE = /^\.?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$/

function cookiesGroup (value: unknown, url: URL): ResolvedOptions['cookies'] {
  const c = optionGroup<CookieOptions>('cookies', value, COOKIE_KEYS)
  const sameSite = (c.sameSite ?? 'Lax').toString().toLowerCase()
  if (!['strict', 'lax', 'none'].includes(sameSite)) throw new OptionsError('cookies.sameSite', 'must be "Strict", "Lax" or "None"')
  const secure = optionBoolean('cookies.secure', c.secure) ?? url.protocol === 'https:'
  if (sameSite === 'none' && !secure) throw new OptionsError('cookies.sameSite', '"None" requires secure cookies (an https url or cookies.secure: true)')
  const domain = optionString('cookies.domain', c.domain)
  if (domain !== undefined && !DOMAIN_RE.test(domain)) throw new OptionsError('cookies.domain', 'must be a domain name such as "example.com"')
  // `__Host-` names by default on https: such a cookie is Secure, has Path=/ and no Domain, so a sibling
  // subdomain cannot set or overwrite it. A cookie with a Domain cannot be `__Host-`; `__Secure-` still keeps a
  // plain-http page from setting it.
  const prefix = !secure ? '' : domain === undefined ? '__Host-' : '__Secure-'
  const sessionName = optionString('cookies.sessionName', c.sessionName) ?? `${prefix}JWT`
  const xsrfName = optionString('cookies.xsrfName', c.xsrfName) ?? `${prefix}XSRF-TOKEN`
  for (const [name, cookie] of [['cookies.sessionName', sessionName], ['cookies.xsrfName', xsrfName]] as const) {
    if (!secure && /^__(host|secure)-/i.test(cookie)) throw new OptionsError(name, 'has a __Host-/__Secure- prefix, which browsers accept only on Secure cookies (an https url or cookies.secure: true)')
    if (domain !== undefined && /^__host-/i.test(cookie)) throw new OptionsError(name, 'has a __Host- prefix, which browsers refuse on a cookie with a Domain (cookies.domain); use __Secure-')
  }
  return { sessionName, xsrfName, sameSite: sameSite as 'strict' | 'lax' | 'none', secure, domain }
}

function xsrfGroup (value: unknown): ResolvedOptions['xsrf'] {
  const x = optionGroup<XsrfOptions>('xsrf', value, XSRF_KEYS)
  const ignore = x.ignoreMethods ?? []
  if (!Array.isArray(ignore) || !ignore.every((m) => typeof m === 'string')) throw new OptionsError('xsrf.ignoreMethods', 'must be a list of method names')
  return {
    disable: optionBoolean('xsrf.disable', x.disable, false),
    ignoreMethods: new Set(ignore.map((m) => m.toUpperCase())),
    headerName: (optionString('xsrf.headerName', x.headerName) ?? 'X-XSRF-TOKEN').toLowerCase(),
    navigation: optionBoolean('xsrf.navigation', x.navigation, false)
  }
}

function tokenSourcesGroup (value: unknown): ResolvedOptions['tokenSources'] {
  const t = optionGroup<TokenSourceOptions>('tokenSources', value, TOKEN_SOURCE_KEYS)
  const header = t.header === false ? null : (optionString('tokenSources.header', t.header) ?? 'X-JWT').toLowerCase()
  const query = t.query === undefined || t.query === false ? null : t.query === true ? 'token' : optionString('tokenSources.query', t.query) ?? null
  const extract = optionFunction<NonNullable<TokenSourceOptions['extract']>>('tokenSources.extract', t.extract) ?? null
  return {
    header,
    query,
    bearer: optionBoolean('tokenSources.bearer', t.bearer) ?? true,
    extract,
    headerRefresh: optionBoolean('tokenSources.headerRefresh', t.headerRefresh) ?? false
  }
}

function basicAuthGroup (value: unknown): ResolvedOptions['basicAuth'] {
  const b = optionGroup<AdminBasicAuthOptions>('basicAuth', value, BASIC_AUTH_KEYS)
  return { adminPasswd: optionString('basicAuth.adminPasswd', b.adminPasswd), checker: optionFunction('basicAuth.checker', b.checker) }
}

function trustedDevicesGroup (value: unknown, warn: (text: string) => void, name: string): ResolvedOptions['trustedDevices'] {
  if (value === undefined || value === false) return null
  const t = value === true ? {} : optionGroup<TrustedDevicesOptions>(name, value, TRUSTED_DEVICES_KEYS)
  const ttlMs = optionLifetime(`${name}.ttl`, t.ttl, 30 * 86_400_000, warn)
  if (ttlMs < 3_600_000 || ttlMs > 400 * 86_400_000) throw new OptionsError(`${name}.ttl`, 'must be between 1 hour and 400 days')
  const maxPerUser = optionInt(`${name}.maxPerUser`, t.maxPerUser, 10, 1)
  if (maxPerUser > 100) throw new OptionsError(`${name}.maxPerUser`, 'must be at most 100')
  return { ttlMs, maxPerUser }
}

function reauthenticationGroup (value: unknown, warn: (text: string) => void, name: string): ResolvedOptions['reauthentication'] {
  const r = optionGroup<ReauthenticationOptions>(name, value, REAUTHENTICATION_KEYS)
  const withinMs = optionLifetime(`${name}.within`, r.within, 5 * 60_000, warn)
  if (withinMs <= 0 || withinMs > MAX_REAUTH_MS) throw new OptionsError(`${name}.within`, 'must be above 0 and at most 1 hour')
  return { withinMs, otherSessions: optionBoolean(`${name}.otherSessions`, r.otherSessions, true) }
}

function revocationGroup (value: unknown, tokenDurationMs: number): ResolvedOptions['revocation'] {
  if (value === false) return null
  if (value !== undefined && (value === null || typeof value !== 'object')) throw new OptionsError('revocation', 'must be { recheckInterval, sessionList } or false')
  const r = optionGroup<RevocationOptions>('revocation', value, REVOCATION_KEYS)
  // A cached entry never outlives a token, so a longer interval would mean nothing.
  const recheckMs = Math.min(optionDuration('revocation.recheckInterval', r.recheckInterval, 30_000), tokenDurationMs)
  return { recheckMs, sessionList: sessionListGroup(r.sessionList) }
}

function sessionListGroup (value: unknown): { maxPerUser: number; ip: 'address' | 'hash' | false } | null {
  if (value === false) return null
  if (value !== undefined && (value === null || typeof value !== 'object')) throw new OptionsError('revocation.sessionList', 'must be { maxPerUser, ip } or false')
  const l = optionGroup<SessionListOptions>('revocation.sessionList', value, SESSION_LIST_KEYS)
  const maxPerUser = optionInt('revocation.sessionList.maxPerUser', l.maxPerUser, 50)
  if (maxPerUser < 1 || maxPerUser > 1000) throw new OptionsError('revocation.sessionList.maxPerUser', 'must be 1-1000')
  const ip = l.ip ?? 'address'
  if (ip !== 'address' && ip !== 'hash' && ip !== false) throw new OptionsError('revocation.sessionList.ip', "must be 'address', 'hash' or false")
  return { maxPerUser, ip }
}
