import type { Redis } from 'ioredis'
import { RedisStateStore, type RedisStateStoreOptions } from '../state/redis.js'
import type { RedisConnection } from '../state/redis-client.js'
import type { RedisNode } from '../state/redis-address.js'
import {
  byCreation, checkCredential, checkId, checkUserId, decodeStored, encodeFixed, PasskeyStoreError,
  type AddResult, type PasskeyCredential, type PasskeyStore
} from './types.js'

/** Options of the Redis passkey store: those of the Redis state store (key prefix, command timeout, error report). */
export type RedisPasskeyStoreOptions = RedisStateStoreOptions

// Each step is one script, so it runs whole on the server and two instances can never both win. A credential and
// its user's list are two entities (two hash tags, on a Cluster two slots): adding lists the id first, within the
// limit, then creates the credential; removing deletes the credential, then unlists it. A step lost between the
// two leaves at most an id listed without a credential, which `list` skips.
// KEYS: user set. ARGV: limit, credential id. Returns 'listed' (added now), 'member' (listed already) or 'full'.
const LIST = `
if redis.call('SISMEMBER', KEYS[1], ARGV[2]) == 1 then return 'member' end
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 'full' end
redis.call('SADD', KEYS[1], ARGV[2])
return 'listed'`
// KEYS: credential hash. ARGV: fixed part, user id, counter, last use or ''.
const CREATE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 'exists' end
redis.call('HSET', KEYS[1], 'fixed', ARGV[1], 'user', ARGV[2], 'counter', ARGV[3])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'lastUsed', ARGV[4]) end
return 'added'`
// KEYS: credential hash. ARGV: expected counter, new counter, last use.
const USE = `
local c = redis.call('HGET', KEYS[1], 'counter')
if not c or c ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'counter', ARGV[2], 'lastUsed', ARGV[3])
return 1`
// KEYS: credential hash. ARGV: user id. Returns 1 deleted, 0 another user's, -1 none.
const DELETE = `
local owner = redis.call('HGET', KEYS[1], 'user')
if not owner then return -1 end
if owner ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1`

/**
 * Passkeys in Redis (any Redis store address: `redis://host:port/db`, `redis-cluster://…`, `redis-sentinel://…`),
 * for several instances behind one URL. A credential is a hash (fixed part, owner, counter, last use), each user a
 * set of ids. The connection is the one the Redis state store makes (ioredis loaded only
 * then, tuned to fail fast while Redis is down); given an ioredis client (`Redis` or `Cluster`), the store uses it
 * and leaves closing it to the caller. Keys carry the hash tag of their entity (`<prefix>passkey:{c:<id>}`,
 * `<prefix>passkey:{u:<user id>}`), so on a Redis Cluster they spread over all slots and each script touches one.
 */
export class RedisPasskeyStore implements PasskeyStore {
  readonly client: RedisConnection
  private readonly cmd: Redis
  private readonly connection: RedisStateStore
  private readonly prefix: string

  constructor (clientOrUrl: RedisConnection | string | Array<RedisNode | string>, opts: RedisPasskeyStoreOptions = {}) {
    this.connection = new RedisStateStore(clientOrUrl, opts)
    this.client = this.connection.client
    // A Cluster has the same commands, routed by key slot.
    this.cmd = this.client as Redis
    this.prefix = `${opts.keyPrefix ?? 'gatehouse:'}passkey:`
  }

  async add (credential: PasskeyCredential, limit: number): Promise<AddResult> {
    checkCredential(credential)
    const { id, userId } = credential
    const listed = await this.run(() => this.cmd.eval(LIST, 1, this.userKey(userId), String(limit), id))
    if (listed === 'full') return 'full'
    if (listed !== 'listed' && listed !== 'member') throw this.unexpected(listed)
    let r: unknown
    try {
      r = await this.run(() => this.cmd.eval(CREATE, 1, this.credKey(id), encodeFixed(credential), userId,
        String(credential.counter), credential.lastUsed === undefined ? '' : String(credential.lastUsed)))
    } catch (err) {
      if (listed === 'listed') this.unlist(userId, id)
      throw err
    }
    // The id is another credential's (or this user's already): what this call listed is taken back.
    if (r === 'exists' && listed === 'listed') this.unlist(userId, id)
    if (r === 'added' || r === 'exists') return r
    throw this.unexpected(r)
  }

  async get (id: string): Promise<PasskeyCredential | undefined> {
    checkId(id)
    const [fixed, counter, lastUsed] = await this.run(() => this.cmd.hmget(this.credKey(id), 'fixed', 'counter', 'lastUsed'))
    if (fixed === null || fixed === undefined) return undefined
    return decodeStored(fixed, Number(counter), lastUsed === null || lastUsed === undefined ? undefined : Number(lastUsed))
  }

  async list (userId: string): Promise<PasskeyCredential[]> {
    checkUserId(userId)
    const ids = await this.run(() => this.cmd.smembers(this.userKey(userId)))
    const out: PasskeyCredential[] = []
    for (const id of ids) {
      const c = await this.get(id)
      // A credential removed between the two reads is simply gone.
      if (c !== undefined && c.userId === userId) out.push(c)
    }
    return out.sort(byCreation)
  }

  async use (id: string, expected: number, counter: number, lastUsed: number): Promise<boolean> {
    checkId(id)
    const r = await this.run(() => this.cmd.eval(USE, 1, this.credKey(id), String(expected), String(counter), String(lastUsed)))
    return r === 1
  }

  async remove (userId: string, id: string): Promise<boolean> {
    checkUserId(userId)
    checkId(id)
    const r = await this.run(() => this.cmd.eval(DELETE, 1, this.credKey(id), userId))
    if (r === 0) return false
    // Unlisted after the credential is gone (also an id a lost step left listed without a credential).
    await this.run(() => this.cmd.srem(this.userKey(userId), id))
    return r === 1
  }

  async close (): Promise<void> {
    await this.connection.close()
  }

  private credKey (id: string): string { return `${this.prefix}{c:${id}}` }
  private userKey (userId: string): string { return `${this.prefix}{u:${userId}}` }

  /** Takes back an id this call listed (not awaited: failing, it stays listed without a credential, skipped). */
  private unlist (userId: string, id: string): void {
    this.cmd.srem(this.userKey(userId), id).catch(() => {})
  }

  private unexpected (answer: unknown): PasskeyStoreError {
    return new PasskeyStoreError(this.connection.failureDetails(new Error(`unexpected answer to a passkey script: ${JSON.stringify(answer)}`)))
  }

  private async run<T> (op: () => Promise<T>): Promise<T> {
    try {
      return await op()
    } catch (err) {
      // Redis's own text (hosts, keys, slots) goes to the log once, never into the 503.
      throw new PasskeyStoreError(this.connection.failureDetails(err), { cause: err })
    }
  }
}
