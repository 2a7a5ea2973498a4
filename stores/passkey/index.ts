import { OptionsError } from '../../lib/errors.js'
import { DriverMissingError } from '../../lib/optional-driver.js'
import { pathOf, schemeOf } from '../address.js'
import { LmdbPasskeyStore } from './lmdb.js'
import { MemoryPasskeyStore } from './memory.js'
import { RedisPasskeyStore } from './redis.js'
import { isPasskeyStore, type PasskeyStore } from './types.js'

export { LmdbPasskeyStore } from './lmdb.js'
export { MemoryPasskeyStore } from './memory.js'
export { RedisPasskeyStore, type RedisPasskeyStoreOptions } from './redis.js'
export { isPasskeyStore, PasskeyStoreError, type AddResult, type PasskeyCredential, type PasskeyStore } from './types.js'

/** A passkey store object, or the address of one the package opens and closes. */
export type PasskeyStoreOption = PasskeyStore | string

/** A store and whether the caller opened it (and so must close it). */
export interface OpenedPasskeyStore { store: PasskeyStore; owned: boolean }

/**
 * Opens the passkey store an option names, as the avatar store is chosen:
 * - `memory://` (also `undefined`): in memory, one process;
 * - `bolt:///abs/passkeys.db` or `bolt://./rel/passkeys.db`: one lmdb file;
 * - `redis://host:port/db`, `rediss://…`, `redis-cluster://host:port,…`, `redis-sentinel://host:port,…/<master>`:
 *   Redis (one server, a Cluster, a Sentinel-watched master), shared by every instance;
 * - any object with add, get, list, use, remove and close: used as given (its owner closes it).
 * Throws an OptionsError naming `optionName` for anything else (naming only the scheme: an address may hold a
 * password).
 */
export function openPasskeyStore (option: unknown, optionName: string, onError?: (err: Error) => void): OpenedPasskeyStore {
  if (option === undefined) return { store: new MemoryPasskeyStore(), owned: true }
  if (isPasskeyStore(option)) return { store: option, owned: false }
  if (typeof option !== 'string') throw new OptionsError(optionName, 'must be a passkey store (add, get, list, use, remove, close) or an address')
  const scheme = schemeOf(option)
  switch (scheme) {
    case 'memory':
      return { store: new MemoryPasskeyStore(), owned: true }
    case 'bolt':
    case 'lmdb': {
      let path: string
      try { path = pathOf(option) } catch { throw new OptionsError(optionName, `is a ${scheme}:// address without a file path`) }
      try {
        return { store: new LmdbPasskeyStore(path), owned: true }
      } catch (err) {
        throw err instanceof DriverMissingError ? err.forOption(optionName) : err
      }
    }
    case 'redis':
    case 'rediss':
    case 'redis-cluster':
    case 'rediss-cluster':
    case 'redis-sentinel':
    case 'rediss-sentinel':
      try {
        return { store: new RedisPasskeyStore(option, onError === undefined ? {} : { onError }), owned: true }
      } catch (err) {
        if (err instanceof DriverMissingError) throw err.forOption(optionName) // ioredis not installed
        if (!(err instanceof OptionsError)) throw err
        throw new OptionsError(optionName, `is not a valid Redis address: ${err.message.replace(/^.*?option "RedisStateStore" /, '')}`)
      }
    default:
      throw new OptionsError(optionName, `must be a memory://, bolt:// or redis:// address or a store object, got ${scheme === undefined ? 'a string that is not an address' : `a "${scheme}:" address`}`)
  }
}
