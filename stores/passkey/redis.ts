import type { Redis } from 'ioredis'
import { RedisStateStore, type RedisStateStoreOptions } from '../../lib/state-store/redis.js'
import {
  byCreation, checkCredential, checkId, checkUserId, decodeStored, encodeFixed, PasskeyStoreError,
  type AddResult, type PasskeyCredential, type PasskeyStore
} from './types.js'

/** Options of the Redis passkey store: those of the Redis state store (key prefix, command timeout, error report). */
export type RedisPasskeyStoreOptions = RedisStateStoreOptions

// Each change is one script, so it runs whole on the server and two instances can never both win.
// KEYS: credential hash, user set. ARGV: fixed part, user id, counter, limit, credential id, last use or ''.
const ADD = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 'exists' end
if redis.call('SCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 'full' end
redis.call('HSET', KEYS[1], 'fixed', ARGV[1], 'user', ARGV[2], 'counter', ARGV[3])
if ARGV[6] ~= '' then redis.call('HSET', KEYS[1], 'lastUsed', ARGV[6]) end
redis.call('SADD', KEYS[2], ARGV[5])
return 'added'`
// KEYS: credential hash. ARGV: expected counter, new counter, last use.
const USE = `
local c = redis.call('HGET', KEYS[1], 'counter')
if not c or c ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'counter', ARGV[2], 'lastUsed', ARGV[3])
return 1`
// KEYS: credential hash, user set. ARGV: user id, credential id.
const REMOVE = `
if redis.call('HGET', KEYS[1], 'user') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[2])
return 1`

/**
 * Passkeys in Redis (`redis://host:port/db`), for several instances behind one URL. A credential is a hash
 * (`<prefix>passkey:c:<id>`: fixed part, owner, counter, last use), each user a set of ids
 * (`<prefix>passkey:u:<user id>`). The connection is the one the Redis state store makes (ioredis loaded only
 * then, tuned to fail fast while Redis is down); given an ioredis client, the store uses it and leaves closing it
 * to the caller. The scripts touch two keys, so on Redis Cluster both must hash to one slot (a `{…}` key prefix).
 */
export class RedisPasskeyStore implements PasskeyStore {
  readonly client: Redis
  private readonly connection: RedisStateStore
  private readonly prefix: string

  constructor (clientOrUrl: Redis | string, opts: RedisPasskeyStoreOptions = {}) {
    this.connection = new RedisStateStore(clientOrUrl, opts)
    this.client = this.connection.client
    this.prefix = `${opts.keyPrefix ?? 'gatehouse:'}passkey:`
  }

  async add (credential: PasskeyCredential, limit: number): Promise<AddResult> {
    checkCredential(credential)
    const r = await this.run(() => this.client.eval(ADD, 2, this.credKey(credential.id), this.userKey(credential.userId),
      encodeFixed(credential), credential.userId, String(credential.counter), String(limit), credential.id,
      credential.lastUsed === undefined ? '' : String(credential.lastUsed)))
    if (r === 'added' || r === 'exists' || r === 'full') return r
    throw new PasskeyStoreError(this.connection.failureDetails(new Error(`unexpected answer to a passkey script: ${JSON.stringify(r)}`)))
  }

  async get (id: string): Promise<PasskeyCredential | undefined> {
    checkId(id)
    const [fixed, counter, lastUsed] = await this.run(() => this.client.hmget(this.credKey(id), 'fixed', 'counter', 'lastUsed'))
    if (fixed === null || fixed === undefined) return undefined
    return decodeStored(fixed, Number(counter), lastUsed === null || lastUsed === undefined ? undefined : Number(lastUsed))
  }

  async list (userId: string): Promise<PasskeyCredential[]> {
    checkUserId(userId)
    const ids = await this.run(() => this.client.smembers(this.userKey(userId)))
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
    const r = await this.run(() => this.client.eval(USE, 1, this.credKey(id), String(expected), String(counter), String(lastUsed)))
    return r === 1
  }

  async remove (userId: string, id: string): Promise<boolean> {
    checkUserId(userId)
    checkId(id)
    const r = await this.run(() => this.client.eval(REMOVE, 2, this.credKey(id), this.userKey(userId), userId, id))
    return r === 1
  }

  async close (): Promise<void> {
    await this.connection.close()
  }

  private credKey (id: string): string { return `${this.prefix}c:${id}` }
  private userKey (userId: string): string { return `${this.prefix}u:${userId}` }

  private async run<T> (op: () => Promise<T>): Promise<T> {
    try {
      return await op()
    } catch (err) {
      // Redis's own text (hosts, keys, slots) goes to the log once, never into the 503.
      throw new PasskeyStoreError(this.connection.failureDetails(err), { cause: err })
    }
  }
}
