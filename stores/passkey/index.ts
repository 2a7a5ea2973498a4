import { openStore, type StoreFamily } from '../open-store.js'
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

const PASSKEY_STORES: StoreFamily<PasskeyStore> = {
  kind: 'passkey store (add, get, list, use, remove, close)',
  isStore: isPasskeyStore,
  memory: () => new MemoryPasskeyStore(),
  lmdb: (path) => new LmdbPasskeyStore(path),
  redis: (address, options) => new RedisPasskeyStore(address, options)
}

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
  return openStore(PASSKEY_STORES, option, optionName, onError)
}
