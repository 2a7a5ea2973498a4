/**
 * The auth core plugin: token service, `request.user`, the hooks, `fastify.auth` and the common routes.
 * The root plugin (`authPlugin`) registers it; it can also be registered alone when no provider is needed
 * (e.g. a service that only verifies tokens issued elsewhere with the same secret).
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { HttpError } from './shared/errors.js'
import { resolveOptions, type AuthOptions } from './core/options.js'
import { createTokenService } from './core/tokens.js'
import { createUserResolver } from './core/session.js'
import { makeRedirectPolicy } from './core/redirect.js'
import { authRoutes } from './core/routes.js'
import type { AuthProvider, GatehouseAuth, LoginResult, UserUpdater, UserUpdFunc } from './core/types.js'
import { User, type UserData } from './core/user.js'
import { authenticateHook } from '../hooks/authenticate.js'
import { adminHook } from '../hooks/admin.js'
import { rbacHook } from '../hooks/rbac.js'
import { traceHook } from '../hooks/trace.js'
import { updateUserHook } from '../hooks/update-user.js'
import { xsrfHook } from '../hooks/xsrf.js'
import { directProvider } from '../providers/direct.js'
import { providerMethods, type ProviderMethods } from './core/add-providers.js'

const PROVIDER_NAME = /^[A-Za-z0-9_-]{1,64}$/

async function gatehouseCore (fastify: FastifyInstance, opts: AuthOptions): Promise<void> {
  const o = resolveOptions(opts)
  const tokens = createTokenService(o)
  const resolve = createUserResolver(o, tokens)
  const providers = new Map<string, AuthProvider>()

  const auth = {
    options: o,
    logger: o.logger,
    tokens,
    instance: fastify,
    avatar: null,
    authenticate: authenticateHook(resolve),
    admin: adminHook(resolve),
    rbac: (roles) => rbacHook(resolve, roles),
    trace: traceHook(resolve),
    xsrf: xsrfHook(o),
    updateUser (updater?: UserUpdater | UserUpdFunc) {
      const fn = updater === undefined ? o.userUpdater : adaptUpdater(updater)
      if (fn === undefined) throw new TypeError('fastify-gatehouse: updateUser() needs an updater or the userUpdater option')
      return updateUserHook(resolve, fn)
    },
    getUser: (request) => request.user ?? null,
    mustGetUser (request) {
      if (request.user === null || request.user === undefined) throw new HttpError(401, 'unauthorized', 'not logged in')
      return request.user
    },
    providerNames: () => [...providers.keys()],
    addCustomHandler (provider) {
      if (provider === null || typeof provider !== 'object') throw new TypeError('fastify-gatehouse: a provider must be an object')
      const name = provider.name
      if (typeof name !== 'string' || !PROVIDER_NAME.test(name)) throw new TypeError(`fastify-gatehouse: provider name ${JSON.stringify(name)} must match ${PROVIDER_NAME}`)
      for (const m of ['login', 'callback', 'logout'] as const) {
        if (typeof provider[m] !== 'function') throw new TypeError(`fastify-gatehouse: provider "${name}" lacks ${m}()`)
      }
      if (providers.has(name)) throw new TypeError(`fastify-gatehouse: provider "${name}" is already registered`)
      providers.set(name, provider)
    },
    addDirectProvider (name, checker) { auth.addCustomHandler(directProvider(auth, name, checker)) },
    completeLogin: (request, reply, result) => completeLogin(auth, request, reply, result),
    safeRedirect: makeRedirectPolicy(o.url, o.origin, o.allowedRedirectHosts)
  } as Omit<GatehouseAuth, keyof ProviderMethods> as GatehouseAuth
  Object.assign(auth, providerMethods(auth))

  fastify.decorate('auth', auth)
  fastify.decorateRequest('user', null)
  await fastify.register(authRoutes(auth, providers, resolve), { prefix: o.authPrefix })
}

async function completeLogin (auth: GatehouseAuth, request: FastifyRequest, reply: FastifyReply, result: LoginResult): Promise<FastifyReply> {
  const user: UserData = { ...result.user }
  if (auth.avatar !== null) {
    // A failing avatar proxy (any AvatarSaver may be plugged in) costs the user a picture, never the login.
    let picture: string | undefined
    try {
      picture = await auth.avatar.save(user.id, result.avatar ?? {})
    } catch (err) {
      auth.logger.logf('[WARN] avatar for %s not saved: %s', user.id, err instanceof Error ? err.message : String(err))
    }
    if (picture !== undefined) user.picture = picture
    else delete user.picture
  } else {
    // Without an avatar proxy a provider's picture link would point the browser at a third party; drop it.
    delete user.picture
  }
  const { claims } = await auth.tokens.set(reply, { user, aud: result.aud, sess: result.sessionOnly === true })
  const to = auth.safeRedirect(result.from)
  if (to !== undefined) return reply.redirect(to, 302)
  // The claims updater may have shaped the user (role, attrs): answer with what the session carries.
  return reply.send(new User(claims.user ?? user))
}

function adaptUpdater (u: UserUpdater | UserUpdFunc): UserUpdFunc {
  if (typeof u === 'function') return u
  if (u !== null && typeof u === 'object' && typeof u.update === 'function') return (user) => u.update(user)
  throw new TypeError('fastify-gatehouse: an updater must be a function or an object with update()')
}

/** The core plugin (`gatehouse-core`). Decorates `fastify.auth` and `request.user`. */
export const corePlugin = fp(gatehouseCore, {
  name: 'gatehouse-core',
  fastify: '5.x',
  decorators: { fastify: ['parseCookie'] }
})
