/**
 * The verified-session cache: a token whose signature and claims were checked once is the same bytes with the
 * same answer until it expires or is revoked, so the hot path looks it up by its exact (canonical) string instead
 * of verifying it again. Only verified tokens get in (a failed verification is never stored), an entry is used
 * only before the token's `exp`, and the caller checks revocation on every hit (plugins/core/revocation.ts).
 *
 * Bounded by `max` entries with second-chance eviction: a hit sets a flag, and the oldest entry is evicted unless
 * its flag is set (then it is cleared and the entry moved to the young end). Near-LRU, at the cost of one flag
 * write per hit rather than a reordering.
 */
import type { User } from '../../lib/user.js'
import type { JwsKey } from './jws.js'
import type { RevocationSubject } from './revocation.js'
import type { Claims } from './types.js'

export interface CachedSession {
  readonly token: string
  /** Frozen: every request served from this entry sees the same claims. */
  readonly claims: Claims
  /** Frozen, or null when the token carries no user. */
  readonly user: User | null
  /** The key that verified the token: when the secret reader stops returning it, the entry is not used. */
  readonly key: JwsKey
  readonly aud: string
  /** `exp` in ms. */
  readonly expiresAt: number
  /** When revocation was last looked up in the state store for this entry (ms). */
  checkedAt: number
  /** What revocation looks at, kept ready so that a hit allocates nothing. */
  readonly subject: RevocationSubject
  hit: boolean
}

/** Evictions looked at before the oldest entry goes regardless of its flag. */
const SECOND_CHANCES = 8

export class SessionCache {
  private readonly entries = new Map<string, CachedSession>()
  constructor (readonly max: number) {}

  get size (): number { return this.entries.size }

  get (token: string): CachedSession | undefined {
    return this.entries.get(token)
  }

  set (entry: CachedSession): void {
    if (this.max <= 0) return
    if (!this.entries.has(entry.token)) this.makeRoom()
    this.entries.set(entry.token, entry)
  }

  delete (token: string): void {
    this.entries.delete(token)
  }

  clear (): void {
    this.entries.clear()
  }

  private makeRoom (): void {
    let chances = SECOND_CHANCES
    while (this.entries.size >= this.max) {
      const oldest = this.entries.values().next().value!
      this.entries.delete(oldest.token)
      if (oldest.hit && chances-- > 0 && oldest.expiresAt > Date.now()) {
        oldest.hit = false
        this.entries.set(oldest.token, oldest)
      }
    }
  }
}
