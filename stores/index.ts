/**
 * `fastify-gatehouse/stores`: avatar stores (memory, file, lmdb, GridFS), state stores (memory, Redis), passkey
 * and TOTP stores (memory, lmdb, Redis), each family opened from an address by its opener (`openAvatarStore`,
 * `openStateStore`, `openPasskeyStore`, `openTotpStore`); `StoreError` when a store cannot answer.
 */
import { pathOf, schemeOf } from './address.js'
import { FileStore } from './file.js'
import { GridFsStore } from './gridfs.js'
import { LmdbStore } from './lmdb.js'
import { MemoryStore } from './memory.js'
import { isAvatarStore, type AvatarStore } from './types.js'
import { deprecatedFunction, warnDeprecated } from '../lib/deprecation.js'

export { FileStore } from './file.js'
export { GridFsStore, type GridFsLocation } from './gridfs.js'
export { LmdbStore } from './lmdb.js'
export { MemoryStore } from './memory.js'
export type { AvatarStore } from './types.js'
export { StoreError } from '../lib/state-store.js'
// State stores (one-time tokens, used OAuth2 states, pending logins), shared between instances through Redis.
export {
  MemoryStateStore, RedisStateStore, openStateStore,
  type MemoryStateStoreOptions, type RedisStateStoreOptions, type StateStore, type StateStoreOption,
  type WriteOptions, type IncrementOptions, type Counter
} from './state/index.js'
export type { Subscription, PublishOptions } from '../lib/state-store.js'
/** A Redis connection the stores take: an ioredis `Redis` or `Cluster`; a Cluster's node list. */
export type { RedisConnection } from './state/redis-client.js'
export type { RedisNode } from './state/redis-address.js'
// Passkey stores (user id → WebAuthn credentials), chosen by address like the avatar stores.
export {
  LmdbPasskeyStore, MemoryPasskeyStore, RedisPasskeyStore, openPasskeyStore,
  type AddResult, type PasskeyCredential, type PasskeyStore, type PasskeyStoreOption, type RedisPasskeyStoreOptions
} from './passkey/index.js'
// TOTP stores (user id → sealed authenticator secret and hashed recovery codes), chosen by address likewise.
export {
  LmdbTotpStore, MemoryTotpStore, RedisTotpStore, openTotpStore,
  type RedisTotpStoreOptions, type TotpEntry, type TotpStore, type TotpStoreOption
} from './totp/index.js'

// Until 1.0: the names this entry had before (docs/guide/upgrading.md); each is deprecated, the values warn once.
export {
  StateStoreError, PasskeyStoreError, TotpStoreError, isStateStore, isPasskeyStore, isTotpStore, isAvatarStore, isAvatarId, contentIdOf
} from './deprecated.js'
export {
  /** @deprecated Internal from 1.0 (the avatar proxy names avatars); goes in 1.0. */
  AVATAR_ID_RE
} from './types.js'
export type {
  /** @deprecated Internal from 1.0 (what `openPasskeyStore` answers: `{ store, owned }`); goes in 1.0. */
  OpenedPasskeyStore
} from './passkey/index.js'
export type {
  /** @deprecated Internal from 1.0 (what `openTotpStore` answers: `{ store, owned }`); goes in 1.0. */
  OpenedTotpStore
} from './totp/index.js'

/**
 * Opens the avatar store an address names, or returns a store object unchanged:
 * - `memory://` (also `undefined`): in-memory;
 * - `file:///abs/path`, `file://./rel/path` or a plain path: one file per avatar;
 * - `bolt:///abs/file.db` or `bolt://./rel/file.db`: one lmdb file;
 * - `mongodb://` / `mongodb+srv://…?ava_db=&ava_coll=`: MongoDB GridFS;
 * - any object with put/get/id/remove/list/close.
 * Throws a TypeError naming the problem for anything else.
 */
export function openAvatarStore (address?: string | AvatarStore): AvatarStore {
  if (address === undefined) return new MemoryStore()
  if (typeof address !== 'string') {
    if (isAvatarStore(address)) return address
    throw new TypeError('avatar store must be an address string or an object with put, get, id, remove, list and close')
  }
  const scheme = schemeOf(address)
  switch (scheme) {
    case undefined:
      if (address.trim() === '') throw new TypeError('avatar store address is empty')
      return new FileStore(address)
    case 'memory':
    case 'mem':
      return new MemoryStore()
    case 'file':
      return new FileStore(pathOf(address))
    case 'bolt':
    case 'lmdb':
      return new LmdbStore(pathOf(address))
    case 'mongodb':
    case 'mongodb+srv':
      return GridFsStore.fromAddress(address)
    default:
      throw new TypeError(`avatar store address scheme "${scheme}:" is not supported (use memory://, file://, bolt://, mongodb:// or a path)`)
  }
}

/**
 * The seed's name of `openAvatarStore` (go-pkgz/auth's `avatar.NewStore`).
 * @deprecated Use `openAvatarStore`: the state store and the passkey store are stores too; goes in 1.0.
 */
export const newStore: typeof openAvatarStore = deprecatedFunction(() => { warnDeprecated('newStore') }, openAvatarStore)

/**
 * Copies every avatar from one store to another (addresses are opened and closed here; store objects are
 * left open). Returns the number copied; ids that vanish while copying are skipped.
 */
export async function migrateAvatars (from: string | AvatarStore, to: string | AvatarStore): Promise<number> {
  const source = openAvatarStore(from)
  let target: AvatarStore | undefined
  try {
    target = openAvatarStore(to)
    let copied = 0
    for (const id of await source.list()) {
      const bytes = await source.get(id)
      if (bytes === null) continue
      await target.put(id, bytes)
      copied++
    }
    return copied
  } finally {
    if (typeof to === 'string' && target !== undefined) await target.close()
    if (typeof from === 'string') await source.close()
  }
}
