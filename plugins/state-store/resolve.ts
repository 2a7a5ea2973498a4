import type { GatehouseAuth } from '../core/types.js'
import { MemoryStateStore } from './memory.js'
import { RedisStateStore } from './redis.js'
import type { StateStore } from './types.js'

/** A store instance, or a `redis://` / `rediss://` address for a Redis store the package creates and closes. */
export type StateStoreOption = StateStore | string

const METHODS = ['setIfAbsent', 'set', 'get', 'take', 'delete', 'close'] as const

/** True when `value` implements every method of `StateStore`. */
export function isStateStore (value: unknown): value is StateStore {
  return value !== null && typeof value === 'object' &&
    METHODS.every((m) => typeof (value as Record<string, unknown>)[m] === 'function')
}

// Stores the package created, per auth instance and address, so that providers of one app share them.
const created = new WeakMap<GatehouseAuth, Map<string, StateStore>>()

/**
 * The store a provider uses: its own option, else the root option `stateStore` (when the core offers one),
 * else one in-memory store shared by every provider of this `fastify.auth`. Stores created here from an
 * address are closed with the Fastify instance; stores passed in as objects belong to the caller.
 * Throws TypeError naming `optionName` when the option is neither.
 */
export function resolveStateStore (auth: GatehouseAuth, explicit: unknown, optionName = 'stateStore'): StateStore {
  const chosen = explicit ?? (auth.options as { stateStore?: unknown }).stateStore
  if (isStateStore(chosen)) return chosen
  if (chosen !== undefined && typeof chosen !== 'string') {
    throw new TypeError(`fastify-gatehouse: option "${optionName}" must be a state store (setIfAbsent, set, get, take, delete, close) or a redis:// address`)
  }
  if (typeof chosen === 'string' && !/^rediss?:\/\//.test(chosen)) {
    throw new TypeError(`fastify-gatehouse: option "${optionName}" must be a redis:// or rediss:// address, got "${chosen.replace(/\/\/[^@/]*@/, '//***@')}"`)
  }
  let perAuth = created.get(auth)
  if (perAuth === undefined) {
    const map = new Map<string, StateStore>()
    perAuth = map
    created.set(auth, map)
    auth.instance.addHook('onClose', async () => {
      await Promise.all([...map.values()].map((s) => s.close()))
      map.clear()
    })
  }
  const key = chosen ?? 'memory'
  let store = perAuth.get(key)
  if (store === undefined) {
    store = chosen === undefined
      ? new MemoryStateStore()
      : new RedisStateStore(chosen, { onError: (err) => auth.logger.logf('[WARN] state store: %s', err.message) })
    perAuth.set(key, store)
  }
  return store
}
