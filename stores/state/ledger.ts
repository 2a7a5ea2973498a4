/**
 * Which keys each client holds in the in-memory state store, and which client holds the most. The store uses it
 * to bound entries per client and, when it is full, to evict from the client holding the most (oldest first),
 * so that a flood from one client costs that client its own entries and never another client's.
 *
 * Every operation is O(1): clients are kept in buckets by how many keys they hold.
 */
export class ClientLedger {
  /** Keys of each client, oldest write first (a Set keeps insertion order). */
  private readonly keys = new Map<string, Set<string>>()
  /** Clients by how many keys they hold. */
  private readonly byCount = new Map<number, Set<string>>()
  private top = 0
  /** Keys of every client together. */
  private all = 0

  /** Records that `client` now holds `key` (as its newest). */
  add (client: string, key: string): void {
    let set = this.keys.get(client)
    if (set === undefined) this.keys.set(client, set = new Set())
    const before = set.size
    set.add(key)
    this.all += set.size - before
    this.move(client, before, set.size)
  }

  /** Records that `client` no longer holds `key`. */
  remove (client: string, key: string): void {
    const set = this.keys.get(client)
    if (set === undefined || !set.delete(key)) return
    this.all--
    this.move(client, set.size + 1, set.size)
    if (set.size === 0) this.keys.delete(client)
  }

  /** How many keys `client` holds. */
  count (client: string): number {
    return this.keys.get(client)?.size ?? 0
  }

  /** How many keys all clients hold together. */
  total (): number {
    return this.all
  }

  /** The keys of `client`, oldest first (do not modify). */
  keysOf (client: string): ReadonlySet<string> {
    return this.keys.get(client) ?? EMPTY
  }

  /** A client holding the most keys, or undefined when no client holds any. */
  largest (): string | undefined {
    return this.top === 0 ? undefined : this.byCount.get(this.top)?.values().next().value
  }

  clear (): void {
    this.keys.clear()
    this.byCount.clear()
    this.top = 0
    this.all = 0
  }

  private move (client: string, from: number, to: number): void {
    if (from === to) return
    const old = this.byCount.get(from)
    if (old !== undefined) {
      old.delete(client)
      if (old.size === 0) this.byCount.delete(from)
    }
    if (to > 0) {
      let bucket = this.byCount.get(to)
      if (bucket === undefined) this.byCount.set(to, bucket = new Set())
      bucket.add(client)
    }
    if (to > this.top) this.top = to
    while (this.top > 0 && !this.byCount.has(this.top)) this.top--
  }
}

const EMPTY: ReadonlySet<string> = new Set()
