import type {
  BasicAuthChecker, ClaimsUpdater, ClaimsUpdFunc, CredChecker, AuthProvider, RefreshCache, SecretFunc,
  SecretReader, UserUpdater, UserUpdFunc, Validator, ValidatorFunc
} from './types.js'
import type { Logger } from './logger.js'
import { noopLogger } from './logger.js'
import { parseDuration, type Duration } from './duration.js'
import type {
  AppleConfig, AppleKeyLoader, CustomClient, CustomProviderOptions, DevProviderOptions, OAuth2Overrides, OidcProviderOptions
} from '../../providers/oauth2/index.js'
import type { Sender, SenderFunc, VerifyOptions } from '../../providers/verify/index.js'
import type { TelegramOptions } from '../../providers/telegram/index.js'
import type { StateStoreOption } from '../state-store/resolve.js'
import type { AvatarFetchOptions } from '../avatar/options.js'

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

/** A provider given in the options object instead of an `add*` call; each kind mirrors one `add*` method. */
export type ProviderEntry =
  | { kind: 'direct'; name: string; checker: CredChecker }
  | { kind: 'handler'; handler: AuthProvider }
  | { kind: 'oauth2'; name: string; cid: string; csecret: string; overrides?: OAuth2Overrides }
  | { kind: 'dev'; port?: number; options?: DevProviderOptions }
  | { kind: 'custom'; name: string; client: CustomClient; options: CustomProviderOptions }
  | { kind: 'oidc'; name: string; client: CustomClient; options: OidcProviderOptions }
  | { kind: 'apple'; config: AppleConfig; keyLoader: AppleKeyLoader }
  | { kind: 'verify'; name: string; template: string; sender: Sender | SenderFunc; options?: VerifyOptions }
  | { kind: 'telegram'; options: TelegramOptions }

/** Options of the root plugin (`fastify.register(authPlugin, opts)`). */
export interface AuthOptions {
  /** Signing secret per audience: `{ get(aud) }` or `(aud) => secret`, sync or async. Required. */
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
  /** Prefix of the avatar routes. Default `/avatar`. */
  avatarPrefix?: string
  /** Avatar store instance or address (`file://`, `bolt://`, `mongodb://`, `memory://`). Default in-memory. */
  avatarStore?: unknown
  /** Resize avatars to at most this many pixels per side at store time; 0 disables. Default 0. */
  avatarResizeLimit?: number
  /** Limits on fetching providers' pictures (size, time, redirects, pixels, private targets). */
  avatarFetch?: AvatarFetchOptions
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
  /** Providers to mount at registration. */
  providers?: ProviderEntry[]
}

/** Options after defaults; what the rest of the package reads. */
export interface ResolvedOptions {
  secret: SecretFunc
  url: string
  origin: string
  tokenDurationMs: number
  cookieDurationMs: number
  issuer: string
  authPrefix: string
  avatarPrefix: string
  avatarStore: unknown
  avatarResizeLimit: number
  avatarFetch: AvatarFetchOptions | undefined
  stateStore: StateStoreOption | undefined
  validator: ValidatorFunc | undefined
  claimsUpdater: ClaimsUpdFunc | undefined
  userUpdater: UserUpdFunc | undefined
  audiences: string[]
  adminPasswd: string | undefined
  basicAuthChecker: BasicAuthChecker | undefined
  xsrf: { disable: boolean; ignoreMethods: Set<string>; headerKey: string; cookieName: string }
  jwtCookieName: string
  jwtHeaderKey: string
  jwtQueryParam: string
  sameSite: 'strict' | 'lax' | 'none'
  secureCookies: boolean
  allowedRedirectHosts: string[]
  logger: Logger
  refreshCache: RefreshCache | undefined
  providers: ProviderEntry[]
}

/** A registration-time configuration error naming the option. */
export class OptionsError extends Error {
  constructor (option: string, message: string) {
    super(`fastify-gatehouse: option "${option}" ${message}`)
    this.name = 'OptionsError'
  }
}

const KNOWN = new Set([
  'secret', 'url', 'tokenDuration', 'cookieDuration', 'issuer', 'authPrefix', 'avatarPrefix', 'avatarStore',
  'avatarResizeLimit', 'avatarFetch', 'stateStore', 'validator', 'claimsUpdater', 'userUpdater', 'audiences', 'adminPasswd', 'basicAuthChecker',
  'xsrf', 'jwtCookieName', 'jwtHeaderKey', 'jwtQueryParam', 'sameSite', 'secureCookies', 'allowedRedirectHosts',
  'logger', 'refreshCache', 'providers'
])

/** Validates the options and applies defaults. Throws OptionsError naming the first bad option. */
export function resolveOptions (opts: AuthOptions): ResolvedOptions {
  if (opts === null || typeof opts !== 'object') throw new OptionsError('(options)', 'must be an object')
  for (const key of Object.keys(opts)) {
    // Fastify passes its own registration options (prefix, logLevel) through the same object.
    if (!KNOWN.has(key) && !['prefix', 'logLevel', 'logSerializers'].includes(key)) throw new OptionsError(key, 'is not a known option')
  }
  const o = opts as AuthOptions & Record<string, unknown>
  const url = requireUrl(o.url)
  const secret = adapt<SecretFunc>('secret', o.secret, 'get', true)!
  const tokenDurationMs = duration('tokenDuration', o.tokenDuration, 15 * 60_000)
  const cookieDurationMs = duration('cookieDuration', o.cookieDuration, 31 * 86_400_000)
  const sameSite = (o.sameSite ?? 'Lax').toString().toLowerCase()
  if (!['strict', 'lax', 'none'].includes(sameSite)) throw new OptionsError('sameSite', 'must be "Strict", "Lax" or "None"')
  const secureCookies = optional('secureCookies', o.secureCookies, 'boolean') ?? url.protocol === 'https:'
  if (sameSite === 'none' && !secureCookies) throw new OptionsError('sameSite', '"None" requires secure cookies (an https url or secureCookies: true)')
  const xsrf = o.xsrf ?? {}
  if (typeof xsrf !== 'object') throw new OptionsError('xsrf', 'must be an object')
  const ignore = xsrf.ignoreMethods ?? []
  if (!Array.isArray(ignore) || !ignore.every((m) => typeof m === 'string')) throw new OptionsError('xsrf.ignoreMethods', 'must be a list of method names')
  const resizeLimit = o.avatarResizeLimit ?? 0
  if (!Number.isInteger(resizeLimit) || resizeLimit < 0) throw new OptionsError('avatarResizeLimit', 'must be a non-negative integer')
  const logger = o.logger ?? noopLogger
  if (typeof logger?.logf !== 'function') throw new OptionsError('logger', 'must have a logf(format, ...args) method')
  if (o.refreshCache !== undefined && (typeof o.refreshCache?.get !== 'function' || typeof o.refreshCache?.set !== 'function')) {
    throw new OptionsError('refreshCache', 'must have get(key) and set(key, claims) methods')
  }
  if (o.basicAuthChecker !== undefined && typeof o.basicAuthChecker !== 'function') throw new OptionsError('basicAuthChecker', 'must be a function')
  if (o.providers !== undefined && !Array.isArray(o.providers)) throw new OptionsError('providers', 'must be a list')
  return {
    secret,
    url: url.href.replace(/\/$/, ''),
    origin: url.origin,
    tokenDurationMs,
    cookieDurationMs,
    issuer: optional('issuer', o.issuer, 'string') ?? 'fastify-gatehouse',
    authPrefix: prefix('authPrefix', o.authPrefix, '/auth'),
    avatarPrefix: prefix('avatarPrefix', o.avatarPrefix, '/avatar'),
    avatarStore: o.avatarStore,
    avatarResizeLimit: resizeLimit,
    avatarFetch: o.avatarFetch,
    stateStore: o.stateStore,
    validator: adapt('validator', o.validator, 'validate'),
    claimsUpdater: adapt('claimsUpdater', o.claimsUpdater, 'update'),
    userUpdater: adapt('userUpdater', o.userUpdater, 'update'),
    audiences: stringList('audiences', o.audiences),
    adminPasswd: optional('adminPasswd', o.adminPasswd, 'string'),
    basicAuthChecker: o.basicAuthChecker,
    xsrf: {
      disable: optional('xsrf.disable', xsrf.disable, 'boolean') ?? false,
      ignoreMethods: new Set(ignore.map((m) => m.toUpperCase())),
      headerKey: (optional('xsrf.headerKey', xsrf.headerKey, 'string') ?? 'X-XSRF-TOKEN').toLowerCase(),
      cookieName: optional('xsrf.cookieName', xsrf.cookieName, 'string') ?? 'XSRF-TOKEN'
    },
    jwtCookieName: optional('jwtCookieName', o.jwtCookieName, 'string') ?? 'JWT',
    jwtHeaderKey: (optional('jwtHeaderKey', o.jwtHeaderKey, 'string') ?? 'X-JWT').toLowerCase(),
    jwtQueryParam: optional('jwtQueryParam', o.jwtQueryParam, 'string') ?? 'token',
    sameSite: sameSite as 'strict' | 'lax' | 'none',
    secureCookies,
    allowedRedirectHosts: stringList('allowedRedirectHosts', o.allowedRedirectHosts).map((h) => h.toLowerCase()),
    logger,
    refreshCache: o.refreshCache,
    providers: o.providers ?? []
  }
}

function requireUrl (value: unknown): URL {
  if (typeof value !== 'string' || value === '') throw new OptionsError('url', 'is required (the public base address, e.g. https://example.com)')
  let u: URL
  try { u = new URL(value) } catch { throw new OptionsError('url', `is not a valid URL: ${value}`) }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new OptionsError('url', 'must be http or https')
  return u
}

/** Accepts a function or an object with the named method; returns a function. */
function adapt<F> (name: string, value: unknown, method: string, required = false): F | undefined {
  if (value === undefined || value === null) {
    if (required) throw new OptionsError(name, `is required (a function or an object with ${method}())`)
    return undefined
  }
  if (typeof value === 'function') return value as F
  if (typeof value === 'object' && typeof (value as Record<string, unknown>)[method] === 'function') {
    const obj = value as Record<string, (...a: unknown[]) => unknown>
    return ((...a: unknown[]) => obj[method]!(...a)) as F
  }
  throw new OptionsError(name, `must be a function or an object with ${method}()`)
}

function duration (name: string, value: unknown, dflt: number): number {
  if (value === undefined) return dflt
  const ms = parseDuration(value as number | string)
  if (ms === undefined) throw new OptionsError(name, `must be a positive duration in ms or like "15m", got ${JSON.stringify(value)}`)
  return ms
}

function optional<T extends 'string' | 'boolean'> (name: string, value: unknown, type: T): (T extends 'string' ? string : boolean) | undefined {
  if (value === undefined) return undefined
  if (typeof value !== type) throw new OptionsError(name, `must be a ${type}`)
  if (type === 'string' && value === '') throw new OptionsError(name, 'must not be empty')
  return value as T extends 'string' ? string : boolean
}

function stringList (name: string, value: unknown): string[] {
  if (value === undefined) return []
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string' && v !== '')) throw new OptionsError(name, 'must be a list of non-empty strings')
  return [...value]
}

function prefix (name: string, value: unknown, dflt: string): string {
  if (value === undefined) return dflt
  if (typeof value !== 'string' || !/^\/[A-Za-z0-9._~\-/]*$/.test(value)) throw new OptionsError(name, 'must be a path starting with "/"')
  return value.replace(/\/+$/, '') || dflt
}
