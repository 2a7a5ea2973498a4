/**
 * The session of a request that changes something about the account, for the routes that change factors (the
 * session list's "end other sessions", the TOTP and passkey providers' management routes):
 *
 * - `signedInSession`: the presented session, its user and id, and whether it came in the session cookie;
 * - `cookieSession`: a cookie session only. A token copied out of a URL or a header (`?token=`, `X-JWT`) is a
 *   bearer credential that may have leaked through logs or scripts: it never changes factors (403);
 * - `sessionEndingOthers`: the rule of every route that ends other sessions of the user (see there);
 * - `freshSession` (ASVS 5.0 7.5.1): a cookie session whose sign-in (`auth_time`) is within
 *   `reauthentication.within`, or whose user sends the primary factor again in the same request: `password` (checked
 *   by the direct provider the user belongs to) or `passkey` (an assertion, checked by the passkey provider);
 *   401 `GATEHOUSE_REAUTHENTICATE` otherwise. Session refresh keeps `auth_time`, so a cookie session that has lived
 *   for weeks is not fresh, however recently it was used.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError } from '../../../lib/errors.js'
import type { ReauthKind } from '../../../lib/login/reauth.js'
import type { User } from '../../../lib/user.js'
import type { CoreInternals } from './internals.js'
import { FROM_COOKIE } from '../sessions/token-reader.js'
import type { Claims } from '../base/types.js'
import { bodyFields } from '../../../lib/login/login-request.js'

/** A verified session of a request: its user, its claims and its id (`jti`). */
export interface SignedInSession { readonly user: User; readonly claims: Claims; readonly sessionId: string; readonly cookie: boolean }

/** The session the request presents (XSRF checked for a cookie session); 401 without one or without a user. */
export async function signedInSession (core: CoreInternals, request: FastifyRequest, reply: FastifyReply): Promise<SignedInSession> {
  const session = await core.tokens.read(request, reply)
  if (session === null) throw new HttpError(401, 'unauthorized', 'not logged in')
  if (session.user === null) throw new HttpError(401, 'unauthorized', 'token carries no user')
  return { user: session.user, claims: session.claims, sessionId: session.claims.jti, cookie: core.tokens.sourceOf(request) === FROM_COOKIE }
}

/** The request's cookie session; 403 for a header or query token (it never changes factors). */
export async function cookieSession (core: CoreInternals, request: FastifyRequest, reply: FastifyReply): Promise<SignedInSession> {
  const session = await signedInSession(core, request, reply)
  if (!session.cookie) {
    throw new HttpError(403, 'forbidden', 'factors and sessions are changed from a signed-in browser (the session cookie), never with a token in a header or URL', ErrorCodes.FORBIDDEN)
  }
  return session
}

/**
 * The request's cookie session, signed in within `reauthentication.within` or re-authenticated by the `password`
 * or `passkey` field of `fields` (the request's body); 401 `GATEHOUSE_REAUTHENTICATE` otherwise. A wrong password
 * is 403 `GATEHOUSE_CREDENTIALS` and counts toward the direct provider's lockout, as a sign-in would.
 */
export async function freshSession (core: CoreInternals, request: FastifyRequest, reply: FastifyReply, fields: Record<string, unknown>): Promise<SignedInSession> {
  const session = await cookieSession(core, request, reply)
  const signedInAt = (session.claims.auth_time ?? session.claims.iat) * 1000
  if (Date.now() - signedInAt <= core.options.reauthentication.withinMs) return session
  const kind: ReauthKind | undefined = fields.password !== undefined ? 'password' : fields.passkey !== undefined ? 'passkey' : undefined
  if (kind !== undefined) {
    const subject = { user: session.user, sessionId: session.sessionId }
    if (await core.reauth.reauthenticate(kind, request, subject, fields[kind])) return session
    throw reauthError(core, kind === 'password' ? 'this account has no password here' : 'no passkey confirmation was asked for this session (POST …/reauth/options first)')
  }
  throw reauthError(core, 'this session signed in too long ago for this change')
}

/**
 * The one rule for ending a user's other sessions, whichever route asks (`DELETE /sessions`, `DELETE
 * /sessions/:id` of another session, `POST …/logout?all=1`): a cookie session, with its XSRF header (a header or
 * query token, a registered client's bearer token included, is 403), signed in within `reauthentication.within` or
 * re-authenticated by the request's body unless `reauthentication.otherSessions` is off. A stolen token cannot sign
 * its owner out everywhere and stay.
 */
export async function sessionEndingOthers (core: CoreInternals, request: FastifyRequest, reply: FastifyReply): Promise<SignedInSession> {
  if (!core.options.reauthentication.otherSessions) return await cookieSession(core, request, reply)
  return await freshSession(core, request, reply, bodyFields(request))
}

/** The 401 that tells the page what it may send (the kinds a provider of this app can check). */
function reauthError (core: CoreInternals, why: string): HttpError {
  const kinds = core.reauth.kinds().map((k) => k === 'password' ? 'the password (`password`)' : 'a passkey assertion (`passkey`)')
  const send = kinds.length === 0 ? '' : `, or send ${kinds.join(' or ')} with this request`
  return new HttpError(401, 're-authentication required', `${why}: sign in again${send}`, ErrorCodes.REAUTHENTICATE)
}
