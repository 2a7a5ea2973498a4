/**
 * Passkeys as a second factor. After a direct provider accepted a password, a user who holds a passkey gets no
 * session: the answer is 401 `GATEHOUSE_SECOND_FACTOR` and a pending-login cookie, a token of purpose
 * `handshake` (never usable as a session) naming the user, short-lived, HttpOnly, SameSite=Strict and sent only
 * to this provider's login routes. Asking for login options with it asks for one of that user's passkeys; the
 * passkey's answer spends the pending login (once) and only then is the session issued.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type {} from '@fastify/cookie'
import { ErrorCodes, HttpError } from '../../lib/errors.js'
import { spentLoginKey, type FirstFactorLogin, type PendingLogin, type SecondFactor, type SecondFactorStep } from '../../lib/login/second-factor.js'
import type { StateStore } from '../../lib/state-store.js'
import type { UserData } from '../../lib/user.js'
import type { ProviderKit } from '../../plugins/core/kit.js'
import type { PasskeyStore } from '../../stores/passkey/index.js'

// Spent pending logins are remembered a little past their expiry, covering clock differences between instances.
const SPENT_MARGIN_MS = 60_000

export interface PendingLogins {
  /** The second factor the direct providers named in `secondFactor` call after a right password. */
  factor: SecondFactor
  /** The pending login this browser carries, if any and still valid. */
  read(request: FastifyRequest): Promise<PendingLogin | undefined>
  /** Whether the request carries a pending-login cookie at all (valid or not: `read` tells). */
  carries(request: FastifyRequest): boolean
  /** Spends the pending login (once, on every instance sharing the store) and clears its cookie. */
  spend(reply: FastifyReply, pending: PendingLogin): Promise<void>
}

export function pendingLogins (kit: ProviderKit, name: string, ttlMs: number, state: StateStore, passkeys: PasskeyStore): PendingLogins {
  const cookieName = `gatehouse-passkey-${name}-pending`
  const attrs = { path: `${kit.authPrefix}/${name}/login`, httpOnly: true, secure: kit.cookies.secure, sameSite: 'strict' as const }

  async function factor (_request: FastifyRequest, reply: FastifyReply, login: FirstFactorLogin): Promise<SecondFactorStep | undefined> {
    // Fails closed: a passkey store that cannot answer is a 503 (PasskeyStoreError), never a login with one factor.
    if ((await passkeys.list(login.user.id)).length === 0) return undefined
    // The audience was checked by the mount before the password was (the first factor's login prelude).
    const payload: Record<string, unknown> = { provider: name, ceremony: 'pending', user: login.user, sessionOnly: login.sessionOnly === true }
    if (login.from !== undefined) payload.from = login.from
    if (login.attempt !== undefined) payload.attempt = login.attempt
    if (login.provider !== undefined) payload.first = login.provider
    const token = await kit.loginState.sign(payload, ttlMs, login.aud)
    reply.setCookie(cookieName, token, { ...attrs, maxAge: Math.ceil(ttlMs / 1000) })
    kit.logger.logf('[INFO] passkey %s: password of user %s accepted, waiting for a passkey', name, login.user.id)
    return { method: 'passkey', details: `confirm with a passkey: POST ${kit.authPrefix}/${name}/login/options, then ${kit.authPrefix}/${name}/login` }
  }

  return {
    factor,

    carries: (request) => typeof request.cookies?.[cookieName] === 'string' && request.cookies[cookieName] !== '',

    async read (request) {
      const token = request.cookies?.[cookieName]
      if (token === undefined || token === '') return undefined
      let claims: Record<string, unknown>
      try {
        claims = await kit.loginState.verify(token)
      } catch {
        return undefined // expired or forged: as if there were none (it never grants anything by itself)
      }
      const user = claims.user as UserData | undefined
      if (claims.provider !== name || claims.ceremony !== 'pending' || user === null || typeof user !== 'object' || typeof user.id !== 'string' || typeof user.name !== 'string') return undefined
      const aud = Array.isArray(claims.aud) && typeof claims.aud[0] === 'string' ? claims.aud[0] : undefined
      // Spent under the password login's id, shared with its other second factors (an authenticator app).
      return { jti: typeof claims.attempt === 'string' ? claims.attempt : claims.jti as string, exp: claims.exp as number, user: { name: user.name, id: user.id }, aud, from: typeof claims.from === 'string' ? claims.from : undefined, sess: claims.sessionOnly === true, first: typeof claims.first === 'string' ? claims.first : undefined }
    },

    async spend (reply, pending) {
      reply.clearCookie(cookieName, attrs)
      const keepMs = Math.max(1, pending.exp * 1000 - Date.now()) + SPENT_MARGIN_MS
      if (pending.exp * 1000 <= Date.now()) throw new HttpError(401, 'pending login expired', 'sign in with the password again', ErrorCodes.TOKEN_EXPIRED)
      if (!(await state.setIfAbsent(spentLoginKey(pending.jti), '1', keepMs))) {
        throw new HttpError(403, 'pending login already completed', 'sign in with the password again', ErrorCodes.ALREADY_USED)
      }
    }
  }
}
