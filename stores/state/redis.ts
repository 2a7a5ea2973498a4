import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'
import { OptionsError, RateLimitedError } from '../../lib/errors.js'
import { checkEntry, groupOf, StateStoreError, type Counter, type IncrementOptions, type PublishOptions, type StateStore, type StoredEntry, type Subscription, type WriteOptions } from '../../lib/state-store.js'
import { EXCHANGE_SCRIPT, INCREMENT_SCRIPT, RELEASE_SCRIPT, RESERVE_SCRIPT, TAKE_SCRIPT, UNDO_EXCHANGE_SCRIPT, UNDO_SCRIPT, WRITE_SCRIPT } from './redis-scripts.js'
import { createRedisClient, isCluster, type RedisConnection } from './redis-client.js'
import { keySlot, slotMaster } from './redis-slot.js'
import type { RedisNode } from './redis-address.js'
import { subscribeOn } from './redis-subscriber.js'

/** Options of the Redis store. */
export interface RedisStateStoreOptions {
  /**
   * Prefix of every key, so one Redis database can serve several applications. Default `gatehouse:`. Keep braces
   * out of it on a Redis Cluster: each entry's key carries its own hash tag (`gatehouse:{<key>}`), which a `{…}`
   * in the prefix would replace, putting every key in one slot.
   */
  keyPrefix?: string | undefined
  /**
   * Longest wait for one command, in ms, before it fails with 503 (only for clients the store creates).
   * Default 2000.
   */
  commandTimeoutMs?: number | undefined
  /**
   * Called once per outage with the connection error (connection errors are not thrown, they are events), and
   * once per distinct text with the error of a command Redis refused or did not answer. The 503 a client gets
   * carries neither (`details` says only that Redis did not answer or refused).
   */
  onError?: ((err: Error) => void) | undefined
  /**
   * Most entries one client may create within the lifetime of its longest-lived one (a counter per client,
   * kept beside the entries); a write beyond it answers that client 429. Default 1000.
   */
  maxPerClient?: number | undefined
}

/** A consuming operation whose answer never came: its undo is retried until it runs or its record is gone. */
interface PendingUndo {
  /** The entry's key (its undo is settled before the next consuming operation on it). */
  key: string
  run: () => Promise<unknown>
  until: number
  /** The undo in flight: resolves true once Redis has answered it, false when it failed (it is sent again later). */
  sending?: Promise<boolean> | undefined
}

// Undo records of takes live as long as the entry would have; undo is retried for at most this long.
const UNDO_RETRY_MS = 15 * 60_000
// Undo owed during a long outage is kept for this many operations at most (the oldest are given up first).
const MAX_PENDING_UNDO = 10_000
// Distinct error texts remembered as logged; past it the memory starts over (a text may then be logged again).
const MAX_REPORTED = 100

/**
 * The key that marks a consuming operation as undone: `<entry>:undone:<id>` beside its undo record
 * `<entry>:undo:<id>`, in the entry's slot (the id has no colon, so the last `:undo:` is the store's own).
 */
function tombstoneOf (undoKey: string): string {
  const at = undoKey.lastIndexOf(':undo:')
  return `${undoKey.slice(0, at)}:undone:${undoKey.slice(at + ':undo:'.length)}`
}

/**
 * Redis-backed store for several instances behind one URL. Every operation is a single atomic server-side
 * command or script, so a one-time token is consumed exactly once across instances. Every entry has a TTL, and
 * the entries a client creates are counted (see `maxPerClient`), so an unauthenticated client cannot grow Redis.
 *
 * A consuming operation that fails on our side (Redis hung, command timeout, connection lost) is answered 503,
 * but its command may still be queued in the socket and run when Redis comes back. So that a 503 consumes
 * nothing, `setIfAbsent` and `take` leave an undo record under a key of their own (`undo:<random id>`), and
 * when one fails the store sends the undo script right behind it on the same connection: Redis runs a
 * connection's commands in order, so the late write, if it runs at all, is undone before anything sent later
 * can see it. The undo also leaves a tombstone beside the undo record, and the operation does nothing when it
 * finds one: on a Cluster, ioredis holds a command back during a failover (CLUSTERDOWN, TRYAGAIN, MOVED) and
 * sends it again after a delay, possibly after its timeout and after the undo, and then on another connection.
 * Undo is retried (it is idempotent) until it runs; the undo record is deleted once the answer has come back.
 * See the README's "State store" section for the reasoning and its limits.
 *
 * Given an address (`redis://host:port/db`, `rediss://…`, `redis-cluster://host:port,host:port`,
 * `redis-sentinel://host:port,host:port/<master name>`) or a Cluster's node list, the store creates and owns its
 * client, tuned to fail fast while Redis is down (one retry, a command timeout) and to reconnect in the
 * background; `close()` quits it. Given an ioredis client (`Redis`, Sentinel-configured or not, or `Cluster`),
 * the store uses it as configured and leaves closing it to the caller.
 *
 * Redis Cluster: every key carries a hash tag of its entity (`<prefix>{<key>}`, its undo records
 * `<prefix>{<key>}:undo:<id>`, a client's counter `<prefix>{client:<client>}`), so entries spread over all slots
 * and every script touches one slot; a key of a group (`{<group>}…`) is stored as `<prefix>{<group>}…`, beside
 * its group's other keys, so that `exchange` touches one slot too. Counting an entry for its client is a step of
 * its own before the write.
 */
export class RedisStateStore implements StateStore {
  readonly client: RedisConnection
  /** The client as the command interface (a Cluster has the same commands, routed by key slot). */
  private readonly cmd: Redis
  private readonly prefix: string
  private readonly ownsClient: boolean
  private down = false
  private readonly onErrorEvent: (err: Error) => void
  private readonly onReadyEvent: () => void
  private readonly maxPerClient: number
  private pendingUndo: PendingUndo[] = []
  private readonly report: (err: Error) => void
  /** Error texts already passed to `onError` (see `failure`). */
  private readonly reported = new Set<string>()

  constructor (clientOrUrl: RedisConnection | string | Array<RedisNode | string>, opts: RedisStateStoreOptions = {}) {
    if (opts === null || typeof opts !== 'object') throw new OptionsError('RedisStateStore', 'options must be an object')
    this.prefix = opts.keyPrefix ?? 'gatehouse:'
    if (typeof this.prefix !== 'string') throw new OptionsError('RedisStateStore.keyPrefix', 'must be a string')
    if (opts.onError !== undefined && typeof opts.onError !== 'function') throw new OptionsError('RedisStateStore.onError', 'must be a function')
    const maxPerClient = opts.maxPerClient ?? 1000
    if (typeof maxPerClient !== 'number' || !Number.isInteger(maxPerClient) || maxPerClient < 1) throw new OptionsError('RedisStateStore.maxPerClient', 'must be a positive integer')
    this.maxPerClient = maxPerClient
    if (typeof clientOrUrl === 'string' || Array.isArray(clientOrUrl)) {
      const timeout = opts.commandTimeoutMs ?? 2000
      if (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout <= 0) throw new OptionsError('RedisStateStore.commandTimeoutMs', 'must be a positive number')
      this.client = createRedisClient(clientOrUrl, timeout, 'RedisStateStore')
      this.ownsClient = true
    } else if (clientOrUrl !== null && typeof clientOrUrl === 'object' && typeof (clientOrUrl as Redis).eval === 'function') {
      this.client = clientOrUrl
      this.ownsClient = false
    } else {
      throw new OptionsError('RedisStateStore', 'needs an ioredis client (Redis or Cluster), a Redis address or a list of Cluster nodes')
    }
    this.cmd = this.client as Redis
    const report = opts.onError ?? (() => {})
    this.report = report
    // Without an 'error' listener ioredis prints every failed reconnect; report the first of each outage only.
    this.onErrorEvent = (err) => {
      if (!this.down) report(err)
      this.down = true
    }
    this.onReadyEvent = () => {
      this.down = false
      this.retryUndo()
    }
    this.client.on('error', this.onErrorEvent)
    this.client.on('ready', this.onReadyEvent)
  }

  /** Prefix of every key of this store (for companions sharing its Redis, e.g. rate-limit counters). */
  get keyPrefix (): string { return this.prefix }

  async setIfAbsent (key: string, value: string, ttlMs: number, opts?: WriteOptions): Promise<boolean> {
    checkEntry(key, ttlMs)
    return await this.consuming(key, ttlMs, (undoKey) => this.write(key, value, ttlMs, opts?.client, true, undoKey),
      (undoKey) => this.undo(key, undoKey, 'set', ttlMs))
  }

  async set (key: string, value: string, ttlMs: number, opts?: WriteOptions): Promise<void> {
    checkEntry(key, ttlMs)
    const client = opts?.client
    // The server's own entries are counted for nobody: one plain SET (the write script would add an EXISTS and its EVAL).
    if (client === undefined) await this.run(() => this.cmd.set(this.entryKey(key), value, 'PX', Math.ceil(ttlMs)))
    else await this.run(() => this.write(key, value, ttlMs, client, false, undefined))
  }

  async increment (key: string, ttlMs: number, opts?: IncrementOptions): Promise<Counter> {
    checkEntry(key, ttlMs)
    const client = opts?.client
    const sliding = opts?.sliding === true ? '1' : '0'
    const count = async (existingOnly: boolean): Promise<[number, number]> =>
      await this.cmd.eval(INCREMENT_SCRIPT, 1, this.entryKey(key), Math.ceil(ttlMs), sliding, existingOnly ? '1' : '0') as [number, number]
    const r = await this.run(async () => {
      if (client === undefined) return await count(false)
      const existing = await count(true)
      if (existing[0] > 0) return existing
      // A new counter: the client's place first (its own slot), given back if another request created it meanwhile.
      await this.reserve(client, ttlMs)
      const created = await count(false)
      if (created[0] > 1) this.release(client)
      return created
    })
    return { count: r[0], ttlMs: r[1] }
  }

  async get (key: string): Promise<string | undefined> {
    // An entry an exchange that failed may have consumed is read once its undo has run (see settleUndo).
    if (this.pendingUndo.length > 0) await this.settleUndo(key)
    const r = await this.run(() => this.cmd.get(this.entryKey(key)))
    return r ?? undefined
  }

  /** One MGET when the keys share a hash tag (one group); otherwise one GET each, all at once. */
  async getMany (keys: readonly string[]): Promise<Array<string | undefined>> {
    if (this.pendingUndo.length > 0) for (const key of keys) await this.settleUndo(key)
    const names = keys.map((key) => this.entryKey(key))
    const tags = new Set(keys.map((key) => groupOf(key) ?? key))
    const values = tags.size <= 1
      ? await this.run(() => this.cmd.mget(...names))
      : await this.run(async () => await Promise.all(names.map(async (name) => await this.cmd.get(name))))
    return values.map((v) => v ?? undefined)
  }

  async take (key: string): Promise<string | undefined> {
    const r = await this.consuming(key, UNDO_RETRY_MS, (undoKey) => this.cmd.eval(TAKE_SCRIPT, 3, this.entryKey(key), undoKey, tombstoneOf(undoKey)),
      (undoKey) => this.undo(key, undoKey, 'take', UNDO_RETRY_MS))
    return typeof r === 'string' ? r : undefined
  }

  async delete (key: string): Promise<boolean> {
    const n = await this.run(() => this.cmd.del(this.entryKey(key)))
    return n > 0
  }

  /**
   * One script (EXCHANGE_SCRIPT: four commands with its EVAL) over the three keys, which share a group, so a hash
   * tag: one Cluster slot. `from` is deleted, not taken (the caller holds its value), so no undo record is written
   * or deleted: when the call fails, the undo (UNDO_EXCHANGE_SCRIPT) is sent behind it with the value the caller
   * read, and retried until it runs, as for the other consuming operations.
   */
  async exchange (from: StoredEntry, to: StoredEntry, marker: StoredEntry): Promise<boolean> {
    checkEntry(from.key, Math.max(1, from.ttlMs))
    checkEntry(to.key, to.ttlMs)
    checkEntry(marker.key, marker.ttlMs)
    const group = groupOf(from.key)
    if (group === undefined || groupOf(to.key) !== group || groupOf(marker.key) !== group) throw new TypeError('state store exchange: the three keys must belong to one group ({group}…)')
    const keys = [this.entryKey(from.key), this.entryKey(to.key), this.entryKey(marker.key)]
    await this.settleUndo(from.key)
    let r: unknown
    try {
      r = await this.run(() => this.cmd.eval(EXCHANGE_SCRIPT, 3, ...keys, to.value, Math.ceil(to.ttlMs), marker.value, Math.ceil(marker.ttlMs)))
    } catch (err) {
      const keepMs = Math.min(to.ttlMs, UNDO_RETRY_MS)
      this.owe(from.key, keepMs, () => this.cmd.eval(UNDO_EXCHANGE_SCRIPT, 3, ...keys, from.value, Math.max(0, Math.floor(from.ttlMs)), to.value, Math.ceil(keepMs)))
      throw err
    }
    if (r === 2) throw this.failure(new Error('the exchange was undone before it ran'))
    return r === 1
  }

  /**
   * Resolves with the number of subscribers Redis delivered to. On a Cluster the message is published on the
   * master serving the channel's slot, where every instance subscribes (see redis-slot.ts for why); PUBLISH
   * counts only that node's subscribers, so with `count` (the default) the others' `PUBSUB NUMSUB` are asked
   * beside it and added: a subscription that had to move elsewhere is counted too (a node that does not answer
   * has no live subscriber to count). `count: false` (an acknowledgement, whose count nobody reads) asks nothing
   * more. The master unknown or unreachable, the Cluster client routes the PUBLISH itself.
   */
  async publish (channel: string, message: string, options: PublishOptions = {}): Promise<number> {
    const name = this.prefix + channel
    const client = this.client
    if (!isCluster(client)) return await this.run(() => this.cmd.publish(name, message))
    const owner = slotMaster(client, keySlot(name))
    const others = options.count === false ? [] : client.nodes('all').filter((node) => node !== owner)
    const counts = others.map(async (node) => {
      const [, n] = await node.pubsub('NUMSUB', name) as [string, number]
      return Number(n)
    })
    const here = await this.run(async () => {
      if (owner !== undefined) {
        try { return await owner.publish(name, message) } catch { /* the slot moved or the node is gone: routed below */ }
      }
      await this.cmd.publish(name, message)
      return 0
    })
    const answered = await Promise.allSettled(counts)
    return answered.reduce((sum, a) => sum + (a.status === 'fulfilled' ? a.value : 0), here)
  }

  /**
   * What Redis's configuration says about keeping the store's entries, as warnings (none when all is well, or
   * when `CONFIG GET` is not allowed, as on some managed services), and a key prefix that would put every key of
   * a Cluster in one slot. Revocations need both: an evicted or a
   * restarted-away entry is a revocation lost (see the README's "State store").
   */
  async durabilityWarnings (): Promise<string[]> {
    const warnings: string[] = []
    if (isCluster(this.client) && /\{[^}]*\}/.test(this.prefix)) {
      warnings.push('the key prefix holds a hash tag ({…}): on this Redis Cluster every key lands in one slot, one node; drop the braces')
    }
    const config: Record<string, string> = {}
    try {
      // One name per CONFIG GET: several at once needs Redis 7.
      const answers = await Promise.all(['maxmemory', 'maxmemory-policy', 'save', 'appendonly'].map(async (name) => await this.cmd.config('GET', name) as string[]))
      for (const [name, value] of answers) if (name !== undefined && value !== undefined) config[name] = value
    } catch {
      return warnings
    }
    const policy = config['maxmemory-policy']
    if (config.maxmemory !== undefined && config.maxmemory !== '0' && policy !== undefined && policy !== 'noeviction') {
      warnings.push(`Redis evicts keys when full (maxmemory-policy ${policy}): revocations and one-time tokens can be lost; set maxmemory-policy noeviction`)
    }
    if (config.save === '' && config.appendonly === 'no') {
      warnings.push('Redis keeps nothing across a restart (no RDB snapshots, no AOF): a restart loses revocations, and every session started before it is then refused; enable appendonly or save')
    }
    return warnings
  }

  /**
   * Subscribes on a connection of its own (a Redis connection in subscriber mode takes no other command), made
   * with the options of the store's client and closed with the subscription; on a Cluster, to one of its masters
   * (a PUBLISH on any node reaches every node's subscribers). It reconnects by itself; after each reconnect it
   * subscribes again and only then reports `onLive(true)`.
   */
  async subscribe (channel: string, onMessage: (message: string) => void, onLive: (live: boolean) => void = () => {}): Promise<Subscription> {
    return subscribeOn(this.client, this.prefix + channel, onMessage, onLive)
  }

  /**
   * Runs a consuming operation that leaves an undo record under a fresh key. Answered: the record is deleted
   * (not awaited). Failed: the undo is sent behind it at once, and retried later until it runs.
   */
  private async consuming<T> (key: string, ttlMs: number, op: (undoKey: string) => Promise<T>, undo: (undoKey: string) => Promise<unknown>): Promise<T> {
    // In the entry's slot (its hash tag), so that the scripts touching both run on one Cluster node.
    const undoKey = `${this.entryKey(key)}:undo:${randomBytes(12).toString('base64url')}`
    await this.settleUndo(key)
    try {
      const r = await this.run(() => op(undoKey))
      this.cmd.del(undoKey).catch(() => {})
      return r
    } catch (err) {
      if (!(err instanceof RateLimitedError)) this.owe(key, ttlMs, () => undo(undoKey))
      throw err
    }
  }

  /** An undo owed for an operation on `key` that failed: sent at once, and retried until it runs (for `ttlMs`, at most UNDO_RETRY_MS). */
  private owe (key: string, ttlMs: number, run: () => Promise<unknown>): void {
    if (this.pendingUndo.length >= MAX_PENDING_UNDO) this.pendingUndo.shift()
    const entry: PendingUndo = { key, run, until: Date.now() + Math.min(ttlMs, UNDO_RETRY_MS) }
    this.pendingUndo.push(entry)
    void this.sendUndo(entry)
  }

  /**
   * SET (NX or not) with, for consuming writes, the undo record. A counted write that would create an entry first
   * takes a place of the client's share (its own slot), then writes, and gives the place back when another
   * request created the entry meanwhile (a write that fails keeps it: counting too much is the safe side, and the
   * counter expires). Writing over an existing entry counts nothing, as on one node.
   */
  private async write (key: string, value: string, ttlMs: number, client: string | undefined, nx: boolean, undoKey: string | undefined): Promise<boolean> {
    const send = async (existingOnly: boolean): Promise<[number, number]> => await this.cmd.eval(WRITE_SCRIPT, 3, this.entryKey(key),
      undoKey ?? this.entryKey(key), undoKey === undefined ? this.entryKey(key) : tombstoneOf(undoKey), value, Math.ceil(ttlMs), nx ? '1' : '0', undoKey === undefined ? '0' : '1', existingOnly ? '1' : '0') as [number, number]
    let r = await send(client !== undefined)
    if (r[0] === 2 && client !== undefined) {
      await this.reserve(client, ttlMs)
      r = await send(false)
      if (r[1] === 1) this.release(client)
    }
    return r[0] === 1
  }

  /**
   * Undoes a consuming operation answered with an error, and leaves its tombstone for as long as the operation's
   * undo is owed (`keepMs`, at most UNDO_RETRY_MS), so that the operation, arriving late, does nothing.
   */
  private async undo (key: string, undoKey: string, kind: 'set' | 'take', keepMs: number): Promise<unknown> {
    return await this.cmd.eval(UNDO_SCRIPT, 3, this.entryKey(key), undoKey, tombstoneOf(undoKey), kind, Math.ceil(Math.min(keepMs, UNDO_RETRY_MS)))
  }

  /** Takes a place of the client's share, or throws the 429 for a client holding its share. */
  private async reserve (client: string, ttlMs: number): Promise<void> {
    const r = await this.cmd.eval(RESERVE_SCRIPT, 1, this.clientKey(client), this.maxPerClient, Math.ceil(ttlMs)) as [number, number]
    if (r[0] === 0) throw this.overShare(r[1])
  }

  /** Gives a place back (not awaited: failing, the client is counted once too often until the counter expires). */
  private release (client: string): void {
    this.cmd.eval(RELEASE_SCRIPT, 1, this.clientKey(client)).catch(() => {})
  }

  /**
   * The key of an entry: its own hash tag, so entries spread over a Cluster's slots; a key of a group
   * (`{<group>}…`, see StateStore) has its group's, so that an exchange touches one slot.
   */
  private entryKey (key: string): string {
    return groupOf(key) === undefined ? `${this.prefix}{${key}}` : this.prefix + key
  }

  private clientKey (client: string): string {
    return `${this.prefix}{client:${client}}`
  }

  private overShare (ttlMs: number): RateLimitedError {
    return new RateLimitedError(`this client holds too many pending logins (${this.maxPerClient})`, ttlMs)
  }

  /** Sends one owed undo (once at a time); it is forgotten when Redis has answered it. */
  private sendUndo (entry: PendingUndo): Promise<boolean> {
    entry.sending ??= entry.run().then(() => {
      this.pendingUndo = this.pendingUndo.filter((e) => e !== entry)
      return true
    }, () => {
      entry.sending = undefined
      return false
    })
    return entry.sending
  }

  /** Sends every undo still owed (on reconnect, and after any answered command). */
  private retryUndo (): void {
    const now = Date.now()
    this.pendingUndo = this.pendingUndo.filter((e) => e.until > now)
    for (const entry of this.pendingUndo) void this.sendUndo(entry)
  }

  /**
   * On a Cluster, before a consuming operation on `key`: the undo still owed for earlier ones on it has run, or
   * the operation answers 503 unsent. ioredis re-sends a command held back by a failover after a delay, so a late
   * take could run after its undo failed and before this operation, which would then find nothing (taken, and
   * put back only when the undo is retried). On one connection (one server, Sentinels) Redis runs a late
   * operation, then its undo, then anything sent later: nothing to wait for.
   */
  private async settleUndo (key: string): Promise<void> {
    if (!isCluster(this.client)) return
    const owed = this.pendingUndo.filter((e) => e.key === key)
    if (owed.length === 0) return
    const answered = await Promise.all(owed.map(async (e) => await this.sendUndo(e)))
    if (answered.includes(false)) throw this.failure(new Error('an earlier operation on this entry is not undone yet'))
  }

  /**
   * The 503 for a command Redis did not answer or refused. The answer names the kind of peer and what went
   * wrong, never Redis's own text (it may name hosts, ports, keys or slots); that goes to `onError`, once per
   * distinct text, so an outage or a misconfiguration is logged without flooding the log.
   */
  private failure (err: unknown): StateStoreError {
    return new StateStoreError(this.failureDetails(err), { cause: err })
  }

  /**
   * What a 503 may say of a failed command (see `failure`), having reported the real error; for companions
   * sharing this connection (the Redis passkey store).
   * @internal
   */
  failureDetails (err: unknown): string {
    const e = err instanceof Error ? err : new Error(String(err))
    // While the connection is down, its error was reported already; the commands failing with it add nothing.
    if (!this.down && !this.reported.has(e.message)) {
      if (this.reported.size >= MAX_REPORTED) this.reported.clear()
      this.reported.add(e.message)
      this.report(e)
    }
    // ioredis names the errors Redis itself answers `ReplyError`; everything else is the connection's.
    return e.name === 'ReplyError' ? 'Redis refused the command' : 'Redis did not answer'
  }

  /** Undo operations not yet answered by Redis (for tests and metrics). */
  get owedUndo (): number { return this.pendingUndo.length }

  async close (): Promise<void> {
    this.client.off('error', this.onErrorEvent)
    this.client.off('ready', this.onReadyEvent)
    if (!this.ownsClient) return
    // quit() waits for a reply that never comes while Redis is down; disconnect() does not.
    if (this.client.status === 'ready') {
      try { await this.client.quit(); return } catch { /* fall through */ }
    }
    this.client.disconnect()
  }

  private async run<T> (op: () => Promise<T>): Promise<T> {
    let r: T
    try {
      r = await op()
    } catch (err) {
      if (err instanceof RateLimitedError) throw err
      throw this.failure(err)
    }
    if (this.pendingUndo.length > 0) this.retryUndo()
    return r
  }
}
