/**
 * Passkey challenges: one-time, short-lived, bound to the browser that asked, and kept in the state store so any
 * instance can finish what another began.
 *
 * Asking for options (`…/register/options`, `…/login/options`) stores the challenge and what the ceremony is for
 * under a random handle in the state store, and gives the browser a cookie holding that handle, signed as a token
 * of purpose `handshake` (it can never pass for a session), HttpOnly, SameSite=Strict and with its Path limited to
 * the ceremony's routes. Finishing takes the record out of the store atomically before anything is verified, so a
 * challenge is answered once: a replayed response, a second try or a response sent without that browser's cookie
 * all fail.
 */
import { randomBytes } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type {} from '@fastify/cookie'
import { ErrorCodes, HttpError } from '../../lib/errors.js'
import type { StateStore } from '../../lib/state-store.js'
import type { PendingLogin } from '../../lib/login/second-factor.js'
import type { ProviderKit } from '../../plugins/core/kit.js'

export type CeremonyKind = 'register' | 'login'


/** What a ceremony was started for, as kept in the state store. */
export interface CeremonyRecord {
  challenge: string
  /**
   * The user whose passkey must answer: the signed-in user (registration), the user of a typed name or of a
   * pending login; null when a typed name is nobody's (no passkey can answer); absent for a discoverable sign-in.
   */
  userId?: string | null | undefined
  aud?: string | undefined
  from?: string | undefined
  sess?: boolean | undefined
  /** The session that asked for a registration's options: only it may finish the registration. */
  sessionId?: string | undefined
  /** Set when the ceremony confirms a password login (second factor). */
  pending?: PendingLogin | undefined
}

export interface Ceremonies {
  /**
   * Keeps the record and gives the browser its cookie. The record counts against the requesting client's share of
   * the state store (`rateLimit.clientKey`), so one client asking for options without end cannot fill it.
   */
  begin(request: FastifyRequest, reply: FastifyReply, kind: CeremonyKind, record: CeremonyRecord): Promise<void>
  /** Takes the record of this browser's ceremony (once), clearing the cookie; throws a 4xx otherwise. */
  finish(request: FastifyRequest, reply: FastifyReply, kind: CeremonyKind): Promise<CeremonyRecord>
}

export function ceremonies (kit: ProviderKit, name: string, store: StateStore, ttlMs: number): Ceremonies {
  const cookieOf = (kind: CeremonyKind): { name: string; attrs: { path: string; httpOnly: true; secure: boolean; sameSite: 'strict' } } => ({
    name: `gatehouse-passkey-${name}-${kind}`,
    // Set and cleared with the same attributes, so the clearing header is never the weaker one.
    attrs: { path: `${kit.authPrefix}/${name}/${kind}`, httpOnly: true, secure: kit.cookies.secure, sameSite: 'strict' }
  })
  const keyOf = (kind: CeremonyKind, handle: string): string => `passkey:${name}:${kind}:${handle}`

  return {
    async begin (request, reply, kind, record) {
      const handle = randomBytes(24).toString('base64url')
      await store.set(keyOf(kind, handle), JSON.stringify(record), ttlMs, { client: kit.throttle.clientKey(request) })
      const token = await kit.loginState.sign({ provider: name, ceremony: kind, handle }, ttlMs)
      const cookie = cookieOf(kind)
      reply.setCookie(cookie.name, token, { ...cookie.attrs, maxAge: Math.ceil(ttlMs / 1000) })
    },

    async finish (request, reply, kind) {
      const cookie = cookieOf(kind)
      const token = request.cookies?.[cookie.name]
      // Every answer ends the ceremony: good or bad, the browser must ask for new options.
      reply.clearCookie(cookie.name, cookie.attrs)
      if (token === undefined || token === '') {
        throw new HttpError(400, 'no passkey ceremony in progress', `ask for options first (POST …/${kind}/options) in this browser`, ErrorCodes.HANDSHAKE)
      }
      let claims: Record<string, unknown>
      try {
        claims = await kit.loginState.verify(token)
      } catch {
        throw new HttpError(403, 'passkey challenge expired or invalid', 'ask for new options', ErrorCodes.HANDSHAKE)
      }
      if (claims.provider !== name || claims.ceremony !== kind || typeof claims.handle !== 'string') {
        throw new HttpError(403, 'passkey challenge expired or invalid', 'the challenge belongs to another ceremony', ErrorCodes.HANDSHAKE)
      }
      const stored = await store.take(keyOf(kind, claims.handle))
      if (stored === undefined) throw new HttpError(403, 'passkey challenge already used', 'each challenge is answered once: ask for new options', ErrorCodes.ALREADY_USED)
      return JSON.parse(stored) as CeremonyRecord
    }
  }
}
