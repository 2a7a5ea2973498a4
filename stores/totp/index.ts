import { OptionsError } from '../../lib/errors.js'
import { DriverMissingError } from '../../lib/optional-driver.js'
import { pathOf, schemeOf } from '../address.js'
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

/**
 * Opens the TOTP store an option names, as the passkey store is chosen: `memory://` (also undefined),
 * `bolt:///abs/totp.db` (one lmdb file), any Redis address of the state store (`redis://`, `rediss://`,
 * `redis-cluster://`, `redis-sentinel://`; shared), or any TotpStore object (used as given).
 * Throws an OptionsError naming `optionName` for anything else.
 */
export function openTotpStore (option: unknown, optionName: string, onError?: (err: Error) => void): OpenedTotpStore {
  if (option === undefined) return { store: new MemoryTotpStore(), owned: true }
  if (isTotpStore(option)) return { store: option, owned: false }
  if (typeof option !== 'string') throw new OptionsError(optionName, 'must be a totp store (get, enrol, confirm, remove, setRecovery, useRecovery, recoveryLeft, keyCheck, close) or an address')
  const scheme = schemeOf(option)
  try {
    switch (scheme) {
      case 'memory':
        return { store: new MemoryTotpStore(), owned: true }
      case 'bolt':
      case 'lmdb':
        return { store: new LmdbTotpStore(filePath(option, scheme, optionName)), owned: true }
      case 'redis':
      case 'rediss':
      case 'redis-cluster':
      case 'rediss-cluster':
      case 'redis-sentinel':
      case 'rediss-sentinel':
        return { store: new RedisTotpStore(option, onError === undefined ? {} : { onError }), owned: true }
    }
  } catch (err) {
    if (err instanceof DriverMissingError) throw err.forOption(optionName)
    if (err instanceof OptionsError && err.option === optionName) throw err
    if (err instanceof OptionsError) throw new OptionsError(optionName, `is not a valid ${String(scheme)}:// address`)
    throw err
  }
  throw new OptionsError(optionName, `must be a memory://, bolt:// or Redis address or a store object, got ${scheme === undefined ? 'a string that is not an address' : `a "${scheme}:" address`}`)
}

function filePath (option: string, scheme: string, optionName: string): string {
  try { return pathOf(option) } catch { throw new OptionsError(optionName, `is a ${scheme}:// address without a file path`) }
}
