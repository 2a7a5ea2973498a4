import { OptionsError } from '../../lib/errors.js'
import { DriverMissingError } from '../../lib/optional-driver.js'
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
 * Opens the store an option names: a store object is used as given (its owner closes it); a `redis://` address
 * opens a Redis store (ioredis is loaded only then) that the caller owns; `undefined` opens an in-memory store
 * the caller owns. Throws OptionsError naming `optionName` for anything else.
 */
export async function openStateStore (option: unknown, optionName: string, onError?: (err: Error) => void): Promise<OpenedStateStore> {
  if (option === undefined || option === 'memory://') return { store: new MemoryStateStore(), owned: true }
  if (isStateStore(option)) return { store: option, owned: false }
  if (typeof option !== 'string') {
    throw new OptionsError(optionName, `must be a state store (setIfAbsent, set, get, take, delete, close) or an address (${ADDRESSES})`)
  }
  if (!isRedisAddress(option)) {
    // Only the scheme is named: the rest of an address may hold a password.
    const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(option)?.[1]
    throw new OptionsError(optionName, `must be an address (${ADDRESSES}), got ${scheme === undefined ? 'a string that is not an address' : `a "${scheme}:" address`}`)
  }
  const { RedisStateStore } = await import('./redis.js')
  try {
    return { store: new RedisStateStore(option, onError === undefined ? {} : { onError }), owned: true }
  } catch (err) {
    if (err instanceof DriverMissingError) throw err.forOption(optionName) // ioredis not installed
    if (!(err instanceof OptionsError)) throw err
    // The one option left to refuse is an address that does not parse; the store's error names neither it nor
    // any password in it, and it is not kept as the cause, so that this error stays the store option's.
    throw new OptionsError(optionName, `is not a valid Redis address: ${err.reason}`)
  }
}
