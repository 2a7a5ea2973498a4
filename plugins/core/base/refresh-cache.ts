import type { Claims, RefreshCache } from './types.js'

/**
 * Default refresh cache: a bounded map (oldest entry evicted first). Entries only matter for the few seconds
 * in which concurrent requests still carry the same expired token, so a small bound is enough.
 */
export class MemoryRefreshCache implements RefreshCache {
  private readonly entries = new Map<string, Claims>()
  constructor (private readonly max = 1000) {}

  get (key: string): Claims | undefined { return this.entries.get(key) }

  set (key: string, claims: Claims): void {
    if (this.entries.size >= this.max) {
      const oldest = this.entries.keys().next().value
      if (oldest !== undefined) this.entries.delete(oldest)
    }
    this.entries.set(key, claims)
  }
}
