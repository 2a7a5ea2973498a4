/**
 * The one opener of a store from an option, for the store families that take these addresses (the state store,
 * passkeys, TOTP secrets): `memory://` (also undefined), `bolt:///abs/file.db` or `lmdb://…` (one lmdb file, for a
 * family that has one), any Redis address (`redis://`, `rediss://`, `redis-cluster://`, `redis-sentinel://`, shared
 * by every instance), or a store object used as given. Every refusal is an OptionsError naming the option and at most the address's
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
  /** The store of a `bolt://` or `lmdb://` address; a family without one refuses them. */
  readonly lmdb?: ((path: string) => S) | undefined
  /** The store of a Redis address; a family without one refuses them. */
  readonly redis?: ((address: string, options: { onError?: ((err: Error) => void) | undefined }) => S) | undefined
  /** The addresses the family takes, for its refusals (`memory://, redis://, …`); default: memory://, bolt:// or Redis. */
  readonly addressList?: string | undefined
}

/** A store and whether the caller opened it (and so must close it). */
export interface OpenedStore<S> { store: S; owned: boolean }

/** Opens the store of `family` that `option` names; throws an OptionsError naming `optionName` for anything else. */
export function openStore<S> (family: StoreFamily<S>, option: unknown, optionName: string, onError?: (err: Error) => void): OpenedStore<S> {
  if (option === undefined) return { store: family.memory(), owned: true }
  if (family.isStore(option)) return { store: option, owned: false }
  const list = family.addressList
  if (typeof option !== 'string') throw new OptionsError(optionName, `must be a ${family.kind} or an address${list === undefined ? '' : ` (${list})`}`)
  const scheme = schemeOf(option)
  if (scheme === 'memory') return { store: family.memory(), owned: true }
  const lmdb = family.lmdb
  if ((scheme === 'bolt' || scheme === 'lmdb') && lmdb !== undefined) {
    let path: string
    try { path = pathOf(option) } catch { throw new OptionsError(optionName, `is a ${scheme}:// address without a file path`) }
    return { store: opened(() => lmdb(path), optionName, false), owned: true }
  }
  const redis = family.redis
  if (isRedisAddress(option) && redis !== undefined) {
    return { store: opened(() => redis(option, onError === undefined ? {} : { onError }), optionName, true), owned: true }
  }
  // Only the scheme is named: the rest of an address may hold a password.
  const refused = list === undefined ? 'must be a memory://, bolt:// or Redis address or a store object' : `must be an address (${list})`
  throw new OptionsError(optionName, `${refused}, got ${scheme === undefined ? 'a string that is not an address' : `a "${scheme}:" address`}`)
}

/** Runs a store's constructor, its errors put in terms of the option. */
function opened<S> (create: () => S, optionName: string, redis: boolean): S {
  try {
    return create()
  } catch (err) {
    if (err instanceof DriverMissingError) throw err.forOption(optionName) // the store's driver is not installed
    if (!redis || !(err instanceof OptionsError) || err.option === optionName) throw err
    // The Redis store's own reason says why, never naming the address (nor any password in it); it is not kept
    // as the cause, so that this error stays the store option's.
    throw new OptionsError(optionName, `is not a valid Redis address: ${err.reason}`)
  }
}
