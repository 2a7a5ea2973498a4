import { createHash } from 'node:crypto'

/**
 * Where avatars live. Every built-in store implements it, and any object with these six methods can be passed
 * wherever a store is accepted. Methods may be sync or async; callers always await them.
 *
 * Ids are avatar ids (`[A-Za-z0-9_-]`, 1..64 characters; the avatar proxy uses the sha1 hex of the user id).
 * `get`/`id` answer null for an id that is unknown or not a valid id; `put`/`remove` reject invalid ids.
 */
export interface AvatarStore {
  /** Stores (or replaces) the avatar's bytes; returns its content id. */
  put(id: string, bytes: Uint8Array): Promise<string> | string
  /** The avatar's bytes, or null when there is none. */
  get(id: string): Promise<Uint8Array | null> | Uint8Array | null
  /** Content id of the stored bytes (changes whenever they change; used as the ETag), or null when absent. */
  id(id: string): Promise<string | null> | string | null
  /** Deletes the avatar; removing an unknown id is not an error. */
  remove(id: string): Promise<void> | void
  /** Every stored avatar id. */
  list(): Promise<string[]> | string[]
  /** Releases files, handles and connections. */
  close(): Promise<void> | void
}

/** The one shape an avatar id may have, in every store and in the serving route. */
export const AVATAR_ID_RE = /^[A-Za-z0-9_-]{1,64}$/

export function isAvatarId (id: unknown): id is string {
  return typeof id === 'string' && AVATAR_ID_RE.test(id)
}

/** Throws for an id no store may hold: a path separator or `..` must never reach a file name or a query. */
export function assertAvatarId (id: unknown): asserts id is string {
  if (!isAvatarId(id)) throw new TypeError(`invalid avatar id ${JSON.stringify(String(id).slice(0, 80))}`)
}

/** Content id of bytes: sha1 hex (an ETag, not a security boundary). */
export function contentIdOf (bytes: Uint8Array): string {
  return createHash('sha1').update(bytes).digest('hex')
}

/** True for any object carrying the six store methods. */
export function isAvatarStore (value: unknown): value is AvatarStore {
  if (value === null || typeof value !== 'object') return false
  const v = value as Record<string, unknown>
  return ['put', 'get', 'id', 'remove', 'list', 'close'].every((m) => typeof v[m] === 'function')
}
