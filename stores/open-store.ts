/**
 * Opening a store from an option, for the store families that take the same addresses (passkeys, TOTP secrets):
 * `memory://` (also undefined), `bolt:///abs/file.db` or `lmdb://…` (one lmdb file), any Redis address of the
 * state store (`redis://`, `rediss://`, `redis-cluster://`, `redis-sentinel://`, shared by every instance), or a
 * store object used as given. Every refusal is an OptionsError naming the option and at most the address's
 * scheme (an address may hold a password).
 */
import { OptionsError } from '../lib/errors.js'
import { DriverMissingError } from '../lib/optional-driver.js'
import { isRedisAddress } from './state/redis-address.js'
import { pathOf, schemeOf } from './address.js'

/** A family of stores, as `openStore` needs to know it. */
export interface StoreFamily<S> {
  /** What a store object must have, for the error about a value that is neither: `passkey store (add, get, …)`. */
  readonly kind: string
  readonly isStore: (value: unknown) => value is S
  readonly memory: () => S
  readonly lmdb: (path: string) => S
  readonly redis: (address: string, options: { onError?: ((err: Error) => void) | undefined }) => S
}

/** A store and whether the caller opened it (and so must close it). */
export interface OpenedStore<S> { store: S; owned: boolean }

/** Opens the store of `family` that `option` names; throws an OptionsError naming `optionName` for anything else. */
export function openStore<S> (family: StoreFamily<S>, option: unknown, optionName: string, onError?: (err: Error) => void): OpenedStore<S> {
  if (option === undefined) return { store: family.memory(), owned: true }
  if (family.isStore(option)) return { store: option, owned: false }
  if (typeof option !== 'string') throw new OptionsError(optionName, `must be a ${family.kind} or an address`)
  const scheme = schemeOf(option)
  if (scheme === 'memory') return { store: family.memory(), owned: true }
  if (scheme === 'bolt' || scheme === 'lmdb') {
    let path: string
    try { path = pathOf(option) } catch { throw new OptionsError(optionName, `is a ${scheme}:// address without a file path`) }
    return { store: opened(() => family.lmdb(path), optionName, false), owned: true }
  }
  if (isRedisAddress(option)) {
    return { store: opened(() => family.redis(option, onError === undefined ? {} : { onError }), optionName, true), owned: true }
  }
  throw new OptionsError(optionName, `must be a memory://, bolt:// or Redis address or a store object, got ${scheme === undefined ? 'a string that is not an address' : `a "${scheme}:" address`}`)
}

/** Runs a store's constructor, its errors put in terms of the option. */
function opened<S> (create: () => S, optionName: string, redis: boolean): S {
  try {
    return create()
  } catch (err) {
    if (err instanceof DriverMissingError) throw err.forOption(optionName) // the store's driver is not installed
    if (!redis || !(err instanceof OptionsError) || err.option === optionName) throw err
    // The Redis store's own message names its option and why, never the address.
    throw new OptionsError(optionName, `is not a valid Redis address: ${err.reason}`)
  }
}
