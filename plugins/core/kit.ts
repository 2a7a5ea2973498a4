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
import type { Logger } from '../../lib/logger.js'
import type { Audit } from '../../lib/audit/audit.js'
import { optionDuration } from '../../lib/options.js'
import type { StateStore } from '../../lib/state-store/types.js'
import type { Throttle } from '../../lib/throttle/throttle.js'
import { coreOf, type CoreInternals } from './internals.js'
import { completeLogin } from './login.js'
import { afterReady, mountProvider, type MountOptions } from './mount.js'
import type { AuthProvider, Claims, LoginResult, ResolvedOptions } from './types.js'

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
  /** Tokens of a login in progress (an OAuth2 handshake, a passkey ceremony, a pending second factor). */
  readonly handshake: PurposeTokens
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
    handshake: purposeTokens(core, 'handshake'),
    confirmation: purposeTokens(core, 'confirm'),
    stateStore: core.stateStore,
    logger: core.logger,
    throttle: providerThrottle(core.throttle),
    url: core.options.url,
    origin: core.options.origin,
    authPrefix: core.options.authPrefix,
    cookies: { secure: core.options.cookies.secure, sameSite: core.options.cookies.sameSite },
    get savesAvatars () { return core.avatar !== null }
  }
  kitCores.set(kit, core)
  return kit
}

/** A self-implemented provider, or a function building it on the kit (to complete logins with it). */
export type ProviderOrFactory = AuthProvider | ((kit: ProviderKit) => AuthProvider)

/**
 * Mounts a self-implemented provider when `instance` loads its plugins, so that providers keep their
 * registration order however they were added (`addCustomHandler`, `{kind: 'handler'}`, provider plugins).
 * Throws at once after ready.
 */
export function mountLater (instance: FastifyInstance, provider: ProviderOrFactory): void {
  const name = typeof provider === 'function' ? 'handler' : String(provider?.name)
  if (coreOf(instance).ready) throw afterReady(name)
  try {
    instance.register(async (scope) => {
      const kit = providerKit(scope, name)
      kit.mount(typeof provider === 'function' ? provider(kit) : provider)
    })
  } catch (err) {
    throw afterReady(name, err)
  }
}

const kitCores = new WeakMap<ProviderKit, CoreInternals>()

/**
 * The app a kit belongs to, as an object to key per-app registries on (every kit of one app gives the same);
 * for built-in providers that meet each other (the second factor), not part of the kit itself.
 */
export function appOfKit (kit: ProviderKit): object {
  const core = kitCores.get(kit)
  if (core === undefined) throw new TypeError('not a provider kit')
  return core
}

/** The audit of the app a kit belongs to, for the built-in providers' own events (second factor, passkeys, sends). */
export function auditOfKit (kit: ProviderKit): Audit {
  return (appOfKit(kit) as CoreInternals).options.audit
}

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
