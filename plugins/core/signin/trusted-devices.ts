/**
 * "Trust this device" (option `trustedDevices`): after a second factor confirmed in a browser with `trustDevice`
 * asked for, that browser gets a signed, HttpOnly device cookie for its user, and its later password logins skip
 * the second factor until the cookie expires (`ttl`, default 30 days) or the device is forgotten.
 *
 * The cookie is a `device`-purpose token (its own derived keys: never a session, nor a session one), named per
 * user (a hash of the id), so two users of one browser each keep theirs. It is honoured only for the user it was
 * signed for and only while its id is in that user's list in the state store: the list is what the session list
 * shows and ends, and what `revokeUser` clears. Header and bearer clients (an `Authorization` or token header on
 * the request) neither get nor use one: a device cookie is a browser's.
 */
import { createHash, randomUUID } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type {} from '@fastify/cookie'
import { deviceLabel } from '../../../lib/user-agent.js'
import type { StateStore } from '../../../lib/state-store.js'
import type { CoreTokenService } from '../sessions/tokens.js'
import type { ResolvedOptions } from '../base/types.js'

/** What the trusted devices need of the auth core (its internals, narrowed: no import cycle). */
export interface DeviceCore {
  readonly stateStore: StateStore
  readonly options: Pick<ResolvedOptions, 'audit' | 'authPrefix' | 'cookies' | 'tokenSources'>
  readonly tokens: Pick<CoreTokenService, 'signPurpose' | 'verifyPurpose'>
}

/** A trusted browser as the session list shows it. */
export interface TrustedDevice {
  id: string
  /** When it was trusted (ISO 8601). */
  createdAt: string
  /** When the trust ends at the latest (ISO 8601). */
  expiresAt: string
  /** The user agent reduced to a label (`Firefox on Linux`). */
  device: string
  /** True for the browser of the request that asked. */
  current: boolean
}

interface Entry { id: string; at: number; exp: number; device: string }

const LIST_KEY = 'trusted-devices:'
const COOKIE_PREFIX = 'gatehouse-device-'

export class TrustedDevices {
  constructor (private readonly core: DeviceCore, private readonly ttlMs: number, private readonly maxPerUser: number) {}

  private get store (): StateStore { return this.core.stateStore }

  /** A browser client: no `Authorization` and no session-token header. */
  isBrowser (request: FastifyRequest): boolean {
    if (request.headers.authorization !== undefined) return false
    const header = this.core.options.tokenSources.header
    return header === null || request.headers[header] === undefined
  }

  /** Whether the request's browser is trusted for `userId` (refusals are audited, never thrown). */
  async trusts (request: FastifyRequest, userId: string): Promise<boolean> {
    if (!this.isBrowser(request)) return false
    const value = request.cookies?.[cookieName(userId)]
    if (value === undefined || value === '') return false
    const id = await this.read(request, userId, value)
    if (id === undefined) return false
    const audit = this.core.options.audit
    if (audit.on) audit.emit(request, 'trusted_device.used', { reason: 'trusted', userId })
    return true
  }

  /** Trusts the request's browser for `userId` after its second factor `factor`: list entry, then the cookie. */
  async remember (request: FastifyRequest, reply: FastifyReply, userId: string, factor: string): Promise<void> {
    if (!this.isBrowser(request)) return
    const now = Date.now()
    const entry: Entry = { id: randomUUID(), at: now, exp: now + this.ttlMs, device: deviceLabel(request.headers['user-agent']) }
    const live = (await this.entries(userId)).filter((e) => e.exp > now)
    const kept = [...live, entry].slice(-this.maxPerUser)
    await this.store.set(LIST_KEY + userId, JSON.stringify(kept), this.ttlMs)
    const token = await this.core.tokens.signPurpose('device', { sub: userId, dev: entry.id }, this.ttlMs)
    reply.setCookie(cookieName(userId), token, {
      path: this.core.options.authPrefix, httpOnly: true, secure: this.core.options.cookies.secure, sameSite: 'strict', maxAge: Math.floor(this.ttlMs / 1000)
    })
    const audit = this.core.options.audit
    if (audit.on) audit.emit(request, 'trusted_device.added', { reason: factor, userId })
  }

  /** The user's trusted browsers, newest first; `current` marks the request's own. */
  async list (request: FastifyRequest, userId: string): Promise<TrustedDevice[]> {
    const now = Date.now()
    const own = await this.ownId(request, userId)
    return (await this.entries(userId)).filter((e) => e.exp > now).reverse().map((e) => ({
      id: e.id, createdAt: new Date(e.at).toISOString(), expiresAt: new Date(e.exp).toISOString(), device: e.device, current: e.id === own
    }))
  }

  /** Forgets the user's trusted browsers `ids` selects (all when undefined); resolves how many were forgotten. */
  async forget (request: FastifyRequest | undefined, userId: string, ids?: string[], reason = 'session_list'): Promise<number> {
    const all = await this.entries(userId)
    const gone = ids === undefined ? all : all.filter((e) => ids.includes(e.id))
    if (gone.length === 0) return 0
    const left = all.filter((e) => !gone.includes(e))
    if (left.length === 0) await this.store.delete(LIST_KEY + userId)
    else await this.store.set(LIST_KEY + userId, JSON.stringify(left), Math.max(1, Math.max(...left.map((e) => e.exp)) - Date.now()))
    const audit = this.core.options.audit
    if (audit.on) audit.emit(request, 'trusted_device.removed', { reason, userId, count: gone.length })
    return gone.length
  }

  /** The device id of this request's cookie for `userId` when it verifies, without auditing. */
  private async ownId (request: FastifyRequest, userId: string): Promise<string | undefined> {
    const value = request.cookies?.[cookieName(userId)]
    if (value === undefined || value === '') return undefined
    try {
      const claims = await this.core.tokens.verifyPurpose('device', value)
      return claims.sub === userId && typeof claims.dev === 'string' ? claims.dev : undefined
    } catch {
      return undefined
    }
  }

  /** The id a device cookie names, when it is the user's and still listed; audits a refusal. */
  private async read (request: FastifyRequest, userId: string, value: string): Promise<string | undefined> {
    let reason: string
    try {
      const claims = await this.core.tokens.verifyPurpose('device', value)
      const id = claims.dev
      if (claims.sub !== userId) reason = 'other_user'
      else if (typeof id === 'string' && (await this.entries(userId)).some((e) => e.id === id && e.exp > Date.now())) return id
      else reason = 'forgotten'
    } catch (err) {
      // A store that cannot answer is not a forged cookie: the login answers 503 as any other.
      if ((err as { statusCode?: number | undefined }).statusCode === 503) throw err
      reason = 'invalid'
    }
    const audit = this.core.options.audit
    if (audit.on) audit.emit(request, 'trusted_device.refused', { reason, userId })
    return undefined
  }

  private async entries (userId: string): Promise<Entry[]> {
    const raw = await this.store.get(LIST_KEY + userId)
    if (raw === undefined) return []
    try {
      const list = JSON.parse(raw) as Entry[]
      return Array.isArray(list) ? list.filter((e) => typeof e?.id === 'string' && typeof e.exp === 'number') : []
    } catch {
      return []
    }
  }
}

/** The device cookie of one user: named by a hash of the id, so each user of a browser keeps their own. */
export function cookieName (userId: string): string {
  return COOKIE_PREFIX + createHash('sha256').update(userId).digest('base64url').slice(0, 16)
}
