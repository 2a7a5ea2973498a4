import type { RedisConnection } from '../state/redis-client.js'
import type { RedisNode } from '../state/redis-address.js'
import { RedisStateStore, type RedisStateStoreOptions } from '../state/redis.js'
import { checkEntry, checkHashes, checkUserId, decodeEntry, encodeEntry, TotpStoreError, type TotpEntry, type TotpStore } from './types.js'

/** Options of the Redis TOTP store: those of the Redis state store (key prefix, command timeout, error report). */
export type RedisTotpStoreOptions = RedisStateStoreOptions

// Each change is one script, so it runs whole on the server and two instances can never both win.
// KEYS: entry. ARGV: new unconfirmed entry.
const ENROL = `
local e = redis.call('GET', KEYS[1])
if e and cjson.decode(e).confirmed == true then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
return 1`
// KEYS: entry, recovery set. ARGV: expected unconfirmed entry text, confirmed entry text, hashes…
const CONFIRM = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('DEL', KEYS[2])
for i = 3, #ARGV do redis.call('SADD', KEYS[2], ARGV[i]) end
return 1`
// KEYS: recovery set. ARGV: hashes…
const REPLACE = `
redis.call('DEL', KEYS[1])
for i = 1, #ARGV do redis.call('SADD', KEYS[1], ARGV[i]) end
return 1`
// KEYS: recovery set. ARGV: hash.
const SPEND = `
if redis.call('SREM', KEYS[1], ARGV[1]) == 0 then return -1 end
return redis.call('SCARD', KEYS[1])`

/**
 * TOTP secrets and recovery codes in Redis (any Redis address of the state store: one server, a Cluster, Sentinel),
 * shared by every instance: an entry is a string (`<prefix>totp:{<user id>}:e`), the recovery code hashes a set
 * (`<prefix>totp:{<user id>}:r`), the key check `<prefix>totp:{keycheck}`. The two keys of a user share one hash
 * tag, so every script stays in one slot of a Cluster. The connection is the one the Redis state store makes;
 * given an ioredis client, the store uses it and leaves closing it to the caller.
 */
export class RedisTotpStore implements TotpStore {
  readonly client: RedisConnection
  private readonly connection: RedisStateStore
  private readonly prefix: string

  constructor (clientOrUrl: RedisConnection | string | Array<RedisNode | string>, opts: RedisTotpStoreOptions = {}) {
    this.connection = new RedisStateStore(clientOrUrl, opts)
    this.client = this.connection.client
    this.prefix = `${opts.keyPrefix ?? 'gatehouse:'}totp:`
  }

  async get (userId: string): Promise<TotpEntry | undefined> {
    checkUserId(userId)
    const text = await this.run(() => this.client.get(this.entryKey(userId)))
    return text === null ? undefined : decodeEntry(text)
  }

  async enrol (userId: string, entry: TotpEntry): Promise<boolean> {
    checkUserId(userId)
    checkEntry(entry)
    return await this.run(() => this.client.eval(ENROL, 1, this.entryKey(userId), encodeEntry({ ...entry, confirmed: false }))) === 1
  }

  async confirm (userId: string, secret: string, recovery: string[]): Promise<boolean> {
    checkHashes(recovery)
    const e = await this.get(userId)
    if (e === undefined || e.confirmed || e.secret !== secret) return false
    return await this.run(() => this.client.eval(CONFIRM, 2, this.entryKey(userId), this.recoveryKey(userId),
      encodeEntry(e), encodeEntry({ ...e, confirmed: true }), ...recovery)) === 1
  }

  async remove (userId: string): Promise<boolean> {
    checkUserId(userId)
    const [[, removed]] = await this.run(async () => await this.client.multi().del(this.entryKey(userId)).del(this.recoveryKey(userId)).exec() ?? [[null, 0]])
    return removed === 1
  }

  async setRecovery (userId: string, hashes: string[]): Promise<void> {
    checkUserId(userId)
    checkHashes(hashes)
    await this.run(() => this.client.eval(REPLACE, 1, this.recoveryKey(userId), ...hashes))
  }

  async useRecovery (userId: string, hash: string): Promise<number> {
    checkUserId(userId)
    return Number(await this.run(() => this.client.eval(SPEND, 1, this.recoveryKey(userId), hash)))
  }

  async recoveryLeft (userId: string): Promise<number> {
    checkUserId(userId)
    return await this.run(() => this.client.scard(this.recoveryKey(userId)))
  }

  async keyCheck (value: string): Promise<string> {
    const key = `${this.prefix}{keycheck}`
    await this.run(() => this.client.set(key, value, 'NX'))
    return (await this.run(() => this.client.get(key))) ?? value
  }

  async close (): Promise<void> {
    await this.connection.close()
  }

  private entryKey (userId: string): string { return `${this.prefix}{${userId}}:e` }
  private recoveryKey (userId: string): string { return `${this.prefix}{${userId}}:r` }

  private async run<T> (op: () => Promise<T>): Promise<T> {
    try {
      return await op()
    } catch (err) {
      // Redis's own text (hosts, keys) goes to the log once, never into the 503.
      throw new TotpStoreError(this.connection.failureDetails(err), { cause: err })
    }
  }
}
