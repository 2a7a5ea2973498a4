/**
 * The provider kit: the small interface every provider (built-in or self-implemented) is given instead of
 * reaching into `fastify.auth`. `providerKit(fastify)` in a provider plugin; it needs the auth core registered
 * before (an OptionsError otherwise) and is taken while the app loads its plugins (an OptionsError after ready).
 *
 * ```ts
 * app.register(async (scope) => {
 *   const kit = providerKit(scope)
 *   kit.mount({ name: 'magic', login: (request, reply, login) => kit.completeLogin(request, reply, { user, ...login }) })
 * })
 * ```
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Duration } from '../../lib/duration.js'
import type { Logger } from '../../lib/logging/logger.js'
import type { Audit } from '../../lib/audit/audit.js'
import { optionDuration } from '../../lib/options.js'
import type { StateStore } from '../../lib/state-store.js'
import type { Throttle } from '../../lib/throttle/throttle.js'
import type { SecondFactorRegistry } from '../../lib/login/second-factor.js'
import type { ReauthRegistry } from '../../lib/login/reauth.js'
import { coreOf, type CoreInternals } from './signin/internals.js'
import { kitHandle } from './base/kit-handle.js'
import { completeLogin } from './signin/login.js'
import { afterReady, mountProvider, providerStateStore, type MountOptions } from './signin/mount.js'
import { applyAuthScope } from './signin/scope.js'
import { cookieSession, freshSession, signedInSession, type SignedInSession } from './signin/reauth.js'
import type { AuthProvider, Claims, GatehouseAuth, LoginResult, ResolvedOptions } from './base/types.js'

// The one module a provider imports of the auth core: the kit, and the types a provider is written with.
export type { MountOptions, LoginHandler } from './signin/mount.js'
export type { SignedInSession } from './signin/reauth.js'
export type { AuthProvider, CheckedUser, Claims, CredChecker, GatehouseAuth, LoginResult } from './base/types.js'

/** Short-lived signed tokens of one purpose: never usable as a session, nor as a token of the other purpose. */
export interface PurposeTokens {
  /** Signs `payload` for `ttl` (ms or like `'10m'`), for the audience `aud` when given. */
  sign(payload: Record<string, unknown>, ttl: Duration, aud?: string): Promise<string>
  /** Verifies a token of this purpose (signature, expiry, purpose). Throws HttpError 401 (400 when malformed). */
  verify(token: string): Promise<Claims>
}

/**
 * The throttle as a provider sees it: credential checks under the lockout, sends, the client a request counts
 * for, and the account a typed name is. Login requests are counted by the mount, once, so a provider has no way to count one twice.
 */
export type ProviderThrottle = Pick<Throttle, 'enabled' | 'clientKey' | 'guard' | 'send' | 'accountName'>

/** What a provider is given by the auth core. */
export interface ProviderKit {
  /**
   * Mounts the provider at `{authPrefix}/<name>/{login,callback,logout}`. Its `/login` runs behind the login
   * prelude: cross-site guard (403), the login count (`rateLimit.login`, 429), `aud`/`site`, `from`,
   * `session`/`sess` read and checked (400, 403); the provider gets them as the third argument of `login`.
   */
  mount(provider: AuthProvider, opts?: MountOptions): void
  /**
   * Finishes a login: avatar through the proxy, session cookies, then a redirect to `from` when it is allowed,
   * else the user as JSON.
   */
  completeLogin(request: FastifyRequest, reply: FastifyReply, result: LoginResult): Promise<FastifyReply>
  /**
   * Tokens carrying the state of a login in progress: an OAuth2 handshake, a passkey ceremony, a pending second
   * factor, a Telegram login's binding.
   */
  readonly loginState: PurposeTokens
  /** Tokens a user confirms a login with (the verified provider's emailed links). */
  readonly confirmation: PurposeTokens
  /** Short-lived shared state: the `stateStore` option, or the app's in-memory store. */
  readonly stateStore: StateStore
  /** The package's logger (redacting). */
  readonly logger: Logger
  /**
   * Credential checks under lockout (`guard`), sends (`send`), and the client a request counts for
   * (`clientKey(request)`, to tag state-store writes). Login requests are already counted by the mount.
   */
  readonly throttle: ProviderThrottle
  /** Public base address, no trailing slash. */
  readonly url: string
  /** Origin of `url`. */
  readonly origin: string
  /** Where auth routes live (`authPrefix`). */
  readonly authPrefix: string
  /** How the app's cookies are set (`secure`, `sameSite`), for a provider's own cookies. */
  readonly cookies: { readonly secure: boolean; readonly sameSite: ResolvedOptions['cookies']['sameSite'] }
  /** Whether an avatar proxy takes the pictures handed to `completeLogin` (no need to fetch one otherwise). */
  readonly savesAvatars: boolean
  /** The app's API (`fastify.auth`): the hooks and user getters for a provider's own routes. */
  readonly api: GatehouseAuth
  /** The app's audit (`audit` option), for a provider's own events (second factor, passkeys, sends). */
  readonly audit: Audit
  /**
   * Registers a provider's own routes (besides the mounted login, callback and logout) under
   * `{authPrefix}/<name>`, in a scope with the auth routes' answer rules: `no-store`, errors as
   * `{error, details?, code}`, form bodies parsed, secret query values masked in the request log. `bodyLimit`
   * (bytes) applies to every route of the scope.
   */
  routes(name: string, register: (scope: FastifyInstance) => void, opts?: { bodyLimit?: number | undefined }): void
  /**
   * The state store a provider's own option names (a store object or an address, which is opened here and closed
   * with the app); the app's state store when the option is undefined. An OptionsError names `optionName`.
   */
  openStateStore(option: unknown, optionName: string): Promise<StateStore>
  /** The session a request presents, for a provider's routes that change the account (reauth.ts of the core). */
  readonly sessions: {
    /** The presented session (XSRF checked for a cookie session); 401 without one. */
    signedIn(request: FastifyRequest, reply: FastifyReply): Promise<SignedInSession>
    /** The request's cookie session; 403 for a header or query token (it never changes factors). */
    cookie(request: FastifyRequest, reply: FastifyReply): Promise<SignedInSession>
    /**
     * A cookie session signed in within `reauthentication.within`, or re-authenticated by the `password` or
     * `passkey` field of `fields`; 401 `GATEHOUSE_REAUTHENTICATE` otherwise.
     */
    fresh(request: FastifyRequest, reply: FastifyReply, fields: Record<string, unknown>): Promise<SignedInSession>
  }
  /**
   * Calls `listener` at every logout of a signed-in user (the session verified), after the session ended: for what
   * a provider keeps for the user (its tokens). Errors are the listener's to handle.
   */
  onLogout(listener: (request: FastifyRequest, userId: string) => Promise<void>): void
}

/**
 * The kit of the built-in providers: the provider kit and what only they use, which is not a stable interface
 * (so not on `ProviderKit`, which is a promise to every third-party provider). Not exported from any entry.
 */
export interface BuiltinKit extends ProviderKit {
  /** The app's second factors: a first-factor provider takes them, a second-factor plugin requires itself. */
  readonly secondFactors: Pick<SecondFactorRegistry, 'take' | 'of' | 'requireOf'>
  /** The app's re-authentication checks: a provider that can check a user's primary factor again registers one. */
  readonly reauth: Pick<ReauthRegistry, 'register'>
  /** Lets the avatar proxy fetch pictures from `origin` (a local identity server's own address, the dev provider). */
  trustAvatarOrigin(origin: string): void
}

/**
 * The kit of the auth core `fastify` sees. OptionsError (naming `who`) when the core is not registered before,
 * or when the server is already ready.
 */
export function providerKit (fastify: FastifyInstance, who = 'providers'): ProviderKit {
  const core = coreOf(fastify, who)
  if (core.ready) throw afterReady(who)
  const kit: ProviderKit = {
    mount: (provider, opts) => { mountProvider(fastify, provider, opts) },
    completeLogin: (request, reply, result) => completeLogin(core, request, reply, result),
    // The tokens' purpose claim keeps its first name, `handshake`: tokens already issued stay valid.
    loginState: purposeTokens(core, 'handshake'),
    confirmation: purposeTokens(core, 'confirm'),
    stateStore: core.stateStore,
    logger: core.logger,
    throttle: providerThrottle(core.throttle),
    url: core.options.url,
    origin: core.options.origin,
    authPrefix: core.options.authPrefix,
    cookies: { secure: core.options.cookies.secure, sameSite: core.options.cookies.sameSite },
    get savesAvatars () { return core.avatar !== null },
    api: core.api,
    audit: core.options.audit,
    routes (name, register, opts = {}) {
      fastify.register(async (scope) => {
        applyAuthScope(scope, core.logger, core.options.audit)
        const bodyLimit = opts.bodyLimit
        if (bodyLimit !== undefined) scope.addHook('onRoute', (route) => { route.bodyLimit = bodyLimit })
        register(scope)
      }, { prefix: `${core.options.authPrefix}/${name}` })
    },
    openStateStore: async (option, optionName) => await providerStateStore(fastify, option, optionName),
    sessions: {
      signedIn: async (request, reply) => await signedInSession(core, request, reply),
      cookie: async (request, reply) => await cookieSession(core, request, reply),
      fresh: async (request, reply, fields) => await freshSession(core, request, reply, fields)
    },
    onLogout: (listener) => { core.logoutListeners.push(listener) }
  }
  return kit
}

/** The built-in providers' kit (`providerKit` and `BuiltinKit`'s members); the same errors as `providerKit`. */
export function builtinKit (fastify: FastifyInstance, who: string): BuiltinKit {
  const core = coreOf(fastify, who)
  return {
    ...providerKit(fastify, who),
    secondFactors: core.secondFactors,
    reauth: core.reauth,
    trustAvatarOrigin: (origin) => { core.avatar?.trustOrigin?.(origin) }
  }
}

kitHandle.providerKit = providerKit

/** A self-implemented provider, or a function building it on the kit (to complete logins with it). */
export type ProviderOrFactory = AuthProvider | ((kit: ProviderKit) => AuthProvider)

function providerThrottle (throttle: Throttle): ProviderThrottle {
  return {
    enabled: throttle.enabled,
    clientKey: throttle.clientKey,
    guard: async (request, account, check) => await throttle.guard(request, account, check),
    send: async (request, address) => { await throttle.send(request, address) },
    accountName: throttle.accountName
  }
}

function purposeTokens (core: CoreInternals, purpose: 'handshake' | 'confirm'): PurposeTokens {
  return {
    sign: async (payload, ttl, aud) => await core.tokens.signPurpose(purpose, payload, optionDuration('ttl', ttl, 0), aud),
    verify: async (token) => await core.tokens.verifyPurpose(purpose, token)
  }
}
