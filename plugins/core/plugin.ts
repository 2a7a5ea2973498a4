/**
 * The auth core plugin (`gatehouse-core`): token service, `request.user`, the hooks, `fastify.auth`, the state
 * store and the common routes. It knows nothing of providers, avatars or the toolkit: providers are plugins
 * that depend on it and mount themselves; the avatar plugin plugs an `AvatarSaver` into it.
 *
 * Internal: the root plugin (`authPlugin`) opens it (`openCore`) and decorates `fastify.auth` once, with the seed's
 * `add*` methods composed in (a service that only verifies sessions registers `authPlugin` without providers).
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError, OptionsError } from '../../lib/errors.js'
import { openStateStore } from '../../stores/state/resolve.js'
import { enableTelemetry, startMetrics, tracedStateStore } from '../../lib/telemetry/index.js'
import type { StateStore } from '../../lib/state-store.js'
import { createThrottle } from '../../lib/throttle/throttle.js'
import { resolveOptions, type CoreOptions } from './options.js'
import { checkAtStartup } from './base/startup-check.js'
import { packageLogger } from '../../lib/logging/logger.js'
import { SECRET_KEY_WORDS } from '../../lib/secret-keys.js'
import { maskRequestLog } from './base/request-log.js'
import { createTokenService, type CoreTokenService } from './sessions/tokens.js'
import { Revocations } from './sessions/revocation.js'
import { openSessionIndex } from '../../stores/state/session-index.js'
import { createUserResolver } from './signin/user-resolver.js'
import { makeRedirectPolicy } from './base/redirect.js'
import { AudienceRule } from './base/audience.js'
import { authRoutes } from './routes.js'
import { openClientTokens, type ClientTokens } from './clients/client-tokens.js'
import { clearSiteCookies } from './sessions/cookies.js'
import { requestCookie } from './base/cookie-jar.js'
import { providerNames } from './signin/mount.js'
import { attachCore, type CoreInternals } from './signin/internals.js'
import { providerOfRoute, SessionList } from './sessions/sessions.js'
import { TrustedDevices } from './signin/trusted-devices.js'
import { audOf } from './base/claims.js'
import { userIdOf } from './sessions/session-audit.js'
import type { AuthHook, Claims, GatehouseAuth, ResolvedOptions, UserUpdater, UserUpdFunc } from './base/types.js'
import { authenticateHook } from '../../hooks/authenticate.js'
import { adminHook } from '../../hooks/admin.js'
import { rbacHook } from '../../hooks/rbac.js'
import { optionalUserHook } from '../../hooks/optional-user.js'
import { updateUserHook } from '../../hooks/update-user.js'
import { xsrfHook } from '../../hooks/xsrf.js'
import { stepUpHook } from '../../hooks/step-up.js'
import type { ResolveUser, SessionIdOf } from '../../hooks/types.js'
import type { StepUpOptions } from '../../lib/login/step-up.js'
import { warnDeprecated } from '../../lib/deprecation.js'
import { sessionEndingOthers } from './signin/reauth.js'

/** The auth core opened on an instance: the app's API and the name to decorate it under (`decoratorName`). */
export interface OpenedCore { readonly api: GatehouseAuth; readonly decoratorName: string }

/**
 * Opens the auth core on `fastify` (its services, hooks, `request.user` and common routes) and returns the app's
 * API without decorating it: the root plugin composes it with the seed's `add*` methods and decorates the one
 * object (`corePlugin` decorates it as it is).
 */
export async function openCore (fastify: FastifyInstance, opts: CoreOptions): Promise<OpenedCore> {
  // Without a `logger` option the package writes through Fastify's own log; a host's logger gets redacted lines.
  const o = resolveOptions({ ...opts, logger: packageLogger(opts.logger, fastify.log) as CoreOptions['logger'] })
  checkDecoratorName(fastify, o.decoratorName)
  // A query session (`?token=`) reaches the app's own routes: Fastify's request log masks it on every route.
  maskRequestLog(fastify, o.tokenSources.query === null ? SECRET_KEY_WORDS : [...SECRET_KEY_WORDS, o.tokenSources.query])
  const { stateStore, throttle, revocations, sessions, tokens, audiences } = await openServices(fastify, o, opts.stateStore)
  const clientTokens = openClientTokens(fastify, o, { stateStore, revocations, sessions, tokens, throttle })
  const resolve = createUserResolver(o, tokens, throttle)
  const redirects = makeRedirectPolicy(o.url, o.origin, o.allowedRedirectHosts)
  // The session the hooks' user came with, served from the cache the hook just filled; none for a basic-auth user
  // (whose request may even carry a session token that does not verify: that is no session of theirs either).
  const sessionIdOf = async (request: FastifyRequest, reply: FastifyReply): Promise<string | undefined> => {
    let session
    try { session = await tokens.session(request, reply) } catch { return undefined }
    return session !== null && session.user !== null && session.user.id === request.user?.id ? session.claims.jti : undefined
  }

  const logout = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const everywhere = logoutEverywhere(request, reply)
    // Ending every session takes the rule of ending other sessions from the list; refused, nothing happens (this
    // browser stays signed in, so that it can send the password and retry).
    if (everywhere) await sessionEndingOthers(core, request, reply)
    const signOut = (): void => { tokens.reset(reply); clearSiteCookies(reply) }
    let claims
    try {
      claims = await tokens.revokePresented(request, everywhere)
    } catch (err) {
      // The cookies go even when the session could not be revoked (the answer then says why), unless the XSRF
      // rule refused the request: a forged "sign out everywhere" signs nobody out, this browser included.
      if (!(err instanceof HttpError && err.code === ErrorCodes.XSRF)) signOut()
      throw err
    }
    signOut()
    const userId = userIdOf(claims)
    // What providers keep for the user (their tokens) goes with the session; a listener's failure is its own.
    if (userId !== undefined) for (const listener of core.logoutListeners) await listener(request, userId)
    if (o.audit.on) auditLogout(core, request, claims, everywhere)
    return reply.send({ status: 'logged out' })
  }

  // The app's API only: what providers need is in the core's internals, reached through the provider kit.
  const auth = appApi({ o, tokens, clientTokens, resolve, sessionIdOf, stateStore, revocations, sessions, core: () => core })
  const core = attachCore(fastify, { api: auth, options: o, logger: o.logger, tokens, stateStore, throttle, audiences, revocations, sessions, safeRedirect: redirects.safe, judgeRedirect: redirects.judge, logout })
  if (o.trustedDevices !== null) {
    const devices = new TrustedDevices(core, o.trustedDevices.ttlMs, o.trustedDevices.maxPerUser)
    core.trustedDevices = devices
    core.secondFactors.trustedBrowser = async (request, userId) => await devices.trusts(request, userId)
  }
  fastify.addHook('onReady', async () => { core.ready = true })
  fastify.addHook('onReady', async () => { await checkAtStartup(o) })

  decorateUser(fastify)
  await fastify.register(authRoutes(auth, core, resolve, clientTokens?.routes), { prefix: o.authPrefix })
  return { api: auth, decoratorName: o.decoratorName }
}

/** What the app's API is built from: the core's services (`core` once it is attached). */
interface ApiParts {
  o: Pick<ResolvedOptions, 'audit' | 'cookies' | 'userUpdater' | 'xsrf'>
  tokens: CoreTokenService
  clientTokens: ClientTokens | null
  resolve: ResolveUser
  sessionIdOf: SessionIdOf
  stateStore: StateStore
  revocations: Revocations | null
  sessions: SessionList | null
  core: () => CoreInternals
}

/**
 * The app's API (`fastify.auth`): its thirteen members, and the names they had before, each warning once
 * (lib/deprecation.ts) and going in 1.0. The old names are getters, so that nothing warns unless it is used.
 */
function appApi (p: ApiParts): GatehouseAuth {
  const { o, tokens, clientTokens, resolve, revocations, sessions } = p
  const optionalUser = optionalUserHook(resolve)
  const stepUp = (opts: StepUpOptions, called?: string): AuthHook => stepUpHook(resolve, p.sessionIdOf, p.stateStore, o.audit, opts, called)
  const userSessions: GatehouseAuth['sessions'] = {
    async list (userId) {
      if (sessions === null) throw new OptionsError('revocation.sessionList', 'is off: sessions.list needs it')
      return await sessions.list(userId, null)
    },
    async revoke (jti) {
      if (revocations === null) throw new OptionsError('revocation', 'is off: sessions.revoke needs it')
      await revocations.revokeSession(jti)
      if (o.audit.on) o.audit.emit(undefined, 'session.revoked', { reason: 'revokeSession', by: 'revokeSession', scope: 'session' })
    },
    async revokeUser (userId) {
      if (revocations === null) throw new OptionsError('revocation', 'is off: sessions.revokeUser needs it')
      await revocations.revokeUser(userId)
      if (o.audit.on) o.audit.emit(undefined, 'session.revoked', { reason: 'revokeUser', by: 'revokeUser', scope: 'user', userId })
      // Ending every session of a user also ends the trust of their browsers: the next login asks the second factor.
      await p.core().trustedDevices?.forget(undefined, userId, undefined, 'revokeUser')
    }
  }
  // The seed's `add*Provider` methods of the type (augment.ts) are added by the root plugin before it decorates.
  const api = {
    authenticate: authenticateHook(resolve),
    optionalUser,
    admin: adminHook(resolve, o.audit),
    rbac: (roles) => rbacHook(resolve, roles, o.audit),
    stepUp: (opts) => stepUp(opts),
    xsrf: xsrfHook({ ...o.xsrf, cookieOf: (request) => requestCookie(request, o.cookies.xsrfName) }),
    updateUser (updater?: UserUpdater) {
      const fn = updater === undefined ? o.userUpdater : adaptUpdater(updater)
      if (fn === undefined) throw new OptionsError('userUpdater', 'is needed by updateUser() when it is called without an updater')
      return updateUserHook(resolve, fn)
    },
    getUser: (request) => request.user ?? null,
    mustGetUser (request) {
      if (request.user === null || request.user === undefined) throw new HttpError(401, 'unauthorized', 'not logged in')
      return request.user
    },
    sessions: userSessions,
    // The app's part of the token service only: purpose-bound tokens and the cache stay with the core.
    tokens: {
      create: tokens.create,
      parse: tokens.parse,
      set: tokens.set,
      read: tokens.read,
      reset: tokens.reset,
      async issuePair (request, client, input) {
        if (clientTokens === null) throw new OptionsError('clients', `has no client "${client}": register it to issue token pairs`)
        return await clientTokens.issue(request, client, input)
      }
    },
    providers: () => providerNames(p.core()),
    jwks: tokens.jwks,
    get trace () { warnDeprecated('fastify.auth.trace'); return optionalUser },
    get recent () { warnDeprecated('fastify.auth.recent'); return (opts: StepUpOptions) => stepUp(opts, 'recent') },
    get revokeSession () { warnDeprecated('fastify.auth.revokeSession'); return userSessions.revoke },
    get revokeUser () { warnDeprecated('fastify.auth.revokeUser'); return userSessions.revokeUser },
    get listSessions () { warnDeprecated('fastify.auth.listSessions'); return userSessions.list }
  } satisfies Partial<GatehouseAuth>
  return api as GatehouseAuth
}

async function gatehouseCore (fastify: FastifyInstance, opts: CoreOptions): Promise<void> {
  const { api, decoratorName } = await openCore(fastify, opts)
  fastify.decorate(decoratorName, api)
}

/** The state store, throttle, revocation and token service of one core instance, closed with it. */
async function openServices (fastify: FastifyInstance, o: ResolvedOptions, storeOption: CoreOptions['stateStore']) {
  // OpenTelemetry, when the host installed the API and registered an SDK before this registration.
  enableTelemetry()
  startMetrics()
  const { store: opened, owned } = await openStateStore(storeOption, 'stateStore', (err) => o.logger.logf('[WARN] state store: %s', err.message))
  const stateStore = tracedStateStore(opened)
  const throttle = await createThrottle(fastify, stateStore, o.rateLimit, o.clientKey, o.audit)
  // The token service checks revocations, and revocations drop its cache when they can no longer vouch for it:
  // made in that order, the cache is reached through this slot, filled below, before revocations start.
  const cache: { drop: () => void } = { drop: () => {} }
  const revocations = o.revocation === null
    ? null
    : new Revocations({
      store: stateStore,
      recheckMs: o.revocation.recheckMs,
      cacheLifetimeMs: o.session.tokenDurationMs,
      sessionLifetimeMs: o.session.maxAgeMs + o.session.tokenDurationMs,
      logger: o.logger,
      dropCache: () => { cache.drop() }
    })
  const audiences = new AudienceRule(o.audiences)
  const sessions = await openSessionList(o, stateStore, revocations)
  const tokens = createTokenService(o, revocations, audiences, sessions, stateStore)
  cache.drop = () => { tokens.cache.clear() }
  fastify.addHook('onClose', async () => {
    await sessions?.close()
    await revocations?.close()
    if (owned) await stateStore.close()
  })
  await revocations?.start()
  return { stateStore, throttle, revocations, sessions, tokens, audiences }
}

/** The session list ("where you're signed in") on the state store, unless it or revocation is off. */
async function openSessionList (o: Pick<ResolvedOptions, 'revocation' | 'clientKey' | 'session' | 'issuer' | 'logger'>, store: StateStore, revocations: Revocations | null): Promise<SessionList | null> {
  const list = o.revocation?.sessionList
  if (revocations === null || list === null || list === undefined) return null
  return new SessionList({
    index: await openSessionIndex(store),
    revocations,
    maxPerUser: list.maxPerUser,
    ip: list.ip,
    clientKey: o.clientKey,
    maxAgeSeconds: Math.max(1, Math.round(o.session.maxAgeMs / 1000)),
    salt: o.issuer,
    logger: o.logger
  })
}

/** A name taken already (by @fastify/auth, for one) is a startup error naming the option, not Fastify's generic one. */
function checkDecoratorName (fastify: FastifyInstance, name: string): void {
  if (!fastify.hasDecorator(name)) return
  const hint = name === 'auth' ? ' (@fastify/auth decorates `auth` too)' : ''
  throw new OptionsError('decoratorName', `"${name}" is already a decorator of this Fastify instance${hint}: choose another, e.g. decoratorName: 'gatehouse'`)
}

/**
 * `request.user` is `null` until an auth hook sets it. Declared here unless a plugin registered earlier declared
 * it (@fastify/jwt with its default `decoratorName` does, with the same `null`): each request then has the property
 * from the start, in one shape. @fastify/jwt registered after the core needs another `decoratorName`.
 */
function decorateUser (fastify: FastifyInstance): void {
  if (!fastify.hasRequestDecorator('user')) fastify.decorateRequest('user', null)
}

/** The `logout` event: the user and audience of the verified session, when one was presented. */
function auditLogout (core: CoreInternals, request: FastifyRequest, claims: Claims | undefined, everywhere: boolean): void {
  core.options.audit.emit(request, 'logout', {
    reason: everywhere ? 'everywhere' : 'session',
    everywhere,
    provider: providerOfRoute(request, core.options, core.providers) ?? undefined,
    userId: userIdOf(claims),
    aud: claims === undefined ? undefined : audOf(claims)
  })
}

/**
 * `?all=1` (or `true`) on a logout ends every session of the user, not only this one: only by POST (a GET, which
 * an `<img>` or a link can send, answers 405 and ends nothing).
 */
function logoutEverywhere (request: FastifyRequest, reply: FastifyReply): boolean {
  const all = (request.query as Record<string, unknown> | undefined)?.all
  if (all === undefined || all === '0' || all === 'false') return false
  if (all !== '1' && all !== 'true') throw new HttpError(400, 'bad request', 'all must be 1, 0, true or false')
  if (request.method === 'POST') return true
  reply.header('allow', 'POST')
  throw new HttpError(405, 'method not allowed', 'ending every session is a POST (with the XSRF header of a cookie session)', ErrorCodes.BAD_REQUEST)
}

function adaptUpdater (u: UserUpdater): UserUpdFunc {
  if (typeof u === 'function') return u
  if (u !== null && typeof u === 'object' && typeof u.update === 'function') return (user) => u.update(user)
  throw new OptionsError('updater', 'must be a function or an object with update()')
}

/** The core plugin (`gatehouse-core`). Decorates `fastify.auth`; its hooks set `request.user`. */
export const corePlugin = fp(gatehouseCore, { name: 'gatehouse-core', fastify: '5.x' })
