/**
 * The authenticator app as a second factor. After a direct provider accepted a password, a user with a confirmed
 * enrolment gets no session: a pending-login cookie (a `handshake` token naming the user, short-lived, HttpOnly,
 * SameSite=Strict, sent only to this provider's login route), and `POST …/login` with a code or a recovery code
 * spends it (once, on every instance sharing the state store) and only then issues the session.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type {} from '@fastify/cookie'
import { ErrorCodes, HttpError } from '../../lib/errors.js'
import { spentLoginKey, type FirstFactorLogin, type PendingLogin, type SecondFactor } from '../../lib/login/second-factor.js'
import type { UserData } from '../../lib/user.js'
import type { TotpContext } from './context.js'

// Spent pending logins are remembered a little past their expiry, covering clock differences between instances.
const SPENT_MARGIN_MS = 60_000
/**
 * Codes (or recovery codes) one pending login takes; the next one ends it, and the password must be typed again:
 * each password sign-in buys a few guesses, however `rateLimit` is set.
 */
export const MAX_CODES_PER_LOGIN = 5

/** A password login waiting for its code. */

export interface PendingLogins {
  factor: SecondFactor
  /** The pending login this browser carries; a 401 when there is none or it expired. */
  read(request: FastifyRequest): Promise<PendingLogin>
  /** Spends it (once) and clears its cookie. */
  spend(reply: FastifyReply, pending: PendingLogin): Promise<void>
  /**
   * Counts a code sent for it, before the code is checked; past `MAX_CODES_PER_LOGIN` the pending login is spent
   * (401 `GATEHOUSE_HANDSHAKE`: sign in with the password again).
   */
  attempt(reply: FastifyReply, pending: PendingLogin): Promise<void>
}

/** How long what is kept of a pending login lives: until it expires, and a little longer. */
function keepOf (pending: PendingLogin): number {
  return Math.max(1, pending.exp * 1000 - Date.now()) + SPENT_MARGIN_MS
}

export function pendingLogins (ctx: TotpContext): PendingLogins {
  const { kit, o } = ctx
  const cookieName = `gatehouse-totp-${o.name}-pending`
  const attrs = { path: `${kit.authPrefix}/${o.name}/login`, httpOnly: true, secure: kit.cookies.secure, sameSite: 'strict' as const }

  const factor: SecondFactor = async (_request, reply, login: FirstFactorLogin) => {
    // Fails closed: a store that cannot answer is a 503 (TotpStoreError), never a login with one factor.
    if ((await ctx.store.get(login.user.id))?.confirmed !== true) return undefined
    const payload: Record<string, unknown> = { provider: o.name, ceremony: 'totp-pending', user: login.user, sessionOnly: login.sessionOnly === true }
    if (login.from !== undefined) payload.from = login.from
    if (login.attempt !== undefined) payload.attempt = login.attempt
    if (login.provider !== undefined) payload.first = login.provider
    const token = await kit.loginState.sign(payload, o.pendingTtlMs, login.aud)
    reply.setCookie(cookieName, token, { ...attrs, maxAge: Math.ceil(o.pendingTtlMs / 1000) })
    ctx.log('INFO', 'password of user %s accepted, waiting for a code', login.user.id)
    return { method: 'totp', details: `confirm with a code from the authenticator app (or a recovery code): POST ${kit.authPrefix}/${o.name}/login` }
  }

  return {
    factor,

    async read (request) {
      const token = request.cookies?.[cookieName]
      const none = new HttpError(401, 'no pending login', 'sign in with the password first (or again: it expired)', ErrorCodes.HANDSHAKE)
      if (token === undefined || token === '') throw none
      const claims = await kit.loginState.verify(token).catch(() => { throw none })
      const user = claims.user as UserData | undefined
      if (claims.provider !== o.name || claims.ceremony !== 'totp-pending' || user === null || typeof user !== 'object' ||
          typeof user.id !== 'string' || typeof user.name !== 'string') throw none
      // Spent under the password login's id, shared with its other second factors (passkeys).
      const id = typeof claims.attempt === 'string' ? claims.attempt : claims.jti as string
      // A login completed already (here or on another instance) is refused before any code is checked or spent.
      if (await ctx.state.get(spentLoginKey(id)) !== undefined) {
        throw new HttpError(403, 'pending login already completed', 'sign in with the password again', ErrorCodes.ALREADY_USED)
      }
      const aud = Array.isArray(claims.aud) && typeof claims.aud[0] === 'string' ? claims.aud[0] : undefined
      const first = typeof claims.first === 'string' ? claims.first : undefined
      return { jti: id, exp: claims.exp as number, user, aud, from: typeof claims.from === 'string' ? claims.from : undefined, sess: claims.sessionOnly === true, first }
    },

    async spend (reply, pending) {
      if (!(await ctx.state.setIfAbsent(spentLoginKey(pending.jti), '1', keepOf(pending)))) {
        reply.clearCookie(cookieName, attrs)
        throw new HttpError(403, 'pending login already completed', 'sign in with the password again', ErrorCodes.ALREADY_USED)
      }
      reply.clearCookie(cookieName, attrs)
    },

    async attempt (reply, pending) {
      const counted = await ctx.state.increment(`totp:${o.name}:tries:${pending.jti}`, keepOf(pending))
      if (counted.count <= MAX_CODES_PER_LOGIN) return
      await ctx.state.setIfAbsent(spentLoginKey(pending.jti), '1', keepOf(pending))
      reply.clearCookie(cookieName, attrs)
      throw new HttpError(401, 'sign-in ended', `${MAX_CODES_PER_LOGIN} codes were tried on this sign-in: sign in with the password again`, ErrorCodes.HANDSHAKE, { reason: 'totp' })
    }
  }
}
