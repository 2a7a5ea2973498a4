/**
 * The session index on Redis: one hash per user (`<prefix>sessions:{<user id>}`, field: session id, value: the
 * entry as JSON). Every operation touches that one key, so it is atomic and stays in one slot on a Redis Cluster.
 * The hash lives as long as its longest-lived session; merges that add a session drop expired entries and, past
 * the bound, the least recently seen.
 */
import { StateStoreError } from '../../lib/state-store.js'
import { indexKey, isEntry, type IndexedSession, type RedisLike, type SessionIndex, type SessionSighting } from './session-index-entry.js'

/**
 * KEYS: the user's hash. ARGV: now (ms), most entries kept, the sightings as JSON (`SessionSighting[]`).
 * A sighting of a known session moves its last-seen time forward (and its address); one of an unknown session
 * adds it only when it carries `create` (a sighting never resurrects a session removed or dropped meanwhile).
 */
export const MERGE_SCRIPT = `
local now = tonumber(ARGV[1])
local max = tonumber(ARGV[2])
local added = false
for _, s in ipairs(cjson.decode(ARGV[3])) do
  local cur = redis.call('HGET', KEYS[1], s.id)
  if cur then
    local ok, e = pcall(cjson.decode, cur)
    if ok and type(e) == 'table' and type(e.lastSeenAt) == 'number' and s.lastSeenAt > e.lastSeenAt then
      e.lastSeenAt = s.lastSeenAt
      if s.ip ~= cjson.null then e.ip = s.ip end
      redis.call('HSET', KEYS[1], s.id, cjson.encode(e))
    end
  elseif type(s.create) == 'table' and s.create.expiresAt > now then
    redis.call('HSET', KEYS[1], s.id, cjson.encode(s.create))
    added = true
  end
end
if not added then return 0 end
local all = redis.call('HGETALL', KEYS[1])
local live = {}
local last = 0
for i = 1, #all, 2 do
  local ok, e = pcall(cjson.decode, all[i + 1])
  if ok and type(e) == 'table' and type(e.expiresAt) == 'number' and e.expiresAt > now and type(e.lastSeenAt) == 'number' then
    live[#live + 1] = { id = all[i], seen = e.lastSeenAt, created = tonumber(e.createdAt) or 0 }
    if e.expiresAt > last then last = e.expiresAt end
  else
    redis.call('HDEL', KEYS[1], all[i])
  end
end
if #live > max then
  table.sort(live, function (a, b)
    if a.seen ~= b.seen then return a.seen > b.seen end
    return a.created > b.created
  end)
  for i = max + 1, #live do redis.call('HDEL', KEYS[1], live[i].id) end
end
if last > now then redis.call('PEXPIRE', KEYS[1], math.ceil(last - now)) end
return 1
`

export class RedisSessionIndex implements SessionIndex {
  constructor (private readonly store: RedisLike) {}

  async merge (userId: string, sightings: readonly SessionSighting[], max: number): Promise<void> {
    if (sightings.length === 0) return
    await this.run(async () => await this.client().eval(MERGE_SCRIPT, 1, this.key(userId), Date.now(), max, JSON.stringify(sightings)))
  }

  async list (userId: string): Promise<IndexedSession[]> {
    const all = await this.run(async () => await this.client().hgetall(this.key(userId)))
    const now = Date.now()
    const out: IndexedSession[] = []
    for (const text of Object.values(all)) {
      let e: unknown
      try { e = JSON.parse(text) } catch { continue }
      if (isEntry(e) && e.expiresAt > now) out.push({ ...e, provider: e.provider ?? null, ip: e.ip ?? null })
    }
    return out
  }

  async remove (userId: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return
    await this.run(async () => await this.client().hdel(this.key(userId), ...ids))
  }

  private key (userId: string): string { return this.store.keyPrefix + indexKey(userId) }

  private client (): RedisCommands { return this.store.client as unknown as RedisCommands }

  /** The store's 503 for a command Redis did not answer or refused (never Redis's own text). */
  private async run<T> (op: () => Promise<T>): Promise<T> {
    try {
      return await op()
    } catch (err) {
      throw new StateStoreError(this.store.failureDetails(err), { cause: err })
    }
  }
}

/** The commands of an ioredis client (single or Cluster) this index sends. */
interface RedisCommands {
  eval(script: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>
  hgetall(key: string): Promise<Record<string, string>>
  hdel(key: string, ...fields: string[]): Promise<number>
}
