/**
 * Sessions the server can end. A revoked session (`revoked:<jti>`) or a user's "not before" mark
 * (`user-nbf:<user id>`: every session that started earlier, or in the same millisecond, is over; `<nbf> <jti>`:
 * all but that one, the session that asked to end its user's others) lives in the state store, shared by every
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
 * A revocation answers only once every instance the message reached has applied it (see `Acknowledgements`), or
 * after `ackDeadlineMs`: so "from the next request on" holds on every instance that is listening.
 *
 * A store that loses its data (a Redis restart without persistence, a flush, an eviction) loses revocations with
 * it. A shared store therefore holds a revocation epoch (`revocation-epoch`: when its data began); when it is
 * missing, it is set to now, and every session that started before it is refused: it may have been revoked.
 * "Started" on this service: a session moved from go-pkgz/auth, or a client's family opened from a browser's
 * session, started when it was made here (`started_at`), however old its sign-in (`auth_time`) is.
 */
import { ErrorCodes, HttpError } from '../../../lib/errors.js'
import { unauthorized } from '../base/claims.js'
import type { Logger } from '../../../lib/logging/logger.js'
import { MemoryStateStore } from '../../../stores/state/memory.js'
import type { StateStore, Subscription } from '../../../lib/state-store.js'
import { Acknowledgements } from '../base/revocation-acks.js'
import type { Claims } from '../base/types.js'

export const REVOCATION_CHANNEL = 'revocations'
const SESSION_KEY = 'revoked:'
const USER_KEY = 'user-nbf:'
/** Longest session id or user id taken (longer ones are refused as bad input, never stored). */
export const MAX_REVOCATION_ID = 256
/** Revocations remembered in memory at most; past it the oldest are forgotten and the cache is dropped. */
const MAX_LOCAL = 100_000
const EPOCH_KEY = 'revocation-epoch'
/** The epoch lives as good as forever (every state-store entry has a lifetime): ten years. */
const EPOCH_TTL_MS = 10 * 365 * 24 * 3_600_000
/** Longest a revocation waits for other instances' acknowledgements before it answers anyway. */
export const ACK_DEADLINE_MS = 500

/**
 * A message on the revocation channel: a session (`s`), a user's not-before (`u`, `n`, and `k` the session it
 * spares), or an acknowledgement (`a`).
 */
interface Message { s?: unknown; u?: unknown; n?: unknown; k?: unknown; i?: unknown; a?: unknown }

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
  /** Longest wait for other instances' acknowledgements (ms). Default `ACK_DEADLINE_MS`. */
  ackDeadlineMs?: number | undefined
}

/** What `cached()` says of a cached session: serve it, refuse it, or look it up in the store first. */
export type CachedState = 'ok' | 'revoked' | 'lookup'

/**
 * The fields of a session revocation looks at: its id, its user, its sign-in (`authTime`, which a user's
 * not-before mark ends), and when it started on this service (`since`, seconds: `started_at`, else the sign-in),
 * which the store's revocation epoch is compared with.
 */
export interface RevocationSubject { jti: string; userId: string | undefined; authTime: number; since: number }

export function subjectOf (claims: Claims): RevocationSubject {
  const id = claims.user?.id
  const authTime = claims.auth_time ?? 0
  return { jti: claims.jti, userId: typeof id === 'string' ? id : undefined, authTime, since: claims.started_at ?? authTime }
}

export const revokedError = (): HttpError => unauthorized('session revoked', ErrorCodes.SESSION_REVOKED)

/** The state-store key of a session's revocation mark (the head of a group its owner's entries may join). */
export function sessionMarkKey (jti: string): string {
  return SESSION_KEY + jti
}

export class Revocations {
  /** jti → when to forget it (ms). */
  private readonly sessions = new Map<string, number>()
  /** user id → not-before (seconds), the session it spares, and when to forget it (ms). */
  private readonly users = new Map<string, UserMark & { forgetAt: number }>()
  private live = false
  private subscription: Subscription | undefined
  private readonly acks: Acknowledgements
  /** Whether the store keeps a revocation epoch: a shared store (the memory store lives and dies with us). */
  private readonly epochs: boolean
  /** The store's revocation epoch as last read (ms): sessions that started earlier are refused. */
  private epoch = 0
  /** The store, when it is the plain in-memory store, whose marks can be read without a promise. */
  private readonly local: MemoryStateStore | undefined

  constructor (private readonly cfg: RevocationConfig) {
    this.acks = new Acknowledgements(cfg.ackDeadlineMs ?? ACK_DEADLINE_MS)
    this.epochs = !(cfg.store instanceof MemoryStateStore)
    // The exact class only: a subclass may answer `get` otherwise.
    this.local = cfg.store.constructor === MemoryStateStore ? cfg.store as MemoryStateStore : undefined
  }

  /**
   * Reads (or starts) the store's epoch, warns once when the store's configuration can lose revocations, and
   * subscribes to the revocation channel (a store without publish/subscribe is asked on every request).
   */
  async start (): Promise<void> {
    const { store } = this.cfg
    if (this.epochs) {
      try {
        this.epoch = await this.readEpoch(await store.get(EPOCH_KEY))
      } catch { /* a store that cannot answer now is asked again at the first look-up */ }
      await this.warnDurability()
    }
    if (typeof store.subscribe !== 'function' || typeof store.publish !== 'function') return
    this.subscription = await store.subscribe(REVOCATION_CHANNEL, (m) => { this.heardOnChannel(m) }, (live) => {
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

  /**
   * True when the session is revoked: the store's marks and epoch, then what this instance heard meanwhile. A
   * caller that read the session's mark already (under `sessionMarkKey`, beside its own entries: the refresh
   * grant) passes what it found, and the store is not asked for it again.
   */
  async isRevoked (s: RevocationSubject, sessionMark?: { value: string | undefined }): Promise<boolean> {
    return sessionMark === undefined ? await this.revoked(s) : await this.revokedInStore(s, sessionMark.value)
  }

  /**
   * As `isRevoked`, answered without a promise when the store is the plain in-memory store (its marks are read
   * synchronously, and it keeps no epoch).
   */
  revoked (s: RevocationSubject): boolean | Promise<boolean> {
    const local = this.local
    if (local === undefined) return this.revokedInStore(s)
    if (local.getNow(SESSION_KEY + s.jti) !== undefined) return true
    const user = s.userId === undefined ? undefined : local.getNow(USER_KEY + s.userId)
    return (user !== undefined && markEnds(parseMark(user), s)) || this.heard(s)
  }

  private async revokedInStore (s: RevocationSubject, ...sessionMark: [string | undefined] | []): Promise<boolean> {
    const { store } = this.cfg
    const [session, user, epoch] = await Promise.all([
      sessionMark.length > 0 ? sessionMark[0] : store.get(SESSION_KEY + s.jti),
      s.userId === undefined ? undefined : store.get(USER_KEY + s.userId),
      this.epochs ? store.get(EPOCH_KEY) : undefined
    ])
    if (session !== undefined) return true
    if (user !== undefined && markEnds(parseMark(user), s)) return true
    if (this.epochs) this.newEpoch(await this.readEpoch(epoch))
    // A message may have arrived while the store answered.
    return this.heard(s)
  }

  /**
   * Which of one user's sessions are revoked (for the session list): one look-up of the user's mark and the
   * epoch for all of them, then one per session, all at once.
   */
  async revokedAmong (userId: string, sessions: ReadonlyArray<{ jti: string; authTime: number; since: number }>): Promise<boolean[]> {
    if (sessions.length === 0) return []
    const { store } = this.cfg
    const [user, epoch, ...marks] = await Promise.all([
      store.get(USER_KEY + userId),
      this.epochs ? store.get(EPOCH_KEY) : undefined,
      ...sessions.map(async (s) => await store.get(SESSION_KEY + s.jti))
    ])
    if (this.epochs) this.newEpoch(await this.readEpoch(epoch))
    const mark = user === undefined ? undefined : parseMark(user)
    return sessions.map((s, i) => marks[i] !== undefined || (mark !== undefined && markEnds(mark, s)) || this.heard({ jti: s.jti, userId, authTime: s.authTime, since: s.since }))
  }

  /** Ends one session for `ttlMs` (the longest it could still be accepted). */
  async revokeSession (jti: string, ttlMs = this.cfg.sessionLifetimeMs): Promise<void> {
    checkId(jti, 'session id')
    await this.cfg.store.set(SESSION_KEY + jti, '1', Math.max(1000, ttlMs))
    await this.announce({ s: jti })
  }

  /**
   * Ends every session of a user that started before now; with `spare`, all but that one (the session that asked
   * to end its user's other sessions: those dropped from the session list included). A session an earlier mark
   * ended is not spared.
   */
  async revokeUser (userId: string, spare?: { jti: string; authTime: number }): Promise<void> {
    checkId(userId, 'user id')
    if (spare !== undefined) checkId(spare.jti, 'session id')
    // Milliseconds: a login right after this call (e.g. the fresh session after a password change) survives it.
    const nbf = Date.now() / 1000
    let keep = spare?.jti
    if (spare !== undefined) {
      const earlier = await this.cfg.store.get(USER_KEY + userId)
      if (earlier !== undefined && markEnds(parseMark(earlier), spare)) keep = undefined
    }
    await this.cfg.store.set(USER_KEY + userId, keep === undefined ? String(nbf) : `${nbf} ${keep}`, this.cfg.sessionLifetimeMs)
    await this.announce(keep === undefined ? { u: userId, n: nbf } : { u: userId, n: nbf, k: keep })
  }

  /**
   * Applies a revocation here, then tells the other instances and waits until each one the store delivered it to
   * has applied it (bounded by the deadline). Without a live subscription of our own, acknowledgements cannot be
   * heard: the message is sent without waiting.
   */
  private async announce (m: Message): Promise<void> {
    this.apply(m)
    const { store } = this.cfg
    if (typeof store.publish !== 'function') return
    if (!this.live) {
      await store.publish(REVOCATION_CHANNEL, JSON.stringify(m))
      return
    }
    await this.acks.publishAndWait(async (i) => await store.publish!(REVOCATION_CHANNEL, JSON.stringify({ ...m, i })))
  }

  /** A message from the channel: an acknowledgement is counted; a revocation is applied, then acknowledged. */
  private heardOnChannel (message: string): void {
    let m: Message
    try { m = JSON.parse(message) } catch { return }
    if (m === null || typeof m !== 'object') return
    if (typeof m.a === 'string') {
      this.acks.acknowledged(m.a)
      return
    }
    this.apply(m)
    if (typeof m.i === 'string') this.cfg.store.publish?.(REVOCATION_CHANNEL, JSON.stringify({ a: m.i }), { count: false }).catch(() => {})
  }

  /** Takes a later epoch: cached sessions of before it were accepted under revocations the store no longer has. */
  private newEpoch (epoch: number): void {
    if (epoch <= this.epoch) return
    if (this.epoch > 0) this.cfg.logger.logf('[WARN] the state store lost its revocations (restart without persistence, flush or eviction): sessions that started before it are refused')
    this.epoch = epoch
    this.cfg.dropCache()
  }

  /**
   * The store's epoch from its stored value; a missing (or mangled) one is set to now: the store is new or lost
   * its data, and with it any revocation of a session that started before now.
   */
  private async readEpoch (stored: string | undefined): Promise<number> {
    const value = stored === undefined ? NaN : Number(stored)
    if (Number.isFinite(value)) return value
    const { store } = this.cfg
    const now = Date.now()
    if (stored !== undefined) await store.set(EPOCH_KEY, String(now), EPOCH_TTL_MS)
    else if (!await store.setIfAbsent(EPOCH_KEY, String(now), EPOCH_TTL_MS)) return await this.readEpoch(await store.get(EPOCH_KEY) ?? String(now))
    return now
  }

  /** Warns once when the store says it may lose entries (a Redis store reads its configuration). */
  private async warnDurability (): Promise<void> {
    const check = (this.cfg.store as { durabilityWarnings?: (() => Promise<string[]>) | undefined }).durabilityWarnings
    if (typeof check !== 'function') return
    try {
      for (const warning of await check.call(this.cfg.store)) this.cfg.logger.logf('[WARN] state store: %s', warning)
    } catch { /* a store that cannot tell says nothing */ }
  }

  private heard (s: RevocationSubject): boolean {
    // The epoch is when the store's data began: a session that started here before it may have lost a revocation.
    if (s.since * 1000 < this.epoch) return true
    if (this.sessions.size > 0 && this.sessions.has(s.jti)) return true
    if (this.users.size > 0 && s.userId !== undefined) {
      const u = this.users.get(s.userId)
      if (u !== undefined && markEnds(u, s)) return true
    }
    return false
  }

  private apply (m: Message): void {
    const now = Date.now()
    this.forget(now)
    const forgetAt = now + this.cfg.cacheLifetimeMs
    if (typeof m.s === 'string') {
      this.sessions.delete(m.s)
      this.sessions.set(m.s, forgetAt)
    } else if (typeof m.u === 'string' && typeof m.n === 'number') {
      // The later mark wins whole (with the session it spares): messages may arrive out of order.
      const earlier = this.users.get(m.u)
      const mark = earlier !== undefined && earlier.nbf > m.n ? earlier : { nbf: m.n, keep: typeof m.k === 'string' ? m.k : undefined }
      this.users.delete(m.u)
      this.users.set(m.u, { nbf: mark.nbf, keep: mark.keep, forgetAt })
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

/** A user's not-before mark: sessions that started at or before `nbf` (seconds) are over, but `keep`. */
interface UserMark { nbf: number; keep: string | undefined }

/** A stored mark: `<nbf>`, or `<nbf> <jti>` sparing that session. */
function parseMark (stored: string): UserMark {
  const cut = stored.indexOf(' ')
  return cut < 0 ? { nbf: Number(stored), keep: undefined } : { nbf: Number(stored.slice(0, cut)), keep: stored.slice(cut + 1) }
}

function markEnds (mark: UserMark, s: { jti: string; authTime: number }): boolean {
  return s.authTime <= mark.nbf && s.jti !== mark.keep
}

function checkId (id: unknown, what: string): void {
  if (typeof id !== 'string' || id === '' || id.length > MAX_REVOCATION_ID) {
    throw new HttpError(400, 'bad request', `${what} must be a string of 1-${MAX_REVOCATION_ID} characters`)
  }
}
