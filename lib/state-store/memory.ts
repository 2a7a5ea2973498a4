import { OptionsError } from '../errors.js'
import { checkEntry, StateStoreError, type StateStore, type Subscription } from './types.js'

/** Options of the in-memory store. */
export interface MemoryStateStoreOptions {
  /** Most live entries kept; a write beyond it (after dropping expired ones) fails with 503. Default 100 000. */
  maxEntries?: number
}

interface Entry { value: string; expiresAt: number }

/**
 * The default store: one process only. Expiry is checked against `Date.now()` on every read (so fake clocks
 * work and no timer keeps the process alive); expired entries are swept when the map is full and, cheaply,
 * from its oldest end on writes.
 */
export class MemoryStateStore implements StateStore {
  private readonly entries = new Map<string, Entry>()
  private readonly maxEntries: number
  private readonly channels = new Map<string, Set<(message: string) => void>>()

  constructor (opts: MemoryStateStoreOptions = {}) {
    if (opts === null || typeof opts !== 'object') throw new OptionsError('MemoryStateStore', 'options must be an object')
    const max = opts.maxEntries ?? 100_000
    if (!Number.isInteger(max) || max < 1) throw new OptionsError('MemoryStateStore.maxEntries', 'must be a positive integer')
    this.maxEntries = max
  }

  async setIfAbsent (key: string, value: string, ttlMs: number): Promise<boolean> {
    checkEntry(key, ttlMs)
    if (this.live(key) !== undefined) return false
    this.write(key, value, ttlMs)
    return true
  }

  async set (key: string, value: string, ttlMs: number): Promise<void> {
    checkEntry(key, ttlMs)
    this.write(key, value, ttlMs)
  }

  async get (key: string): Promise<string | undefined> {
    return this.live(key)?.value
  }

  async take (key: string): Promise<string | undefined> {
    const e = this.live(key)
    if (e !== undefined) this.entries.delete(key)
    return e?.value
  }

  async delete (key: string): Promise<boolean> {
    const existed = this.live(key) !== undefined
    this.entries.delete(key)
    return existed
  }

  async close (): Promise<void> {
    this.entries.clear()
    this.channels.clear()
  }

  /** Delivers to this process's subscribers before it resolves (they are the only instances sharing it). */
  async publish (channel: string, message: string): Promise<void> {
    for (const handler of this.channels.get(channel) ?? []) {
      try { handler(message) } catch { /* one subscriber's failure is not the publisher's */ }
    }
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
    this.sweep(Infinity)
    return this.entries.size
  }

  private live (key: string): Entry | undefined {
    const e = this.entries.get(key)
    if (e === undefined) return undefined
    if (e.expiresAt <= Date.now()) {
      this.entries.delete(key)
      return undefined
    }
    return e
  }

  private write (key: string, value: string, ttlMs: number): void {
    this.entries.delete(key) // re-insert so that map order follows write time
    this.sweep(8)
    if (this.entries.size >= this.maxEntries) this.sweep(Infinity)
    if (this.entries.size >= this.maxEntries) throw new StateStoreError(`in-memory state store is full (${this.maxEntries} entries)`)
    this.entries.set(key, { value, expiresAt: Date.now() + ttlMs })
  }

  /** Drops expired entries; `budget` bounds how many live ones are looked at from the oldest end. */
  private sweep (budget: number): void {
    const now = Date.now()
    let seen = 0
    for (const [key, e] of this.entries) {
      if (e.expiresAt <= now) this.entries.delete(key)
      else if (++seen >= budget) break
    }
  }
}
