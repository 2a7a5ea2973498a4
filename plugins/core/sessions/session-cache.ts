/**
 * The verified-session cache: a token whose signature and claims were checked once is the same bytes with the
 * same answer until it expires or is revoked, so the hot path looks it up by its exact (canonical) string instead
 * of verifying it again. Only verified tokens get in (a failed verification is never stored), an entry is used
 * only before the token's `exp`, and the caller checks revocation on every hit (plugins/core/sessions/revocation.ts).
 *
 * Bounded by `max` entries with second-chance (clock) eviction: a hit sets a flag; a clock hand sweeps the slots
 * in turn and evicts the first entry whose flag is not set, clearing the flags it passes. Near-LRU, at the cost
 * of one flag write per hit rather than a reordering.
 */
import type { User } from '../../../lib/user.js'
import type { JwsKey } from '../base/jws.js'
import type { RevocationSubject } from './revocation.js'
import type { Claims } from '../base/types.js'

export interface CachedSession {
  readonly token: string
  /** Frozen: every request served from this entry sees the same claims. */
  readonly claims: Claims
  /** Frozen, or null when the token carries no user. */
  readonly user: User | null
  /** The key that verified the token: when the secret reader stops returning it, the entry is not used. */
  readonly key: JwsKey
  /** What the secret reader answered when the key was made (`KeyRings.originOf`): the same answer keeps the key. */
  readonly keyOrigin: unknown
  readonly aud: string
  /** `exp` in ms. */
  readonly expiresAt: number
  /** When revocation was last looked up in the state store for this entry (ms). */
  checkedAt: number
  /** What revocation looks at, kept ready so that a hit allocates nothing. */
  readonly subject: RevocationSubject
  /** The `jti`'s character codes, kept ready for the XSRF check's constant-time comparison. */
  readonly jtiCodes: Uint16Array
  hit: boolean
  /**
   * When this entry's session was last handed to the session list (ms); Infinity when the list is off. The hot
   * path compares it with the clock, which is all the list costs a request in between.
   */
  seenAt: number
  /** The cache's own: where the entry sits in the clock's slot array (-1 before it is stored). */
  slot: number
}

/** Entries the clock hand passes over (second chances) before it evicts regardless of their flag. */
const SECOND_CHANCES = 8

/**
 * Characters at the end of a token that key its entry: the end of its signature. A request's token is a fresh
 * string every time (a slice of the header it came in), and a Map keyed by strings hashes the whole key before it
 * can look it up, through V8's runtime for a sliced string (~800 instructions for a 43-character tail). So the
 * entry is keyed by a number made of the last `KEY_CHARS` characters (a few instructions each), and every hit
 * compares the whole token (an entry is returned only for its exact token; two tokens with one key only take each
 * other's place, which the signature's randomness makes rare: 30 bits).
 */
const KEY_CHARS = 10

function keyOf (token: string): number {
  return keyIn(token, 0, token.length)
}

/** `keyOf` of the token at [start, end) of `text`. */
function keyIn (text: string, start: number, end: number): number {
  let h = 0
  for (let i = Math.max(start, end - KEY_CHARS); i < end; i++) h = (Math.imul(h, 31) + text.charCodeAt(i)) | 0
  // Within a small integer, so that the Map's key is one.
  return h & 0x3fffffff
}

export class SessionCache {
  private readonly entries = new Map<number, CachedSession>()
  // Eviction order lives in a fixed array swept by a clock hand, not in the Map's insertion order: V8 keeps a
  // Map's deleted slots until it rehashes, so taking the oldest entry with `values().next()` after many evictions
  // walks over every deleted slot first (measured: ~10 µs per insert at 10 000 entries).
  private readonly slots: Array<CachedSession | undefined> = []
  private readonly free: number[] = []
  private hand = 0
  constructor (readonly max: number) {}

  get size (): number { return this.entries.size }

  /** The entry of exactly this token, or undefined. */
  get (token: string): CachedSession | undefined {
    const e = this.entries.get(keyOf(token))
    return e !== undefined && e.token === token ? e : undefined
  }

  /** `get`, the key read in `text`, where the token is the text that ends at `end` (the header it was cut from). */
  find (token: string, text: string, end: number): CachedSession | undefined {
    const e = this.entries.get(keyIn(text, end - token.length, end))
    return e !== undefined && e.token === token ? e : undefined
  }

  set (entry: CachedSession): void {
    if (this.max <= 0) return
    // The same token again, or another one with the same tail: the new entry takes the old one's slot.
    const old = this.entries.get(keyOf(entry.token))
    if (old !== undefined) {
      this.place(entry, old.slot)
      return
    }
    const slot = this.free.pop() ?? (this.slots.length < this.max ? this.slots.length : this.evict())
    this.place(entry, slot)
  }

  delete (token: string): void {
    const e = this.get(token)
    if (e === undefined) return
    this.entries.delete(keyOf(token))
    this.slots[e.slot] = undefined
    this.free.push(e.slot)
  }

  clear (): void {
    this.entries.clear()
    this.slots.length = 0
    this.free.length = 0
    this.hand = 0
  }

  private place (entry: CachedSession, slot: number): void {
    this.slots[slot] = entry
    entry.slot = slot
    this.entries.set(keyOf(entry.token), entry)
  }

  /** Frees the slot under the clock hand, giving up to SECOND_CHANCES recently hit, unexpired entries a pass. */
  private evict (): number {
    const now = Date.now()
    let chances = SECOND_CHANCES
    for (;;) {
      const slot = this.hand
      this.hand = (this.hand + 1) % this.slots.length
      const e = this.slots[slot]
      if (e === undefined) return slot
      if (e.hit && chances-- > 0 && e.expiresAt > now) {
        e.hit = false
        continue
      }
      this.entries.delete(keyOf(e.token))
      this.slots[slot] = undefined
      return slot
    }
  }
}
