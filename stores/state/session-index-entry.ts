/**
 * What both session indexes share (session-index.ts, session-index-redis.ts): the entry, the sighting, the
 * interface, the key of a user's index.
 */
import type { StateStore } from '../../lib/state-store.js'

/** One indexed session. Times in ms since the epoch. */
export interface IndexedSession {
  /** The session's `jti`. */
  id: string
  /** The provider that signed the user in, when known. */
  provider: string | null
  /** Login time (`auth_time`). */
  createdAt: number
  /** When the session started on this service, when later than its login (`started_at`): the revocation epoch's. */
  startedAt?: number | undefined
  lastSeenAt: number
  /** When the session can no longer be accepted (its absolute lifetime). */
  expiresAt: number
  /** The client's user agent reduced to a label ("Firefox on Linux"). */
  device: string
  /** The address as the throttle sees it, its hash, or null (`revocation.sessionList.ip`). */
  ip: string | null
}

/** A merge into the index: the session was seen (`lastSeenAt`, `ip`); `create` adds it when it is not there. */
export interface SessionSighting {
  id: string
  lastSeenAt: number
  ip: string | null
  create?: IndexedSession | undefined
}

export interface SessionIndex {
  /** Merges sightings of one user's sessions (creating those that carry `create`), then keeps at most `max`. */
  merge(userId: string, sightings: readonly SessionSighting[], max: number): Promise<void>
  /** The user's unexpired sessions (in no particular order). */
  list(userId: string): Promise<IndexedSession[]>
  /** Removes sessions from the user's index. */
  remove(userId: string, ids: readonly string[]): Promise<void>
}

/** Key of a user's index: the user part in braces, so that a Redis Cluster keeps it in one slot. */
export const indexKey = (userId: string): string => `sessions:{${userId}}`

export function isEntry (e: unknown): e is IndexedSession {
  const x = e as IndexedSession
  return x !== null && typeof x === 'object' && typeof x.id === 'string' && typeof x.createdAt === 'number' &&
    typeof x.lastSeenAt === 'number' && typeof x.expiresAt === 'number' && typeof x.device === 'string'
}

/** Redis stores are recognized by what the Redis index needs of them (so that the index chooser does not load Redis). */
export interface RedisLike extends StateStore {
  readonly client: { eval: (...args: never[]) => unknown }
  readonly keyPrefix: string
  failureDetails(err: unknown): string
}

