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
import type { StateStore } from '../../lib/state-store.js'
import { indexKey, isEntry, type IndexedSession, type RedisLike, type SessionIndex, type SessionSighting } from './session-index-entry.js'

export { indexKey, isEntry, type IndexedSession, type RedisLike, type SessionIndex, type SessionSighting } from './session-index-entry.js'

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

/** True for a Redis state store (recognized by shape, so that choosing an index does not load Redis). */
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
