/**
 * Logout's part of revocation: the session a request presents is revoked (for as long as it could still be
 * accepted); with `everywhere` (`POST …/logout?all=1`), every session of its user too, which a cookie session asks
 * with its XSRF header, like any request that changes something.
 */
import type { FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError } from '../../../lib/errors.js'
import { audOf, LEEWAY_S, unauthorized } from '../base/claims.js'
import { revokedError, subjectOf, type Revocations } from './revocation.js'
import type { TokenReader, TokenSource } from './token-reader.js'
import type { Verify } from '../keys/verify.js'
import { mustRefresh, type SessionLifetime } from './lifetime.js'
import type { Claims } from '../base/types.js'
import type { Audit } from '../../../lib/audit/audit.js'
import { userIdOf } from './session-audit.js'
import type { PostCheck } from './post-check.js'

export interface PresentedSession { reader: TokenReader; verify: Verify; revocations: Revocations | null; lifetime: SessionLifetime; audit: Audit; check: PostCheck }

/**
 * Revokes the session a request presents (logout); with `everywhere`, every session of its user too. Resolves the
 * verified claims of that session (for the audit), or undefined when none was presented or revocation is off.
 */
export async function revokePresented (p: PresentedSession, request: FastifyRequest, everywhere: boolean): Promise<Claims | undefined> {
  const revocations = p.revocations
  if (revocations === null) return undefined
  const found = p.reader.read(request)
  let claims: Claims
  let source: TokenSource
  try {
    if (found === undefined) throw unauthorized('not logged in', ErrorCodes.UNAUTHORIZED)
    source = found.source
    claims = (await p.verify(found.token, 'session')).claims
  } catch (err) {
    // Logging out without a valid session only clears the cookies; ending "every session" needs one.
    if (everywhere || !(err instanceof HttpError)) throw err
    return undefined
  }
  const nowS = Date.now() / 1000
  const endsAt = Math.max(claims.exp, claims.auth_time! + p.lifetime.maxAgeSeconds) + LEEWAY_S
  if (everywhere) {
    // Ending every session takes a token that could still authenticate: the expiry checks of a request (a dead
    // query token, or a cookie session past its lifetime or idle, signs nobody out).
    mustRefresh(claims, source, Date.now(), p.lifetime)
    // The XSRF rule of a cookie session (and the audience rule): a page of another origin, or a same-origin
    // `<img>`, cannot end every session of the user.
    p.check.admit(request, source, claims.jti, audOf(claims))
    if (await revocations.isRevoked(subjectOf(claims))) throw revokedError()
    const id = claims.user?.id
    if (typeof id !== 'string') throw new HttpError(401, 'unauthorized', 'token carries no user')
    await revocations.revokeUser(id)
    if (p.audit.on) p.audit.emit(request, 'session.revoked', { reason: 'logout', by: 'logout', scope: 'user', userId: id, aud: audOf(claims) })
  }
  if (endsAt > nowS) {
    await revocations.revokeSession(claims.jti, (endsAt - nowS) * 1000)
    if (p.audit.on) p.audit.emit(request, 'session.revoked', { reason: 'logout', by: 'logout', scope: 'session', userId: userIdOf(claims), aud: audOf(claims) })
  }
  return claims
}
