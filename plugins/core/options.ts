import type {
  BasicAuthChecker, ClaimsUpdater, ClaimsUpdFunc, RefreshCache, ResolvedOptions, SecretFunc, SecretReader,
  SessionKey, UserUpdater, UserUpdFunc, Validator, ValidatorFunc
} from './types.js'
import { sessionKeysOption } from './keys.js'
import { noopLogger, type Logger } from '../../lib/logger.js'
import type { Duration } from '../../lib/duration.js'
import { OptionsError } from '../../lib/errors.js'
import {
  adaptFunction, checkKeys, optionBoolean, optionDuration, optionFunction, optionInt, optionList, optionPrefix, optionString,
  optionUrl
} from '../../lib/options.js'
import type { StateStoreOption } from '../../lib/state-store/resolve.js'
import { resolveRateLimit, type RateLimitOptions } from '../../lib/throttle/options.js'
import { defaultClientKey, type ClientKey } from '../../lib/throttle/client.js'
import { crossSiteGuard, type CrossSiteOptions } from '../../lib/cross-site.js'

/** XSRF settings. */
export interface XsrfOptions {
  /** Turns every XSRF check off (testing and debugging only). Default false. */
  disable?: boolean
  /** Methods exempt from the check. Adding anything but safe methods weakens protection. Default none. */
  ignoreMethods?: string[]
  /** Request header carrying the XSRF value. Default `X-XSRF-TOKEN`. */
  headerKey?: string
  /** Cookie holding the XSRF value. Default `XSRF-TOKEN`. */
  cookieName?: string
}

/** Options of the auth core (`gatehouse-core`); the root plugin's options are these plus avatar and providers. */
export interface CoreOptions {
  /**
   * Signing secret per audience: `{ get(aud) }` or `(aud) => secret`, sync or async. It may return a key list
   * `[{ kid, secret }, …]` instead: the first key signs, every key verifies the tokens naming its `kid`, and
   * removing a key ends its sessions (rotation). Required (it also keys the OAuth2 handshake and confirmation
   * tokens when `sessionKeys` signs the sessions).
   */
  secret: SecretReader | SecretFunc
  /** Public base address of the service, e.g. `https://example.com`. Required. */
  url: string
  /** Token lifetime: ms or `'15m'`. Default 15 minutes. */
  tokenDuration?: Duration
  /** Cookie lifetime and absolute session lifetime: no refresh past it. Default 31 days. */
  cookieDuration?: Duration
  /** `iss` of every token. Default `fastify-gatehouse`. */
  issuer?: string
  /** Prefix of the auth routes. Default `/auth`. */
  authPrefix?: string
  /**
   * Where one-time tokens, used OAuth2 states and pending Telegram logins live: a store object or a
   * `redis://` address. Share one between instances behind one URL. Default in-memory.
   */
  stateStore?: StateStoreOption
  /** Called on every authenticated request; false rejects. */
  validator?: Validator | ValidatorFunc
  /** Called when a token is created or refreshed; returns the claims to sign. */
  claimsUpdater?: ClaimsUpdater | ClaimsUpdFunc
  /** Default updater of the `updateUser` hook. */
  userUpdater?: UserUpdater | UserUpdFunc
  /** Allowed audiences; when non-empty, other audiences are refused at creation and in the hooks. */
  audiences?: string[]
  /** Enables basic auth as user `admin` with this password. */
  adminPasswd?: string
  /** Basic-auth checker; when set, `adminPasswd` is ignored. */
  basicAuthChecker?: BasicAuthChecker
  /** XSRF settings. */
  xsrf?: XsrfOptions
  /** Cookie carrying the JWT. Default `JWT`. */
  jwtCookieName?: string
  /** Header carrying the JWT. Default `X-JWT`. */
  jwtHeaderKey?: string
  /** Query parameter carrying the JWT. Default `token`. */
  jwtQueryParam?: string
  /** SameSite attribute of the session cookies (any letter case). Default `Lax`. */
  sameSite?: 'Strict' | 'Lax' | 'None' | 'strict' | 'lax' | 'none'
  /** Secure attribute of the session cookies. Default: true when `url` is https. */
  secureCookies?: boolean
  /** Hosts `from` may redirect to besides the origin of `url`. Default none. */
  allowedRedirectHosts?: string[]
  /** Logger (`noopLogger`, `stdLogger()`, `funcLogger(fn)`, `pinoLogger(log)`). Default noop. */
  logger?: Logger
  /** Refreshed claims by expired token. Default in-memory, bounded. */
  refreshCache?: RefreshCache
  /**
   * Sign session tokens with EdDSA (Ed25519) or ES256 keys instead of the HMAC secret: `[{ kid, alg, privateKey }]`,
   * the first signs, every key verifies. Their public keys are served as a JWKS at
   * `{authPrefix}/.well-known/jwks.json`, so other services can verify sessions without a secret. HMAC-signed
   * session tokens are then refused. Default off (HS256).
   */
  sessionKeys?: SessionKey[]
  /**
   * A cookie session whose token was issued (at login or its last refresh) longer ago than this is not refreshed.
   * Must exceed `tokenDuration`: inactivity longer than `idleTimeout` always ends the session, inactivity
   * shorter than `idleTimeout - tokenDuration` never does. Default off.
   */
  idleTimeout?: Duration
  /** Entries of the verified-session cache (verified tokens by their exact string); 0 turns it off. Default 10 000. */
  sessionCacheSize?: number
  /**
   * Server-side session revocation (logout, `revokeSession`, `revokeUser`) in the state store. `recheckInterval`:
   * longest a cached session goes without its revocation being looked up in the store, the bound for revocation
   * messages an instance missed (default 30 s). `false` turns revocation off: logout then only clears cookies.
   */
  revocation?: { recheckInterval?: Duration } | false
  /**
   * Throttling and lockout of login routes (see the README's "Throttling"): login requests per address, failed
   * credential checks per account and per address, confirmation sends per address. On by default; `false`
   * turns every limit off.
   */
  rateLimit?: RateLimitOptions | false
  /**
   * Which pages may send login, confirm and logout requests: cross-site ones are refused (403
   * `GATEHOUSE_CROSS_SITE`). `{ trustedOrigins, allowSameSite }` widens it; `false` turns the check off.
   */
  crossSite?: CrossSiteOptions | false
}

/** The keys the core reads; the root plugin hands it exactly these. */
export const CORE_OPTION_KEYS: readonly string[] = [
  'secret', 'url', 'tokenDuration', 'cookieDuration', 'issuer', 'authPrefix', 'stateStore', 'validator',
  'claimsUpdater', 'userUpdater', 'audiences', 'adminPasswd', 'basicAuthChecker', 'xsrf', 'jwtCookieName',
  'jwtHeaderKey', 'jwtQueryParam', 'sameSite', 'secureCookies', 'allowedRedirectHosts', 'logger', 'refreshCache',
  'sessionKeys', 'idleTimeout', 'sessionCacheSize', 'revocation',
  'rateLimit', 'crossSite'
]
const XSRF_KEYS = ['disable', 'ignoreMethods', 'headerKey', 'cookieName']

/** Validates the core options and applies defaults. Throws OptionsError naming the first bad option. */
export function resolveOptions (opts: CoreOptions): ResolvedOptions {
  const o = checkKeys(opts, CORE_OPTION_KEYS) as CoreOptions & Record<string, unknown>
  if (o.url === undefined || o.url === '') throw new OptionsError('url', 'is required (the public base address, e.g. https://example.com)')
  const url = optionUrl('url', o.url)
  const secret = adaptFunction<SecretFunc>('secret', o.secret, 'get', true)!
  const sameSite = (o.sameSite ?? 'Lax').toString().toLowerCase()
  if (!['strict', 'lax', 'none'].includes(sameSite)) throw new OptionsError('sameSite', 'must be "Strict", "Lax" or "None"')
  const secureCookies = optionBoolean('secureCookies', o.secureCookies) ?? url.protocol === 'https:'
  if (sameSite === 'none' && !secureCookies) throw new OptionsError('sameSite', '"None" requires secure cookies (an https url or secureCookies: true)')
  const xsrf = o.xsrf === undefined ? {} : checkKeys(o.xsrf, XSRF_KEYS, 'xsrf') as XsrfOptions
  const ignore = xsrf.ignoreMethods ?? []
  if (!Array.isArray(ignore) || !ignore.every((m) => typeof m === 'string')) throw new OptionsError('xsrf.ignoreMethods', 'must be a list of method names')
  const logger = o.logger ?? noopLogger
  if (typeof logger?.logf !== 'function') throw new OptionsError('logger', 'must have a logf(format, ...args) method')
  if (o.refreshCache !== undefined && (typeof o.refreshCache?.get !== 'function' || typeof o.refreshCache?.set !== 'function')) {
    throw new OptionsError('refreshCache', 'must have get(key) and set(key, claims) methods')
  }
  const tokenDurationMs = optionDuration('tokenDuration', o.tokenDuration, 15 * 60_000)
  const idleTimeoutMs = optionDuration('idleTimeout', o.idleTimeout, 0)
  if (idleTimeoutMs !== 0 && idleTimeoutMs <= tokenDurationMs) throw new OptionsError('idleTimeout', 'must be longer than tokenDuration (an active session refreshes once per tokenDuration)')
  // `__Host-` names by default on https: such a cookie is Secure, has Path=/ and no Domain, so a sibling
  // subdomain cannot set or overwrite it. The package never sets a Domain.
  const cookiePrefix = secureCookies ? '__Host-' : ''
  const jwtCookieName = optionString('jwtCookieName', o.jwtCookieName) ?? `${cookiePrefix}JWT`
  const xsrfCookieName = optionString('xsrf.cookieName', xsrf.cookieName) ?? `${cookiePrefix}XSRF-TOKEN`
  for (const [name, value] of [['jwtCookieName', jwtCookieName], ['xsrf.cookieName', xsrfCookieName]] as const) {
    if (!secureCookies && /^__(host|secure)-/i.test(value)) throw new OptionsError(name, 'has a __Host-/__Secure- prefix, which browsers accept only on Secure cookies (an https url or secureCookies: true)')
  }
  const allowedRedirectHosts = optionList('allowedRedirectHosts', o.allowedRedirectHosts).map((h) => h.toLowerCase())
  const rateLimit = resolveRateLimit(o.rateLimit)
  return {
    secret,
    url: url.href.replace(/\/$/, ''),
    origin: url.origin,
    tokenDurationMs,
    cookieDurationMs: optionDuration('cookieDuration', o.cookieDuration, 31 * 86_400_000),
    issuer: optionString('issuer', o.issuer) ?? 'fastify-gatehouse',
    authPrefix: optionPrefix('authPrefix', o.authPrefix, '/auth'),
    validator: adaptFunction('validator', o.validator, 'validate'),
    claimsUpdater: adaptFunction('claimsUpdater', o.claimsUpdater, 'update'),
    userUpdater: adaptFunction('userUpdater', o.userUpdater, 'update'),
    audiences: optionList('audiences', o.audiences),
    adminPasswd: optionString('adminPasswd', o.adminPasswd),
    basicAuthChecker: optionFunction('basicAuthChecker', o.basicAuthChecker),
    xsrf: {
      disable: optionBoolean('xsrf.disable', xsrf.disable, false),
      ignoreMethods: new Set(ignore.map((m) => m.toUpperCase())),
      headerKey: (optionString('xsrf.headerKey', xsrf.headerKey) ?? 'X-XSRF-TOKEN').toLowerCase(),
      cookieName: xsrfCookieName
    },
    jwtCookieName,
    jwtHeaderKey: (optionString('jwtHeaderKey', o.jwtHeaderKey) ?? 'X-JWT').toLowerCase(),
    jwtQueryParam: optionString('jwtQueryParam', o.jwtQueryParam) ?? 'token',
    sameSite: sameSite as 'strict' | 'lax' | 'none',
    secureCookies,
    allowedRedirectHosts,
    logger,
    refreshCache: o.refreshCache,
    sessionKeys: sessionKeysOption(o.sessionKeys),
    idleTimeoutMs,
    sessionCacheSize: optionInt('sessionCacheSize', o.sessionCacheSize, 10_000),
    revocation: revocationOption(o.revocation, tokenDurationMs),
    rateLimit,
    clientKey: (rateLimit === false ? undefined : (o.rateLimit as RateLimitOptions | undefined)?.clientKey) ?? defaultClientKey as ClientKey,
    crossSite: crossSiteGuard(o.crossSite, url.origin, allowedRedirectHosts)
  }
}

function revocationOption (value: unknown, tokenDurationMs: number): { recheckMs: number } | null {
  if (value === false) return null
  if (value !== undefined && (value === null || typeof value !== 'object')) throw new OptionsError('revocation', 'must be { recheckInterval } or false')
  const r = value === undefined ? {} : checkKeys(value, ['recheckInterval'], 'revocation')
  // A cached entry never outlives a token, so a longer interval would mean nothing.
  return { recheckMs: Math.min(optionDuration('revocation.recheckInterval', r.recheckInterval, 30_000), tokenDurationMs) }
}
