/**
 * The avatar proxy plugin (`gatehouse-avatar`): fetches a provider's picture at login, re-encodes it as PNG
 * (identicon when there is none), stores it, and serves it from `GET {prefix}/<avatar_id>.image`.
 * Needs the auth core (`gatehouse-core`); the root plugin registers it. Plugs itself into the core as its avatar saver.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { MemoryStore, openAvatarStore, type AvatarStore } from '../../stores/index.js'
import { MemoryStateStore } from '../../stores/state/memory.js'
import type { StateStore } from '../../lib/state-store.js'
import type { Logger } from '../../lib/logging/logger.js'
import { OptionsError } from '../../lib/errors.js'
import { DriverMissingError } from '../../lib/optional-driver.js'
import { checkUrl, resolveAvatarOptions, type AvatarOptions } from './options.js'
import { AvatarProxy } from './proxy.js'
import { coreOf, plugAvatarSaver } from '../core/signin/internals.js'
import { avatarRoutes } from './serve.js'

export type { AvatarOptions, AvatarFetchOptions } from './options.js'
export { AvatarProxy, avatarIdOf } from './proxy.js'
export { identiconPng } from './identicon.js'

async function gatehouseAvatar (fastify: FastifyInstance, opts: AvatarOptions): Promise<void> {
  const o = resolveAvatarOptions(opts)
  const core = coreOf(fastify, 'avatar')
  if (core.avatar !== null) throw new OptionsError('avatar', 'the avatar plugin is already registered on this instance')
  const url = o.url ?? checkUrl(core.options.url)
  let store: AvatarStore
  try {
    store = openAvatarStore(o.store)
  } catch (err) {
    // A bolt:// or mongodb:// address without its driver: the error says what to install.
    if (err instanceof DriverMissingError) throw err.forOption('avatar.store')
    throw new OptionsError('avatar.store', `cannot be opened: ${(err as Error).message}`)
  }
  const logger = core.logger
  warnUnsharedStore(core.stateStore, store, logger)
  const proxy = new AvatarProxy(store, { base: url + o.prefix, resizeLimit: o.resizeLimit, maxPixels: o.maxPixels, fetch: o.fetch, loginWaitMs: o.loginWaitMs }, logger)
  fastify.addHook('onClose', async () => {
    // Picture fetches still running in the background are stopped first: they write to the store.
    await proxy.close()
    try {
      await store.close()
    } catch (err) {
      logger.logf('[WARN] avatar: closing the store failed: %s', (err as Error)?.message ?? String(err))
    }
  })
  plugAvatarSaver(fastify, proxy)
  await fastify.register(avatarRoutes({ store, maxAge: o.maxAge, logger }), { prefix: o.prefix })
}

/**
 * A state store other than the in-memory one means several instances behind one URL; avatars kept in memory
 * then exist only on the instance that saved them (a link answers 200 on one, 404 on the others). Legal for
 * one instance with Redis, hence a warning, once, at startup.
 */
function warnUnsharedStore (stateStore: StateStore, store: AvatarStore, logger: Logger): void {
  if (stateStore instanceof MemoryStateStore || !(store instanceof MemoryStore)) return
  logger.logf('[WARN] avatar: the state store is shared between instances but avatars are kept in memory, so an avatar link answers 404 on every instance but the one that saved it: set avatar.store to a shared store (mongodb://, or a file:// directory all instances mount)')
}

/** The avatar plugin. Register after the auth core (the root plugin does this from its own options). */
export const avatarPlugin = fp(gatehouseAvatar, {
  name: 'gatehouse-avatar',
  // No `dependencies`: Fastify's "dependency 'gatehouse-core' is not registered" says nothing a user registered;
  // the body's `coreOf` refuses an avatar plugin registered before authPlugin, saying to register that first.
  fastify: '5.x'
})
export default avatarPlugin
