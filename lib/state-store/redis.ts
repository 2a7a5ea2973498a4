import type { Redis, RedisOptions } from 'ioredis'
import { OptionsError } from '../errors.js'
import { requireLazy } from '../lazy.js'
import { checkEntry, StateStoreError, type StateStore, type Subscription } from './types.js'

/** Options of the Redis store. */
export interface RedisStateStoreOptions {
  /** Prefix of every key, so one Redis database can serve several applications. Default `gatehouse:`. */
  keyPrefix?: string
  /**
   * Longest wait for one command, in ms, before it fails with 503 (only for clients the store creates).
   * Default 2000.
   */
  commandTimeoutMs?: number
  /** Called once per outage with the connection error (connection errors are not thrown, they are events). */
  onError?: (err: Error) => void
}

// GET and DEL in one step on the server. A script rather than GETDEL so that Redis before 6.2 works too.
const TAKE_SCRIPT = "local v = redis.call('GET', KEYS[1]); if v then redis.call('DEL', KEYS[1]) end; return v"

/**
 * Redis-backed store for several instances behind one URL. Every operation is a single atomic server-side
 * command (SET NX PX, SET PX, GET, a GET+DEL script, DEL), so a one-time token is consumed exactly once
 * across instances.
 *
 * Given an address (`redis://host:port/db`), the store creates and owns its client, tuned to fail fast while
 * Redis is down (one retry, a command timeout) and to reconnect in the background; `close()` quits it.
 * Given an ioredis client, the store uses it as configured and leaves closing it to the caller.
 */
export class RedisStateStore implements StateStore {
  readonly client: Redis
  private readonly prefix: string
  private readonly ownsClient: boolean
  private down = false
  private readonly onErrorEvent: (err: Error) => void
  private readonly onReadyEvent: () => void

  constructor (clientOrUrl: Redis | string, opts: RedisStateStoreOptions = {}) {
    if (opts === null || typeof opts !== 'object') throw new OptionsError('RedisStateStore', 'options must be an object')
    this.prefix = opts.keyPrefix ?? 'gatehouse:'
    if (typeof this.prefix !== 'string') throw new OptionsError('RedisStateStore.keyPrefix', 'must be a string')
    if (opts.onError !== undefined && typeof opts.onError !== 'function') throw new OptionsError('RedisStateStore.onError', 'must be a function')
    if (typeof clientOrUrl === 'string') {
      const timeout = opts.commandTimeoutMs ?? 2000
      if (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout <= 0) throw new OptionsError('RedisStateStore.commandTimeoutMs', 'must be a positive number')
      const options: RedisOptions = {
        maxRetriesPerRequest: 1,
        commandTimeout: timeout,
        connectTimeout: timeout,
        // Keep reconnecting (up to every 2 s) so the store recovers by itself when Redis returns.
        retryStrategy: (times) => Math.min(times * 100, 2000)
      }
      // ioredis is loaded here, when a Redis store is really wanted, not when the package is imported.
      const { Redis: RedisClient } = requireLazy<typeof import('ioredis')>('ioredis')
      let client: Redis
      try {
        client = new RedisClient(clientOrUrl, options)
      } catch {
        // Neither the address nor the parser's error (which carries the address as `input`) goes into the
        // error: the address may hold a password.
        throw new OptionsError('RedisStateStore', 'was given an address that is not a valid Redis URL')
      }
      this.client = client
      this.ownsClient = true
    } else if (clientOrUrl !== null && typeof clientOrUrl === 'object' && typeof (clientOrUrl as Redis).eval === 'function') {
      this.client = clientOrUrl
      this.ownsClient = false
    } else {
      throw new OptionsError('RedisStateStore', 'needs an ioredis client or a redis:// address')
    }
    const report = opts.onError ?? (() => {})
    // Without an 'error' listener ioredis prints every failed reconnect; report the first of each outage only.
    this.onErrorEvent = (err) => {
      if (!this.down) report(err)
      this.down = true
    }
    this.onReadyEvent = () => { this.down = false }
    this.client.on('error', this.onErrorEvent)
    this.client.on('ready', this.onReadyEvent)
  }

  async setIfAbsent (key: string, value: string, ttlMs: number): Promise<boolean> {
    checkEntry(key, ttlMs)
    const r = await this.run(() => this.client.set(this.prefix + key, value, 'PX', Math.ceil(ttlMs), 'NX'))
    return r === 'OK'
  }

  async set (key: string, value: string, ttlMs: number): Promise<void> {
    checkEntry(key, ttlMs)
    await this.run(() => this.client.set(this.prefix + key, value, 'PX', Math.ceil(ttlMs)))
  }

  async get (key: string): Promise<string | undefined> {
    const r = await this.run(() => this.client.get(this.prefix + key))
    return r ?? undefined
  }

  async take (key: string): Promise<string | undefined> {
    const r = await this.run(() => this.client.eval(TAKE_SCRIPT, 1, this.prefix + key))
    return typeof r === 'string' ? r : undefined
  }

  async delete (key: string): Promise<boolean> {
    const n = await this.run(() => this.client.del(this.prefix + key))
    return n > 0
  }

  async publish (channel: string, message: string): Promise<void> {
    await this.run(() => this.client.publish(this.prefix + channel, message))
  }

  /**
   * Subscribes on a connection of its own (a Redis connection in subscriber mode takes no other command), made
   * with the options of the store's client and closed with the subscription. It reconnects by itself; after each
   * reconnect it subscribes again and only then reports `onLive(true)`.
   */
  async subscribe (channel: string, onMessage: (message: string) => void, onLive: (live: boolean) => void = () => {}): Promise<Subscription> {
    const name = this.prefix + channel
    const sub = this.client.duplicate({ autoResubscribe: false, lazyConnect: true })
    let live = false
    let closed = false
    const setLive = (value: boolean): void => {
      if (value === live || closed) return
      live = value
      onLive(value)
    }
    sub.on('message', (ch: string, message: string) => { if (ch === name && !closed) onMessage(message) })
    sub.on('ready', () => {
      sub.subscribe(name).then(() => { setLive(true) }, () => { sub.disconnect(true) })
    })
    sub.on('close', () => { setLive(false) })
    // Outages are reported once by the store's own client; the subscriber's errors would only repeat them.
    sub.on('error', () => {})
    sub.connect().catch(() => { /* retried by the client's reconnect strategy */ })
    return {
      close: async () => {
        closed = true
        sub.removeAllListeners('message')
        sub.disconnect()
      }
    }
  }

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
    try {
      return await op()
    } catch (err) {
      throw new StateStoreError(`redis: ${(err as Error).message}`, { cause: err })
    }
  }
}
