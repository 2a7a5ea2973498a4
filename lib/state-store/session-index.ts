/**
 * The session index: per user, the sessions the server knows of (for "where you're signed in" pages), kept in the
 * state store beside revocation. One entry per session, by its id (the `jti`, never the token), written at login,
 * merged at refresh and when a session is seen again (at most once a minute, batched by the caller). Bounded per
 * user (the least recently seen go first) and expiring with the sessions.
 *
 * Two implementations: the Redis one (session-index-redis.ts, one hash per user, atomic scripts) and this one
 * for any other store, which keeps one JSON value per user through `get`/`set`. Within one process its writes are
 * serialized per user; between processes sharing a store that is neither Redis nor memory, two writes for one user
 * at the same instant may lose one entry from the list (never a revocation).
 */
import type { StateStore } from './types.js'

/** One indexed session. Times in ms since the epoch. */
export interface IndexedSession {
  /** The session's `jti`. */
  id: string
  /** The provider that signed the user in, when known. */
  provider: string | null
  /** Login time (`auth_time`). */
  createdAt: number
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

/**
 * The pure merge both implementations follow (the Redis script does the same on the server): known sessions get
 * the later sighting, new ones are added when the sighting carries them, expired ones go, and past `max` the least
 * recently seen go. Returns the entries to keep.
 */
export function mergeSessions (entries: IndexedSession[], sightings: readonly SessionSighting[], now: number, max: number): IndexedSession[] {
  const byId = new Map(entries.filter((e) => e.expiresAt > now).map((e) => [e.id, e]))
  for (const s of sightings) {
    const known = byId.get(s.id)
    if (known !== undefined) {
      if (s.lastSeenAt > known.lastSeenAt) byId.set(s.id, { ...known, lastSeenAt: s.lastSeenAt, ip: s.ip ?? known.ip })
    } else if (s.create !== undefined && s.create.expiresAt > now) {
      byId.set(s.id, s.create)
    }
  }
  const kept = [...byId.values()]
  if (kept.length <= max) return kept
  return kept.sort((a, b) => b.lastSeenAt - a.lastSeenAt || b.createdAt - a.createdAt).slice(0, max)
}

/** Reads a stored list, dropping anything that is not an entry (a value written by something else). */
export function parseEntries (text: string | undefined): IndexedSession[] {
  if (text === undefined) return []
  let parsed: unknown
  try { parsed = JSON.parse(text) } catch { return [] }
  return Array.isArray(parsed) ? parsed.filter(isEntry) : []
}

export function isEntry (e: unknown): e is IndexedSession {
  const x = e as IndexedSession
  return x !== null && typeof x === 'object' && typeof x.id === 'string' && typeof x.createdAt === 'number' &&
    typeof x.lastSeenAt === 'number' && typeof x.expiresAt === 'number' && typeof x.device === 'string'
}

/** The index over any store's `get`/`set`: one JSON list per user, living as long as its longest session. */
export class KeyValueSessionIndex implements SessionIndex {
  /** The last write per user in this process: the next one waits for it (read-modify-write). */
  private readonly queues = new Map<string, Promise<unknown>>()

  constructor (private readonly store: StateStore) {}

  async merge (userId: string, sightings: readonly SessionSighting[], max: number): Promise<void> {
    await this.update(userId, (entries, now) => mergeSessions(entries, sightings, now, max))
  }

  async list (userId: string): Promise<IndexedSession[]> {
    const now = Date.now()
    return parseEntries(await this.store.get(indexKey(userId))).filter((e) => e.expiresAt > now)
  }

  async remove (userId: string, ids: readonly string[]): Promise<void> {
    const gone = new Set(ids)
    await this.update(userId, (entries, now) => entries.filter((e) => !gone.has(e.id) && e.expiresAt > now))
  }

  private async update (userId: string, change: (entries: IndexedSession[], now: number) => IndexedSession[]): Promise<void> {
    const before = this.queues.get(userId) ?? Promise.resolve()
    const run = before.catch(() => {}).then(async () => {
      const key = indexKey(userId)
      const now = Date.now()
      const kept = change(parseEntries(await this.store.get(key)), now)
      if (kept.length === 0) {
        await this.store.delete(key)
        return
      }
      const lastExpiry = Math.max(...kept.map((e) => e.expiresAt))
      await this.store.set(key, JSON.stringify(kept), lastExpiry - now)
    })
    this.queues.set(userId, run)
    try {
      await run
    } finally {
      if (this.queues.get(userId) === run) this.queues.delete(userId)
    }
  }
}

/** Redis stores are recognized by what the Redis index needs of them (so that this module does not load Redis). */
export interface RedisLike extends StateStore {
  readonly client: { eval: (...args: never[]) => unknown }
  readonly keyPrefix: string
  failureDetails(err: unknown): string
}

export function isRedisStore (store: StateStore): store is RedisLike {
  const s = store as Partial<RedisLike>
  return typeof s.client?.eval === 'function' && typeof s.keyPrefix === 'string' && typeof s.failureDetails === 'function'
}

/** One index per store object, so that instances sharing a store (in tests, one memory store) share its index. */
const opened = new WeakMap<StateStore, SessionIndex>()

/** The index on `store`: the Redis one on a Redis store, else one JSON list per user. */
export async function openSessionIndex (store: StateStore): Promise<SessionIndex> {
  let index = opened.get(store)
  if (index === undefined) {
    if (isRedisStore(store)) {
      const { RedisSessionIndex } = await import('./session-index-redis.js')
      index = new RedisSessionIndex(store)
    } else {
      index = new KeyValueSessionIndex(store)
    }
    opened.set(store, index)
  }
  return index
}
