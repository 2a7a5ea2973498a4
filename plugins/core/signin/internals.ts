/**
 * What the auth core shares with the providers and the avatar plugin but not with the app: its resolved options,
 * the full token service, the state store, the throttle, the avatar slot and the registry of mounted providers.
 * Kept per instance under a symbol-keyed decoration (never at module level across instances, and independent of
 * the name the app's API is decorated under, `decoratorName`), and reached only through `coreOf(instance)`: the
 * app's `fastify.auth` stays its own API, and providers get the documented part of this through the provider kit
 * (kit.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { OptionsError, type ErrorHandlerFunction } from '../../../lib/errors.js'
import type { Logger } from '../../../lib/logging/logger.js'
import type { StateStore } from '../../../lib/state-store.js'
import type { Throttle } from '../../../lib/throttle/throttle.js'
import { SecondFactorRegistry } from '../../../lib/login/second-factor.js'
import { ReauthRegistry } from '../../../lib/login/reauth.js'
import type { AudienceRule } from '../base/audience.js'
import type { AuthProvider, AvatarSaver, GatehouseAuth, ResolvedOptions } from '../base/types.js'
import type { CoreTokenService } from '../sessions/tokens.js'
import type { SessionList } from '../sessions/sessions.js'
import type { Revocations } from '../sessions/revocation.js'
import type { TrustedDevices } from './trusted-devices.js'
import type { RedirectVerdict } from '../base/redirect.js'

/** The core's instance-private services. */
export interface CoreInternals {
  /** The app's API, decorated as `fastify.auth` or under `decoratorName`: read it here, never by that name. */
  readonly api: GatehouseAuth
  readonly options: ResolvedOptions
  readonly logger: Logger
  /** The whole token service, purpose-bound tokens included. */
  readonly tokens: CoreTokenService
  readonly stateStore: StateStore
  readonly throttle: Throttle
  /** The audience rule (`audiences`), the one place that decides which audiences are allowed. */
  readonly audiences: AudienceRule
  /** Server-side revocation (sessions the server can end); null when the `revocation` option is off. */
  readonly revocations: Revocations | null
  /** The session list ("where you're signed in"); null when `revocation.sessionList` or revocation is off. */
  readonly sessions: SessionList | null
  /** `from` when it may be followed (origin of `url` or an allowed host), else undefined. */
  safeRedirect(from: string | undefined): string | undefined
  /** The redirect policy's verdict on a `from`, with the reason of a refusal. */
  judgeRedirect(from: string): RedirectVerdict
  /** The one logout answer (clears the session cookies). */
  logout(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>
  /** The avatar proxy the avatar plugin plugged in; null without one. */
  avatar: AvatarSaver | null
  /** Mounted providers by name, in registration order. */
  readonly providers: Map<string, AuthProvider>
  /** True once the server is ready: no provider is taken afterwards. */
  ready: boolean
  /** The second factors the app's providers take and require (the provider kit's `secondFactors`). */
  readonly secondFactors: SecondFactorRegistry
  /** The checks that re-authenticate a signed-in user (the provider kit's `reauth`). */
  readonly reauth: ReauthRegistry
  /** Browsers trusted to skip the second factor (`trustedDevices`); null when the option is off. */
  trustedDevices: TrustedDevices | null
  /** Called at every logout of a verified session with its user (the provider kit's `onLogout`), in order. */
  readonly logoutListeners: Array<(request: FastifyRequest, userId: string) => Promise<void>>
  /** The error handler in effect where the core was registered, read when an auth route fails (the app may set it later). */
  appErrorHandler(): ErrorHandlerFunction
}

const CORE = Symbol('gatehouse-core')

/** Decorates `instance` (the core plugin's, the app's scope) with the internals of its new core. */
export function attachCore (instance: FastifyInstance, core: Omit<CoreInternals, 'avatar' | 'providers' | 'ready' | 'appErrorHandler' | 'secondFactors' | 'reauth' | 'trustedDevices' | 'logoutListeners'>): CoreInternals {
  const internals: CoreInternals = {
    ...core,
    avatar: null,
    providers: new Map(),
    ready: false,
    secondFactors: new SecondFactorRegistry(),
    reauth: new ReauthRegistry(),
    trustedDevices: null,
    logoutListeners: [],
    appErrorHandler: () => instance.errorHandler as ErrorHandlerFunction
  }
  instance.decorate(CORE, internals)
  return internals
}

/**
 * The internals of the core `instance` sees. An OptionsError naming `who` when there is none: the auth core is
 * not registered on this instance or above it (a provider registered before `authPlugin`, for one).
 */
export function coreOf (instance: FastifyInstance, who = 'providers'): CoreInternals {
  const core = (instance as unknown as Record<symbol, CoreInternals | undefined>)[CORE]
  if (core === undefined) throw new OptionsError(who, 'needs the auth core: register authPlugin first')
  return core
}

/** Plugs the avatar proxy into the core of `instance` (the avatar plugin; one per instance). */
export function plugAvatarSaver (instance: FastifyInstance, saver: AvatarSaver): void {
  const core = coreOf(instance, 'avatar')
  if (core.avatar !== null) throw new OptionsError('avatar', 'the avatar plugin is already registered on this instance')
  core.avatar = saver
}
