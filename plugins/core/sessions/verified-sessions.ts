/**
 * What the token service does with the verified-session cache (plugins/core/sessions/session-cache.ts): remember a token
 * just verified or signed, serve an entry only while its token is unexpired, its key still in its audience's ring
 * and its session not revoked, and re-check an entry the fast test did not clear.
 */
import { User } from '../../../lib/user.js'
import type { JwsKey } from '../base/jws.js'
import type { KeyRings } from '../keys/keys.js'
import { audOf, deepFreeze } from '../base/claims.js'
import { SessionCache, type CachedSession } from './session-cache.js'
import { revokedError, subjectOf, type Revocations } from './revocation.js'
import type { Claims } from '../base/types.js'

export class VerifiedSessions {
  readonly cache: SessionCache
  private readonly staticKeys: boolean

  constructor (
    cacheSize: number,
    private readonly tokenDurationMs: number,
    private readonly keys: KeyRings,
    signingKeys: readonly JwsKey[] | undefined,
    private readonly revocations: Revocations | null,
    /** Whether entries are handed to the session list (else their `seenAt` stays Infinity). */
    private readonly listed: boolean
  ) {
    this.cache = new SessionCache(cacheSize)
    this.staticKeys = signingKeys !== undefined
  }

  /**
   * A cache entry for a token just verified or signed. Claims that do not come from parsing the token are copied
   * through JSON first: the entry then holds exactly what the token carries, and nothing the caller keeps.
   */
  remember (token: string, claims: Claims, key: JwsKey, now: number, copy: boolean): CachedSession {
    const own = deepFreeze(copy ? JSON.parse(JSON.stringify(claims)) as Claims : claims)
    const u = own.user
    const entry: CachedSession = {
      token,
      claims: own,
      user: u !== null && typeof u === 'object' ? deepFreeze(new User(u)) : null,
      key,
      keyOrigin: this.keys.originOf(key),
      aud: audOf(own),
      // Never past `exp`, and never longer than a token lives (revocations are remembered that long).
      expiresAt: Math.min(own.exp * 1000, now + this.tokenDurationMs),
      checkedAt: now,
      subject: subjectOf(own),
      jtiCodes: codesOf(own.jti),
      hit: false,
      seenAt: this.listed ? now : Infinity,
      slot: -1
    }
    this.cache.set(entry)
    return entry
  }

  /** The fast test of the hot path: unexpired, key current (synchronously), no revocation heard or due. */
  servable (entry: CachedSession, now: number): boolean {
    return entry.expiresAt > now && this.keyCurrent(entry) === true &&
      (this.revocations === null || this.revocations.cached(entry.subject, entry.checkedAt, now) === 'ok')
  }

  /** A cached entry that the fast test did not clear: expired, key gone, revoked, or due for a store lookup. */
  async recheck (entry: CachedSession, now: number): Promise<CachedSession | undefined> {
    if (entry.expiresAt <= now || !(await this.keyCurrent(entry))) {
      this.cache.delete(entry.token)
      return undefined
    }
    const revocations = this.revocations
    if (revocations !== null) {
      const state = revocations.cached(entry.subject, entry.checkedAt, now)
      if (state === 'revoked' || (state === 'lookup' && await revocations.isRevoked(entry.subject))) {
        this.cache.delete(entry.token)
        throw revokedError()
      }
      entry.checkedAt = now
    }
    return entry
  }

  /**
   * True when the key that verified a cached token is still in its audience's ring (sync for a sync reader): the
   * secret reader is asked on every request, and answering what it answered when the entry was made settles it.
   */
  private keyCurrent (entry: CachedSession): boolean | Promise<boolean> {
    if (this.staticKeys) return true
    return this.keys.holds(entry.aud, entry.key, entry.keyOrigin)
  }
}

function codesOf (text: string): Uint16Array {
  const codes = new Uint16Array(text.length)
  for (let i = 0; i < text.length; i++) codes[i] = text.charCodeAt(i)
  return codes
}
