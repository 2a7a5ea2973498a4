/**
 * The auth core plugin (`gatehouse-core`): token service, `request.user`, the hooks, `fastify.auth`, the state
 * store and the common routes. It knows nothing of providers, avatars or the toolkit: providers are plugins
 * that depend on it and mount themselves; the avatar plugin plugs an `AvatarSaver` into it.
 *
 * The root plugin (`authPlugin`) registers it; it can also be registered alone (e.g. a service that only
 * verifies sessions issued elsewhere with the same secret).
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { HttpError, OptionsError } from '../lib/errors.js'
import { openStateStore } from '../lib/state-store/resolve.js'
import { createThrottle } from '../lib/throttle/throttle.js'
import { resolveOptions, type CoreOptions } from './core/options.js'
import { checkAtStartup } from './core/startup-check.js'
import { packageLogger } from '../lib/logger.js'
import { createTokenService } from './core/tokens.js'
import { Revocations } from './core/revocation.js'
import { createUserResolver } from './core/session.js'
import { makeRedirectPolicy } from './core/redirect.js'
import { authRoutes } from './core/routes.js'
import { providerNames } from './core/mount.js'
import { attachCore } from './core/internals.js'
import type { GatehouseAuth, UserUpdater, UserUpdFunc } from './core/types.js'
import { authenticateHook } from '../hooks/authenticate.js'
import { adminHook } from '../hooks/admin.js'
import { rbacHook } from '../hooks/rbac.js'
import { traceHook } from '../hooks/trace.js'
import { updateUserHook } from '../hooks/update-user.js'
import { xsrfHook } from '../hooks/xsrf.js'

async function gatehouseCore (fastify: FastifyInstance, opts: CoreOptions): Promise<void> {
  // Without a `logger` option the package writes through Fastify's own log; a host's logger gets redacted lines.
  const o = resolveOptions({ ...opts, logger: packageLogger(opts.logger, fastify.log) as CoreOptions['logger'] })
  const { store: stateStore, owned } = await openStateStore(opts.stateStore, 'stateStore', (err) => o.logger.logf('[WARN] state store: %s', err.message))
  const throttle = await createThrottle(fastify, stateStore, o.rateLimit, o.clientKey)
  const revocations = o.revocation === null
    ? null
    : new Revocations({
      store: stateStore,
      recheckMs: o.revocation.recheckMs,
      cacheLifetimeMs: o.tokenDurationMs,
      sessionLifetimeMs: o.cookieDurationMs + o.tokenDurationMs,
      logger: o.logger,
      dropCache: () => { tokens.cache.clear() }
    })
  const tokens = createTokenService(o, revocations)
  fastify.addHook('onClose', async () => {
    await revocations?.close()
    if (owned) await stateStore.close()
  })
  await revocations?.start()
  const resolve = createUserResolver(o, tokens, throttle)
  const safeRedirect = makeRedirectPolicy(o.url, o.origin, o.allowedRedirectHosts)

  const logout = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const everywhere = logoutEverywhere(request)
    try {
      await tokens.revokePresented(request, everywhere)
    } finally {
      // The cookies go even when the session could not be revoked (the answer then says why).
      tokens.reset(reply)
    }
    return reply.send({ status: 'logged out' })
  }

  // The app's API only: what providers need is in the core's internals, reached through the provider kit.
  const auth: GatehouseAuth = {
    tokens,
    authenticate: authenticateHook(resolve),
    admin: adminHook(resolve),
    rbac: (roles) => rbacHook(resolve, roles),
    trace: traceHook(resolve),
    xsrf: xsrfHook(o),
    updateUser (updater?: UserUpdater | UserUpdFunc) {
      const fn = updater === undefined ? o.userUpdater : adaptUpdater(updater)
      if (fn === undefined) throw new OptionsError('userUpdater', 'is needed by updateUser() when it is called without an updater')
      return updateUserHook(resolve, fn)
    },
    getUser: (request) => request.user ?? null,
    mustGetUser (request) {
      if (request.user === null || request.user === undefined) throw new HttpError(401, 'unauthorized', 'not logged in')
      return request.user
    },
    providers: () => providerNames(core),
    logout,
    async revokeSession (jti) {
      if (revocations === null) throw new OptionsError('revocation', 'is off: revokeSession needs it')
      await revocations.revokeSession(jti)
    },
    async revokeUser (userId) {
      if (revocations === null) throw new OptionsError('revocation', 'is off: revokeUser needs it')
      await revocations.revokeUser(userId)
    },
    jwks: tokens.jwks
  }
  const core = attachCore(auth, { options: o, logger: o.logger, tokens, stateStore, throttle, safeRedirect, logout })
  fastify.addHook('onReady', async () => { core.ready = true })
  fastify.addHook('onReady', async () => { await checkAtStartup(o) })

  // The root plugin adds the add*Provider methods to this same object (see augment.ts).
  fastify.decorate('auth', auth as FastifyInstance['auth'])
  // `request.user` is set by the auth hooks, not declared with decorateRequest: @fastify/jwt declares the same
  // name synchronously and would crash the process if it came second (see the README on using both).
  await fastify.register(authRoutes(auth, core, resolve), { prefix: o.authPrefix })
}

/** `?all=1` (or `true`) on a logout ends every session of the user, not only this one. */
function logoutEverywhere (request: FastifyRequest): boolean {
  const all = (request.query as Record<string, unknown> | undefined)?.all
  if (all === undefined || all === '0' || all === 'false') return false
  if (all === '1' || all === 'true') return true
  throw new HttpError(400, 'bad request', 'all must be 1, 0, true or false')
}

function adaptUpdater (u: UserUpdater | UserUpdFunc): UserUpdFunc {
  if (typeof u === 'function') return u
  if (u !== null && typeof u === 'object' && typeof u.update === 'function') return (user) => u.update(user)
  throw new OptionsError('updater', 'must be a function or an object with update()')
}

/** The core plugin (`gatehouse-core`). Decorates `fastify.auth`; its hooks set `request.user`. */
export const corePlugin = fp(gatehouseCore, {
  name: 'gatehouse-core',
  fastify: '5.x',
  decorators: { fastify: ['parseCookie'] }
})
