/**
 * Sessions the server can end. A revoked session (`revoked:<jti>`) or a user's "not before" mark
 * (`user-nbf:<user id>`: every session that started earlier is over) lives in the state store, shared by every
 * instance, for as long as a token of it could still be accepted.
 *
 * Tokens seen for the first time are looked up in the store. Sessions served from the verified-session cache are
 * not (that would be a round trip per request): each revocation is also published on the store's `revocations`
 * channel, every instance keeps the revocations it heard of in memory for as long as a cached entry can live,
 * and a cached hit costs two map lookups. Where messages can be missed, the store is asked again:
 * - while the subscription is down (and for stores that cannot publish), on every request;
 * - when it comes back, the whole cache is dropped (a message may have been missed meanwhile);
 * - and in any case at least every `recheckInterval` per cached token, the bound for a subscription that silently
 *   stopped delivering.
 */
import { ErrorCodes, HttpError } from '../../lib/errors.js'
import { unauthorized } from './claims.js'
import type { Logger } from '../../lib/logger.js'
import type { StateStore, Subscription } from '../../lib/state-store/types.js'
import type { Claims } from './types.js'

export const REVOCATION_CHANNEL = 'revocations'
const SESSION_KEY = 'revoked:'
const USER_KEY = 'user-nbf:'
/** Longest session id or user id taken (longer ones are refused as bad input, never stored). */
export const MAX_REVOCATION_ID = 256
/** Revocations remembered in memory at most; past it the oldest are forgotten and the cache is dropped. */
const MAX_LOCAL = 100_000

export interface RevocationConfig {
  store: StateStore
  /** Longest a cached session goes without its revocation being looked up in the store (ms). */
  recheckMs: number
  /** Longest an entry stays in the verified-session cache (ms): how long a heard revocation must be remembered. */
  cacheLifetimeMs: number
  /** Longest a session can be accepted after it was issued, refresh included (ms): how long the store keeps a mark. */
  sessionLifetimeMs: number
  logger: Logger
  /** Called when cached sessions can no longer be trusted (the subscription came back after a gap). */
  dropCache: () => void
}

/** What `cached()` says of a cached session: serve it, refuse it, or look it up in the store first. */
export type CachedState = 'ok' | 'revoked' | 'lookup'

/** The fields of a session revocation looks at. */
export interface RevocationSubject { jti: string; userId: string | undefined; authTime: number }

export function subjectOf (claims: Claims): RevocationSubject {
  const id = claims.user?.id
  return { jti: claims.jti, userId: typeof id === 'string' ? id : undefined, authTime: claims.auth_time ?? 0 }
}

export const revokedError = (): HttpError => unauthorized('session revoked', ErrorCodes.SESSION_REVOKED)

export class Revocations {
  /** jti → when to forget it (ms). */
  private readonly sessions = new Map<string, number>()
  /** user id → not-before (seconds) and when to forget it (ms). */
  private readonly users = new Map<string, { nbf: number; forgetAt: number }>()
  private live = false
  private subscription: Subscription | undefined

  constructor (private readonly cfg: RevocationConfig) {}

  /** Subscribes to the store's revocation channel (a store without publish/subscribe is asked on every request). */
  async start (): Promise<void> {
    const { store } = this.cfg
    if (typeof store.subscribe !== 'function' || typeof store.publish !== 'function') return
    this.subscription = await store.subscribe(REVOCATION_CHANNEL, (m) => { this.receive(m) }, (live) => {
      if (live === this.live) return
      this.live = live
      if (live) this.cfg.dropCache()
      else this.cfg.logger.logf('[WARN] revocation channel lost: cached sessions are checked against the state store until it is back')
    })
  }

  async close (): Promise<void> {
    await this.subscription?.close()
    this.subscription = undefined
    this.live = false
  }

  /** A cached session: serve it, refuse it, or look it up in the store first. Two map lookups. */
  cached (s: RevocationSubject, checkedAt: number, now: number): CachedState {
    if (this.heard(s)) return 'revoked'
    return this.live && now - checkedAt < this.cfg.recheckMs ? 'ok' : 'lookup'
  }

  /** True when the session is revoked: the store's marks, then what this instance heard meanwhile. */
  async isRevoked (s: RevocationSubject): Promise<boolean> {
    const { store } = this.cfg
    const [session, user] = await Promise.all([
      store.get(SESSION_KEY + s.jti),
      s.userId === undefined ? undefined : store.get(USER_KEY + s.userId)
    ])
    if (session !== undefined) return true
    if (user !== undefined && s.authTime < Number(user)) return true
    // A message may have arrived while the store answered.
    return this.heard(s)
  }

  /** Ends one session for `ttlMs` (the longest it could still be accepted). */
  async revokeSession (jti: string, ttlMs = this.cfg.sessionLifetimeMs): Promise<void> {
    checkId(jti, 'session id')
    await this.cfg.store.set(SESSION_KEY + jti, '1', Math.max(1000, ttlMs))
    const message = JSON.stringify({ s: jti })
    this.receive(message)
    await this.cfg.store.publish?.(REVOCATION_CHANNEL, message)
  }

  /** Ends every session of a user that started before now. */
  async revokeUser (userId: string): Promise<void> {
    checkId(userId, 'user id')
    // Milliseconds: a login right after this call (e.g. the fresh session after a password change) survives it.
    const nbf = Date.now() / 1000
    await this.cfg.store.set(USER_KEY + userId, String(nbf), this.cfg.sessionLifetimeMs)
    const message = JSON.stringify({ u: userId, n: nbf })
    this.receive(message)
    await this.cfg.store.publish?.(REVOCATION_CHANNEL, message)
  }

  private heard (s: RevocationSubject): boolean {
    if (this.sessions.size > 0 && this.sessions.has(s.jti)) return true
    if (this.users.size > 0 && s.userId !== undefined) {
      const u = this.users.get(s.userId)
      if (u !== undefined && s.authTime < u.nbf) return true
    }
    return false
  }

  private receive (message: string): void {
    let m: { s?: unknown; u?: unknown; n?: unknown }
    try { m = JSON.parse(message) } catch { return }
    if (m === null || typeof m !== 'object') return
    const now = Date.now()
    this.forget(now)
    const forgetAt = now + this.cfg.cacheLifetimeMs
    if (typeof m.s === 'string') {
      this.sessions.delete(m.s)
      this.sessions.set(m.s, forgetAt)
    } else if (typeof m.u === 'string' && typeof m.n === 'number') {
      const nbf = Math.max(m.n, this.users.get(m.u)?.nbf ?? 0)
      this.users.delete(m.u)
      this.users.set(m.u, { nbf, forgetAt })
    }
    if (this.sessions.size + this.users.size > MAX_LOCAL) {
      // Forgetting a revocation is safe only if no cached session can still depend on it.
      this.cfg.dropCache()
      this.sessions.clear()
      this.users.clear()
    }
  }

  /** Drops what no cached session can need any more (maps are in arrival order). */
  private forget (now: number): void {
    for (const [jti, at] of this.sessions) {
      if (at > now) break
      this.sessions.delete(jti)
    }
    for (const [id, u] of this.users) {
      if (u.forgetAt > now) break
      this.users.delete(id)
    }
  }
}

function checkId (id: unknown, what: string): void {
  if (typeof id !== 'string' || id === '' || id.length > MAX_REVOCATION_ID) {
    throw new HttpError(400, 'bad request', `${what} must be a string of 1-${MAX_REVOCATION_ID} characters`)
  }
}
