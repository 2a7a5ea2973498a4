import { openStore, type StoreFamily } from '../open-store.js'
import { LmdbTotpStore } from './lmdb.js'
import { MemoryTotpStore } from './memory.js'
import { RedisTotpStore } from './redis.js'
import { isTotpStore, type TotpStore } from './types.js'

export { LmdbTotpStore } from './lmdb.js'
export { MemoryTotpStore } from './memory.js'
export { RedisTotpStore, type RedisTotpStoreOptions } from './redis.js'
export { isTotpStore, TotpStoreError, type TotpEntry, type TotpStore } from './types.js'

/** A TOTP store object, or the address of one the package opens and closes. */
export type TotpStoreOption = TotpStore | string

/** A store and whether the caller opened it (and so must close it). */
export interface OpenedTotpStore { store: TotpStore; owned: boolean }

const TOTP_STORES: StoreFamily<TotpStore> = {
  kind: 'totp store (get, enrol, confirm, remove, setRecovery, useRecovery, recoveryLeft, keyCheck, close)',
  isStore: isTotpStore,
  memory: () => new MemoryTotpStore(),
  lmdb: (path) => new LmdbTotpStore(path),
  redis: (address, options) => new RedisTotpStore(address, options)
}

/**
 * Opens the TOTP store an option names, as the passkey store is chosen: `memory://` (also undefined),
 * `bolt:///abs/totp.db` (one lmdb file), any Redis address of the state store (`redis://`, `rediss://`,
 * `redis-cluster://`, `redis-sentinel://`; shared), or any TotpStore object (used as given).
 * Throws an OptionsError naming `optionName` for anything else.
 */
export function openTotpStore (option: unknown, optionName: string, onError?: (err: Error) => void): OpenedTotpStore {
  return openStore(TOTP_STORES, option, optionName, onError)
}
