import { openStore, type StoreFamily } from '../open-store.js'
import { MemoryStateStore } from './memory.js'
import type { StateStore } from '../../lib/state-store.js'
import { isRedisAddress } from './redis-address.js'

/** The address forms, as errors name them. */
const ADDRESSES = 'memory://, redis://, rediss://, redis-cluster://host:port,… or redis-sentinel://host:port,…/<master name>'

/**
 * A store instance, or an address: `memory://` (the in-memory store), or a Redis address the package creates and
 * closes a store for (`redis://[user:pass@]host:port[/db]`, `rediss://…` with TLS,
 * `redis-cluster://host:port,host:port,…`, `redis-sentinel://host:port,host:port,…/<master name>`).
 */
export type StateStoreOption = StateStore | string

const METHODS = ['setIfAbsent', 'set', 'get', 'take', 'delete', 'close'] as const

/** True when `value` implements every method of `StateStore`. */
export function isStateStore (value: unknown): value is StateStore {
  return value !== null && typeof value === 'object' &&
    METHODS.every((m) => typeof (value as Record<string, unknown>)[m] === 'function')
}

/** A store and whether the caller opened it (and so must close it). */
export interface OpenedStateStore { store: StateStore; owned: boolean }

/**
 * The state store family for the one opener (stores/open-store.ts): in memory, or Redis (added by
 * `openStateStore` once the Redis store's module is loaded); no lmdb file.
 */
const STATE_STORES: StoreFamily<StateStore> = {
  kind: 'state store (setIfAbsent, set, get, take, delete, close)',
  addressList: ADDRESSES,
  isStore: isStateStore,
  memory: () => new MemoryStateStore()
}

/**
 * Opens the store an option names: a store object is used as given (its owner closes it); a Redis address opens
 * a Redis store (ioredis and the store's module are loaded only then) that the caller owns; `undefined` or
 * `memory://` opens an in-memory store the caller owns. Throws OptionsError naming `optionName` for anything else.
 */
export async function openStateStore (option: unknown, optionName: string, onError?: (err: Error) => void): Promise<OpenedStateStore> {
  if (typeof option !== 'string' || !isRedisAddress(option)) return openStore(STATE_STORES, option, optionName, onError)
  const { RedisStateStore } = await import('./redis.js')
  return openStore({ ...STATE_STORES, redis: (address, options) => new RedisStateStore(address, options) }, option, optionName, onError)
}
