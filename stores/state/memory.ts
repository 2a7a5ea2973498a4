import { OptionsError, RateLimitedError } from '../../lib/errors.js'
import { ClientLedger } from './ledger.js'
import { checkEntry, StateStoreError, type Counter, type IncrementOptions, type StateStore, type StoredEntry, type Subscription, type WriteOptions } from '../../lib/state-store.js'

/** Options of the in-memory store. */
export interface MemoryStateStoreOptions {
  /**
   * Most live entries kept. When full (after dropping expired ones), a write evicts the oldest entry of the
   * client holding the most entries; only when no client-made entry is left does it fail with 503.
   * Default 100 000.
   */
  maxEntries?: number | undefined
  /**
   * Most memory the live entries may take, in bytes, as estimated by `entryBytes` (their keys and values plus a
   * fixed cost per entry, close to what V8 holds for them). Past it a write makes room as past `maxEntries` (the
   * oldest entry of the client holding the most goes, then the next, until the write fits); only when the
   * client-made entries cannot free enough does it fail with 503. Default 64 MiB (100 000 small entries take
   * about 30 MB, so `maxEntries` is reached first unless values are large, e.g. long session lists).
   */
  maxBytes?: number | undefined
  /** Most live entries one client may hold; a write beyond it answers that client 429. Default 1000. */
  maxPerClient?: number | undefined
}

interface Entry { value: string; expiresAt: number; client: string | undefined; bytes: number }

/** What an entry costs besides its key and value: the map's slot, the entry object, the expiry (measured, rounded up). */
const ENTRY_OVERHEAD = 250
/** Any UTF-16 code unit above Latin-1: V8 then keeps the whole string at two bytes per character. */
const TWO_BYTE = /[^\u0000-\u00ff]/

/** The estimated bytes of an entry: its key and value at one or two bytes per character (as V8 keeps them), plus the fixed cost. */
export function entryBytes (key: string, value: string): number {
  return ENTRY_OVERHEAD + stringBytes(key) + stringBytes(value)
}

function stringBytes (s: string): number {
  return TWO_BYTE.test(s) ? 2 * s.length : s.length
}

/**
 * The default store: one process only. Expiry is checked against `Date.now()` on every read (so fake clocks
 * work and no timer keeps the process alive); expired entries are swept when the map is full (of entries or of
 * bytes) and, cheaply, from its oldest end on writes.
 *
 * Capacity is shared fairly: each client (see `WriteOptions.client`) holds at most `maxPerClient` entries,
 * and a full store makes room at the expense of the client holding the most, so a flood from one client (or a
 * few) cannot stop other users' logins.
 */
export class MemoryStateStore implements StateStore {
  private readonly entries = new Map<string, Entry>()
  private readonly ledger = new ClientLedger()
  private readonly maxEntries: number
  private readonly maxBytes: number
  /** Estimated bytes of every live entry, and of those a client made (what eviction can free). */
  private bytes = 0
  private clientBytes = 0
  private readonly channels = new Map<string, Set<(message: string) => void>>()
  private readonly maxPerClient: number

  constructor (opts: MemoryStateStoreOptions = {}) {
    if (opts === null || typeof opts !== 'object') throw new OptionsError('MemoryStateStore', 'options must be an object')
    this.maxEntries = positiveInt('MemoryStateStore.maxEntries', opts.maxEntries, 100_000)
    this.maxBytes = positiveInt('MemoryStateStore.maxBytes', opts.maxBytes, 64 * 1024 * 1024)
    this.maxPerClient = positiveInt('MemoryStateStore.maxPerClient', opts.maxPerClient, 1000)
  }

  async setIfAbsent (key: string, value: string, ttlMs: number, opts?: WriteOptions): Promise<boolean> {
    checkEntry(key, ttlMs)
    if (this.live(key, Date.now()) !== undefined) return false
    this.write(key, value, ttlMs, opts?.client)
    return true
  }

  async set (key: string, value: string, ttlMs: number, opts?: WriteOptions): Promise<void> {
    checkEntry(key, ttlMs)
    this.write(key, value, ttlMs, opts?.client)
  }

  async increment (key: string, ttlMs: number, opts?: IncrementOptions): Promise<Counter> {
    checkEntry(key, ttlMs)
    const now = Date.now()
    const e = this.live(key, now)
    if (e === undefined) {
      this.write(key, '1', ttlMs, opts?.client)
      return { count: 1, ttlMs }
    }
    const count = (Number.parseInt(e.value, 10) || 0) + 1
    if (opts?.sliding === true) {
      this.write(key, String(count), ttlMs, e.client)
      return { count, ttlMs }
    }
    this.resize(e, String(count))
    return { count, ttlMs: e.expiresAt - now }
  }

  async get (key: string): Promise<string | undefined> {
    return this.getNow(key)
  }

  async getMany (keys: readonly string[]): Promise<Array<string | undefined>> {
    return keys.map((key) => this.getNow(key))
  }

  /** `get` without a promise, for a reader in the same process (a first-seen token's revocation check). */
  getNow (key: string): string | undefined {
    return this.live(key, Date.now())?.value
  }

  async take (key: string): Promise<string | undefined> {
    const e = this.live(key, Date.now())
    if (e !== undefined) this.drop(key, e)
    return e?.value
  }

  async delete (key: string): Promise<boolean> {
    const e = this.live(key, Date.now())
    if (e !== undefined) this.drop(key, e)
    return e !== undefined
  }

  /** In one synchronous step (nothing runs in between); a write refused for room (503) consumes nothing. */
  async exchange (from: StoredEntry, to: StoredEntry, marker: StoredEntry): Promise<boolean> {
    checkEntry(to.key, to.ttlMs)
    checkEntry(marker.key, marker.ttlMs)
    if (this.live(from.key, Date.now()) === undefined) return false
    this.write(to.key, to.value, to.ttlMs, undefined)
    try {
      this.write(marker.key, marker.value, marker.ttlMs, undefined)
    } catch (err) {
      const written = this.entries.get(to.key)
      if (written !== undefined) this.drop(to.key, written)
      throw err
    }
    // Still there: writes of the server's own entries evict only client-made ones.
    const e = this.entries.get(from.key)
    if (e !== undefined) this.drop(from.key, e)
    return true
  }

  async close (): Promise<void> {
    this.entries.clear()
    this.channels.clear()
    this.ledger.clear()
    this.bytes = this.clientBytes = 0
  }

  /**
   * Delivers to this process's subscribers before it resolves (they are the only instances sharing it); resolves
   * with their number.
   */
  async publish (channel: string, message: string): Promise<number> {
    const handlers = [...(this.channels.get(channel) ?? [])]
    for (const handler of handlers) {
      try { handler(message) } catch { /* one subscriber's failure is not the publisher's */ }
    }
    return handlers.length
  }

  async subscribe (channel: string, onMessage: (message: string) => void, onLive?: (live: boolean) => void): Promise<Subscription> {
    let handlers = this.channels.get(channel)
    if (handlers === undefined) this.channels.set(channel, handlers = new Set())
    // A wrapper per subscription, so that subscribing one function twice makes two subscriptions.
    const handler = (message: string): void => { onMessage(message) }
    handlers.add(handler)
    onLive?.(true)
    return { close: async () => { handlers.delete(handler) } }
  }

  /** Number of live entries (for tests and metrics). */
  get size (): number {
    this.sweep(Infinity, Date.now())
    return this.entries.size
  }

  /** Estimated bytes of the live entries (`entryBytes` of each; for tests and metrics). */
  get byteSize (): number {
    this.sweep(Infinity, Date.now())
    return this.bytes
  }

  /** Number of live entries `client` holds (for tests and metrics). */
  entriesOf (client: string): number {
    this.sweepClient(client, Date.now())
    return this.ledger.count(client)
  }

  private live (key: string, now: number): Entry | undefined {
    const e = this.entries.get(key)
    if (e === undefined) return undefined
    if (e.expiresAt <= now) {
      this.drop(key, e)
      return undefined
    }
    return e
  }

  private drop (key: string, e: Entry): void {
    this.entries.delete(key)
    this.bytes -= e.bytes
    if (e.client === undefined) return
    this.ledger.remove(e.client, key)
    this.clientBytes -= e.bytes
  }

  private insert (key: string, e: Entry): void {
    this.entries.set(key, e)
    this.bytes += e.bytes
    if (e.client === undefined) return
    this.ledger.add(e.client, key)
    this.clientBytes += e.bytes
  }

  /** A counter's new value in place (a few bytes more or less: accounted, not checked against `maxBytes`). */
  private resize (e: Entry, value: string): void {
    const delta = stringBytes(value) - stringBytes(e.value)
    e.value = value
    e.bytes += delta
    this.bytes += delta
    if (e.client !== undefined) this.clientBytes += delta
  }

  /**
   * Writes an entry. Checks come before any change, so a refused write leaves the store as it was (a counter of
   * another client's making included).
   */
  private write (key: string, value: string, ttlMs: number, client: string | undefined): void {
    const now = Date.now()
    const old = this.live(key, now)
    if (client !== undefined && old?.client !== client) this.checkShare(client, now)
    const entry: Entry = { value, expiresAt: now + ttlMs, client, bytes: entryBytes(key, value) }
    if (old === undefined) this.sweep(8, now)
    if (this.over(old, entry.bytes)) this.sweep(Infinity, now)
    if (this.over(old, entry.bytes)) this.checkRoom(old, entry.bytes)
    // Re-inserted, so that map order (and the client's key order) follows write time.
    if (old !== undefined) this.drop(key, old)
    while (this.over(undefined, entry.bytes)) this.evictOne()
    this.insert(key, entry)
  }

  /** Whether writing `bytes` in place of `old` (or as a new entry) would pass `maxEntries` or `maxBytes`. */
  private over (old: Entry | undefined, bytes: number): boolean {
    const entries = this.entries.size + (old === undefined ? 1 : 0)
    return entries > this.maxEntries || this.bytes - (old?.bytes ?? 0) + bytes > this.maxBytes
  }

  /**
   * Throws 503, before anything is evicted, when evicting every client-made entry (but the one being replaced)
   * would not make room: a write that cannot be made leaves the store as it was.
   */
  private checkRoom (old: Entry | undefined, bytes: number): void {
    // What no eviction can free: the server's own entries (but the one being replaced), and the new entry.
    const replaced = old?.client === undefined ? old : undefined
    const serverEntries = this.entries.size - this.ledger.total() - (replaced === undefined ? 0 : 1)
    const serverBytes = this.bytes - this.clientBytes - (replaced?.bytes ?? 0)
    if (serverEntries + 1 > this.maxEntries) throw new StateStoreError(`in-memory state store is full (${this.maxEntries} entries)`)
    if (serverBytes + bytes > this.maxBytes) throw new StateStoreError(`in-memory state store is full (${this.maxBytes} bytes)`)
  }

  /** Throws 429 when `client` already holds its share of live entries. */
  private checkShare (client: string, now: number): void {
    if (this.ledger.count(client) < this.maxPerClient) return
    const nextExpiry = this.sweepClient(client, now)
    if (this.ledger.count(client) < this.maxPerClient) return
    throw new RateLimitedError(`this client holds too many pending logins (${this.maxPerClient})`, nextExpiry - now)
  }

  /** Makes room in a full store: the oldest entry of the client holding the most goes. */
  private evictOne (): void {
    const victim = this.ledger.largest()
    // Not reached: checkRoom made sure the client-made entries free enough.
    if (victim === undefined) throw new StateStoreError('in-memory state store is full')
    const key = this.ledger.keysOf(victim).values().next().value as string
    this.drop(key, this.entries.get(key)!)
  }

  /** Drops the client's expired entries; returns the earliest expiry among those left. */
  private sweepClient (client: string, now: number): number {
    let next = Infinity
    for (const key of [...this.ledger.keysOf(client)]) {
      const e = this.entries.get(key)!
      if (e.expiresAt <= now) this.drop(key, e)
      else if (e.expiresAt < next) next = e.expiresAt
    }
    return next
  }

  /** Drops expired entries; `budget` bounds how many live ones are looked at from the oldest end. */
  private sweep (budget: number, now: number): void {
    let seen = 0
    for (const [key, e] of this.entries) {
      if (e.expiresAt <= now) this.drop(key, e)
      else if (++seen >= budget) break
    }
  }
}

function positiveInt (name: string, value: unknown, dflt: number): number {
  const v = value ?? dflt
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw new OptionsError(name, 'must be a positive integer')
  return v
}
