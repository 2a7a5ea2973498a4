/**
 * "Where you're signed in": the list of a user's sessions, kept in the state store's session index
 * (stores/state/session-index.ts) beside revocation. A session enters it at login (with its provider) and is
 * merged in whenever it is seen: at most once a minute per session and instance, handed from the hot path to a
 * batch that is written a few seconds later (one write per user per batch), never waited for by a request.
 *
 * Ending a listed session is revocation's (`revokeSession`); the list leaves out sessions revoked by any path
 * (logout, `revokeSession`, `revokeUser`, the revocation epoch), looking them up when it is read.
 */
import { createHash } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import { HttpError } from '../../../lib/errors.js'
import type { Logger } from '../../../lib/logging/logger.js'
import type { ClientKey } from '../../../lib/throttle/client.js'
import { deviceLabel } from '../../../lib/user-agent.js'
import type { IndexedSession, SessionIndex, SessionSighting } from '../../../stores/state/session-index.js'
import { LEEWAY_S } from '../base/claims.js'
import type { CachedSession } from './session-cache.js'
import { MAX_REVOCATION_ID, type Revocations } from './revocation.js'
import type { Claims, ListedSession, ResolvedOptions } from '../base/types.js'

/** A session's last-seen time is written at most this often per instance. */
export const SEEN_INTERVAL_MS = 60_000
/** How long sightings wait before they are written together. */
const FLUSH_DELAY_MS = 5_000
/** Users with sightings waiting at most; past it they are written at once. */
const MAX_PENDING_USERS = 10_000

/** How addresses are kept (`revocation.sessionList.ip`). */
export type IpMode = 'address' | 'hash' | false

export interface SessionListConfig {
  index: SessionIndex
  revocations: Revocations
  maxPerUser: number
  ip: IpMode
  clientKey: ClientKey
  /** Absolute session lifetime (s): when a session ends at the latest. */
  maxAgeSeconds: number
  /** Salt of address hashes (the issuer: the same on every instance of one service). */
  salt: string
  logger: Logger
}

export class SessionList {
  /** user id → session id → the latest sighting not yet written. */
  private pending = new Map<string, Map<string, SessionSighting>>()
  private timer: NodeJS.Timeout | undefined
  private flushing: Promise<void> = Promise.resolve()

  constructor (private readonly cfg: SessionListConfig) {}

  /**
   * A login: the session is written now (the list shows it at once). A store failure costs the entry, not the login.
   * `device` replaces the user agent's label (a registered client's name).
   */
  async login (request: FastifyRequest, claims: Claims, provider: string | null, device?: string): Promise<void> {
    const userId = claims.user?.id
    if (typeof userId !== 'string' || userId === '') return
    const entry = { ...this.entryOf(claims, request, Date.now()), provider, ...(device === undefined ? {} : { device }) }
    try {
      await this.cfg.index.merge(userId, [{ id: entry.id, lastSeenAt: entry.lastSeenAt, ip: entry.ip, create: entry }], this.cfg.maxPerUser)
    } catch (err) {
      this.cfg.logger.logf('[WARN] session list: login of %s not recorded: %s', userId, err instanceof Error ? err.message : String(err))
    }
  }

  /**
   * The session of a cached entry was seen: noted for the next batch. Called from the hot path at most once a
   * minute per entry (the caller compares `seenAt`); costs a few small objects then, nothing in between.
   */
  sighted (entry: CachedSession, request: FastifyRequest, now: number): void {
    entry.seenAt = now
    const userId = entry.subject.userId
    if (userId === undefined || userId === '') return
    const create = this.entryOf(entry.claims, request, now)
    let sessions = this.pending.get(userId)
    if (sessions === undefined) this.pending.set(userId, sessions = new Map())
    sessions.set(create.id, { id: create.id, lastSeenAt: now, ip: create.ip, create })
    if (this.pending.size >= MAX_PENDING_USERS) this.flushSoon(0)
    else this.flushSoon(FLUSH_DELAY_MS)
  }

  /** Writes every waiting sighting: one merge per user. Failures are logged (a last-seen time is not worth a 5xx). */
  async flush (): Promise<void> {
    clearTimeout(this.timer)
    this.timer = undefined
    const batch = this.pending
    this.pending = new Map()
    const max = this.cfg.maxPerUser
    const run = this.flushing.then(async () => {
      const results = await Promise.allSettled([...batch].map(async ([userId, s]) => { await this.cfg.index.merge(userId, [...s.values()], max) }))
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
      if (failed !== undefined) this.cfg.logger.logf('[WARN] session list: last-seen times not written: %s', String(failed.reason?.message ?? failed.reason))
    })
    this.flushing = run
    await run
  }

  /** The user's live sessions, the current one first, then by last use. */
  async list (userId: string, currentId: string | null): Promise<ListedSession[]> {
    const live = await this.live(userId)
    return live
      .sort((a, b) => Number(b.id === currentId) - Number(a.id === currentId) || b.lastSeenAt - a.lastSeenAt)
      .map((e) => ({
        id: e.id,
        current: e.id === currentId,
        provider: e.provider,
        createdAt: new Date(e.createdAt).toISOString(),
        lastSeenAt: new Date(e.lastSeenAt).toISOString(),
        expiresAt: new Date(e.expiresAt).toISOString(),
        device: e.device,
        ip: e.ip
      }))
  }

  /**
   * Revokes the sessions of `userId` with these ids that are live in its list (on every instance, from the next
   * request on) and removes them from it. Returns the ids revoked: an id of another user, made up, expired or
   * revoked already is not among them.
   */
  async revoke (userId: string, ids: (ids: string[]) => string[]): Promise<string[]> {
    const live = await this.live(userId)
    const chosen = new Set(ids(live.map((e) => e.id)))
    const ending = live.filter((e) => chosen.has(e.id))
    const now = Date.now()
    await Promise.all(ending.map(async (e) => {
      await this.cfg.revocations.revokeSession(e.id, e.expiresAt + LEEWAY_S * 1000 - now)
    }))
    await this.cfg.index.remove(userId, ending.map((e) => e.id))
    return ending.map((e) => e.id)
  }

  /**
   * "Sign out everywhere else": revokes every listed session of `userId` but `current` (the ids revoked), and every
   * other session of the user that started before now, those dropped from the list past `maxPerUser` included
   * (a not-before mark that spares `current`).
   */
  async endOthers (userId: string, current: { jti: string; authTime: number }): Promise<string[]> {
    const ended = await this.revoke(userId, (ids) => ids.filter((x) => x !== current.jti))
    await this.cfg.revocations.revokeUser(userId, current)
    return ended
  }

  async close (): Promise<void> {
    await this.flush()
  }

  /** The unexpired, unrevoked entries of a user; revoked ones found on the way are removed from the index. */
  private async live (userId: string): Promise<IndexedSession[]> {
    checkUserId(userId)
    const entries = await this.cfg.index.list(userId)
    const revoked = await this.cfg.revocations.revokedAmong(userId, entries.map((e) => ({ jti: e.id, authTime: e.createdAt / 1000, since: (e.startedAt ?? e.createdAt) / 1000 })))
    const gone = entries.filter((_, i) => revoked[i] === true).map((e) => e.id)
    if (gone.length > 0) await this.cfg.index.remove(userId, gone)
    return entries.filter((_, i) => revoked[i] !== true)
  }

  private entryOf (claims: Claims, request: FastifyRequest, now: number): IndexedSession {
    const authTime = claims.auth_time ?? claims.iat
    return {
      id: claims.jti,
      provider: null,
      createdAt: Math.round(authTime * 1000),
      ...(claims.started_at === undefined ? undefined : { startedAt: Math.round(claims.started_at * 1000) }),
      lastSeenAt: now,
      expiresAt: Math.max(claims.exp, Math.floor(authTime) + this.cfg.maxAgeSeconds) * 1000,
      device: deviceLabel(request.headers['user-agent']),
      ip: this.ipOf(request)
    }
  }

  private ipOf (request: FastifyRequest): string | null {
    if (this.cfg.ip === false) return null
    let key: string
    try { key = String(this.cfg.clientKey(request)).slice(0, 64) } catch { return null }
    if (this.cfg.ip === 'address') return key
    return createHash('sha256').update(`${this.cfg.salt}\n${key}`).digest('base64url').slice(0, 16)
  }

  private flushSoon (delayMs: number): void {
    if (this.timer !== undefined && delayMs > 0) return
    clearTimeout(this.timer)
    this.timer = setTimeout(() => { this.flush().catch(() => {}) }, delayMs)
    this.timer.unref()
  }
}

/** The provider a login came through: the name in its route (`{authPrefix}/<name>/...`), when it is one mounted. */
export function providerOfRoute (request: FastifyRequest, o: Pick<ResolvedOptions, 'authPrefix'>, mounted: ReadonlyMap<string, unknown>): string | null {
  const url = request.routeOptions?.url
  if (typeof url !== 'string' || !url.startsWith(`${o.authPrefix}/`)) return null
  const name = url.slice(o.authPrefix.length + 1).split('/')[0] ?? ''
  return mounted.has(name) ? name : null
}

function checkUserId (userId: unknown): void {
  if (typeof userId !== 'string' || userId === '' || userId.length > MAX_REVOCATION_ID) {
    throw new HttpError(400, 'bad request', `user id must be a string of 1-${MAX_REVOCATION_ID} characters`)
  }
}
