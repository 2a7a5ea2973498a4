import { OptionsError } from '../errors.js'
import { MemoryStateStore } from './memory.js'
import type { StateStore } from './types.js'

/** A store instance, or a `redis://` / `rediss://` address for a Redis store the package creates and closes. */
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
  if (option === undefined) return { store: new MemoryStateStore(), owned: true }
  if (isStateStore(option)) return { store: option, owned: false }
  if (typeof option !== 'string') {
    throw new OptionsError(optionName, 'must be a state store (setIfAbsent, set, get, take, delete, close) or a redis:// address')
  }
  if (!/^rediss?:\/\//.test(option)) {
    throw new OptionsError(optionName, `must be a redis:// or rediss:// address, got "${option.replace(/\/\/[^@/]*@/, '//***@')}"`)
  }
  const { RedisStateStore } = await import('./redis.js')
  try {
    return { store: new RedisStateStore(option, onError === undefined ? {} : { onError }), owned: true }
  } catch (err) {
    throw new OptionsError(optionName, (err as Error).message, { cause: err })
  }
}
