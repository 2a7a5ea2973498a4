/**
 * Mounting a provider: its routes `{authPrefix}/<name>/{login,callback,logout}` (GET and POST each), on the
 * Fastify instance of whoever mounts it (a provider plugin's own instance, or the core's for
 * `addCustomHandler`). The registry of names lives with the core's `fastify.auth`, so names stay unique and
 * `/list` sees every provider, however it was mounted.
 *
 * Cross-site requests to `/login` and `/logout` are refused here for every provider (403
 * `GATEHOUSE_CROSS_SITE`, see lib/cross-site.ts); `/callback` is not guarded, since providers call it
 * cross-site by design and state, PKCE and the handshake cookie protect it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { HttpError, OptionsError } from '../../lib/errors.js'
import { NAME_RE } from '../../lib/options.js'
import { openStateStore } from '../../lib/state-store/resolve.js'
import type { StateStore } from '../../lib/state-store/types.js'
import type { AuthProvider, GatehouseAuth } from './types.js'
import { applyAuthScope } from './scope.js'

/** Login forms, Apple's form_post and passkey assertions are small; anything larger is not a login. */
const LOGIN_BODY_LIMIT = 64 * 1024

/** How a provider's routes are mounted. */
export interface MountOptions {
  /**
   * Answers a cross-site request to `/login` instead of the 403 (e.g. a confirmation link opened from a webmail:
   * a page whose same-origin form goes on). Returning undefined refuses it as usual.
   */
  crossSiteLogin?: (request: FastifyRequest, reply: FastifyReply) => FastifyReply | undefined | Promise<FastifyReply | undefined>
}

interface Registry { providers: Map<string, AuthProvider>; ready: boolean }
const registries = new WeakMap<GatehouseAuth, Registry>()

/** Creates the registry of a new `fastify.auth` (called by the core plugin once). */
export function createRegistry (auth: GatehouseAuth): Registry {
  const registry: Registry = { providers: new Map(), ready: false }
  registries.set(auth, registry)
  return registry
}

function registryOf (auth: GatehouseAuth | undefined): Registry {
  const registry = auth === undefined ? undefined : registries.get(auth)
  if (registry === undefined) throw new OptionsError('providers', 'need the auth core: register authPlugin (or corePlugin) first')
  return registry
}

/**
 * Checks the provider and reserves its name now (so a duplicate fails at once, naming it), then registers its
 * routes on `instance`. After the server is ready this throws an OptionsError, for every way of adding one.
 */
export function mountProvider (instance: FastifyInstance, provider: AuthProvider, opts: MountOptions = {}): void {
  const auth = instance.auth
  const registry = registryOf(auth)
  checkProvider(provider)
  if (registry.ready) throw afterReady(provider.name)
  if (registry.providers.has(provider.name)) throw new OptionsError('providers', `has two providers named "${provider.name}"`)
  try {
    instance.register(async (scope) => { providerRoutes(scope, auth, provider, opts) }, { prefix: `${auth.options.authPrefix}/${provider.name}` })
  } catch (err) {
    throw afterReady(provider.name, err)
  }
  registry.providers.set(provider.name, provider)
}

/**
 * Mounts a provider when `instance` loads its plugins, so that providers keep their registration order however
 * they were added (`addCustomHandler`, `add*` methods, provider plugins). Throws at once after ready.
 */
export function mountLater (instance: FastifyInstance, provider: AuthProvider): void {
  if (registryOf(instance.auth).ready) throw afterReady(String(provider?.name))
  try {
    instance.register(async (scope) => { mountProvider(scope, provider) })
  } catch (err) {
    throw afterReady(String(provider?.name), err)
  }
}

function afterReady (name: string, cause?: unknown): OptionsError {
  return new OptionsError('providers', `cannot take "${name}" after the server is ready: add providers before listen() or ready()`, { cause })
}

function checkProvider (provider: AuthProvider): void {
  if (provider === null || typeof provider !== 'object') throw new OptionsError('providers', 'must hold provider objects')
  const name = provider.name
  if (typeof name !== 'string' || !NAME_RE.test(name)) throw new OptionsError('providers', `has a provider named ${JSON.stringify(name)}; names are 1-64 letters, digits, "_" or "-"`)
  if (typeof provider.login !== 'function') throw new OptionsError('providers', `has a provider "${name}" without login()`)
  for (const m of ['callback', 'logout'] as const) {
    if (provider[m] !== undefined && typeof provider[m] !== 'function') throw new OptionsError('providers', `has a provider "${name}" whose ${m} is not a function`)
  }
}

function providerRoutes (scope: FastifyInstance, auth: GatehouseAuth, provider: AuthProvider, opts: MountOptions): void {
  applyAuthScope(scope, auth.logger)
  const route = (url: string, handler: (request: FastifyRequest, reply: FastifyReply) => unknown): void => {
    scope.route({ method: ['GET', 'POST'], url, bodyLimit: LOGIN_BODY_LIMIT, handler: async (request, reply) => await handler(request, reply) })
  }
  const guard = auth.options.crossSite
  route('/login', async (request, reply) => {
    if (guard !== false && guard.isCrossSite(request)) {
      const answered = await opts.crossSiteLogin?.(request, reply)
      if (answered !== undefined) return answered
      guard.check(request)
    }
    return await provider.login(request, reply)
  })
  route('/callback', (request, reply) => provider.callback !== undefined
    ? provider.callback(request, reply)
    : noCallback(provider.name))
  route('/logout', (request, reply) => {
    if (guard !== false) guard.check(request)
    return provider.logout !== undefined ? provider.logout(request, reply) : auth.logout(request, reply)
  })
}

/** The one answer of a provider that has no callback step. */
function noCallback (name: string): never {
  throw new HttpError(404, 'not found', `provider "${name}" has no callback`)
}

/** Names of the mounted providers, in registration order. */
export function providerNames (auth: GatehouseAuth): string[] {
  return [...registryOf(auth).providers.keys()]
}

/** Marks the registry closed to new providers (the core calls this when the server is ready). */
export function closeRegistry (auth: GatehouseAuth): void {
  registryOf(auth).ready = true
}

/**
 * The state store of a provider: its own option when given (an address it opens is closed with `instance`),
 * else the core's `fastify.auth.stateStore`.
 */
export async function providerStateStore (instance: FastifyInstance, option: unknown, optionName: string): Promise<StateStore> {
  const auth = instance.auth
  if (option === undefined) return auth.stateStore
  const { store, owned } = await openStateStore(option, optionName, (err) => auth.logger.logf('[WARN] state store: %s', err.message))
  if (owned) instance.addHook('onClose', async () => { await store.close() })
  return store
}
