import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { HttpError, sendError } from '../../lib/errors.js'
import type { GatehouseAuth } from './base/types.js'
import type { SessionList } from './sessions/sessions.js'
import type { UserResolver } from './signin/user-resolver.js'
import type { CoreInternals } from './signin/internals.js'
import { applyAuthScope, routeDoc as doc } from './signin/scope.js'

const STATUS = {
  type: 'object',
  properties: { status: { type: 'string', enum: ['logged in', 'not logged in'] }, user: { type: 'string' } },
  required: ['status']
} as const
const LOGGED_OUT = { type: 'object', properties: { status: { type: 'string' } }, required: ['status'] } as const
/** Documents `all` without typing it: the handler reads it, so that its 400 says what it always said. */
const LOGOUT_QUERY = { type: 'object', properties: { all: { description: '1 or true: every session of the user' } } } as const
import { checkCrossSite } from './signin/login-audit.js'
import { sessionEndingOthers, signedInSession, type SignedInSession } from './signin/reauth.js'
import { clearSiteCookies } from './sessions/cookies.js'
import { deviceRoutes } from './clients/device-routes.js'

/**
 * The core's own routes under `authPrefix`: `/list`, `/user`, `/status`, `/logout`, `/sessions` (unless the session
 * list is off), `/.well-known/jwks.json` (with `session.signingKeys`), `/token` and `/revoke` (with `clients`), and the JSON 404 for
 * anything else there. Providers mount theirs beside these (plugins/core/signin/mount.ts).
 */
export function authRoutes (auth: GatehouseAuth, core: CoreInternals, resolve: UserResolver, clientRoutes?: (scope: FastifyInstance) => Promise<void>) {
  return async function routes (scope: FastifyInstance): Promise<void> {
    applyAuthScope(scope, core.logger, core.options.audit)
    scope.setNotFoundHandler((_req, reply) => sendError(reply, 404, 'not found'))

    scope.get('/list', { schema: doc('The mounted providers, in registration order', { response: { 200: { type: 'array', items: { type: 'string' } } } }) },
      async () => auth.providers())

    // No response schema: a user carries the host's own attributes, which a schema would strip.
    scope.get('/user', { schema: doc('The signed-in user (401 when none)') }, async (request, reply) => {
      const user = await resolve(request, reply)
      if (user === null) throw new HttpError(401, 'unauthorized', 'not logged in')
      return user
    })

    scope.get('/status', { schema: doc('Whether a user is signed in, and who', { response: { 200: STATUS } }) }, async (request, reply) => {
      let user = null
      try { user = await resolve(request, reply) } catch (err) { if (!(err instanceof HttpError)) throw err }
      return user === null ? { status: 'not logged in' } : { status: 'logged in', user: user.name }
    })

    // GET (as in the original library) and POST; a cross-site request of either cannot end a session.
    scope.route({
      method: ['GET', 'POST'],
      url: '/logout',
      schema: doc('Ends this session (every session of the user with all=1)', { querystring: LOGOUT_QUERY, response: { 200: LOGGED_OUT } }),
      handler: async (request, reply) => {
        checkCrossSite(core, request, 'logout')
        return await core.logout(request, reply)
      }
    })

    if (core.sessions !== null) sessionRoutes(scope, core, core.sessions)
    if (core.trustedDevices !== null) deviceRoutes(scope, core, core.trustedDevices)
    // The registered clients' token and revocation endpoints, in a scope of their own (RFC 6749 errors).
    if (clientRoutes !== undefined) await scope.register(clientRoutes)

    // The public keys of asymmetric session signing, for services that verify sessions without a secret.
    if (auth.jwks !== null) scope.get('/.well-known/jwks.json', { schema: doc('Public keys of the session signing (JWK set)') }, async () => auth.jwks)
  }
}

/**
 * "Where you're signed in", for the signed-in user (cookie and XSRF like every session route): `GET /sessions`
 * lists them, `DELETE /sessions/:id` ends one (404 unless it is a live session of this user), `DELETE /sessions`
 * ends every one but the current (those dropped from the list too). The DELETEs are refused cross-site, like
 * logout; ending another session takes the rule of `POST …/logout?all=1` (sessionEndingOthers): a cookie session
 * with its XSRF header, signed in recently or with the password in the body (`reauthentication`), so that a stolen
 * session or token cannot sign its owner out and stay.
 */
function sessionRoutes (scope: FastifyInstance, core: CoreInternals, sessions: SessionList): void {
  // The session that ends sessions: the current one; ending others takes the one rule of sessionEndingOthers.
  const ending = async (request: FastifyRequest, reply: FastifyReply, others: (current: string) => boolean): Promise<SignedInSession> => {
    checkCrossSite(core, request, 'logout')
    const session = await signedInSession(core, request, reply)
    return others(session.sessionId) ? await sessionEndingOthers(core, request, reply) : session
  }
  const userOf = (session: SignedInSession): string => session.user.id

  scope.get('/sessions', { schema: doc('The signed-in user\'s live sessions') }, async (request, reply) => {
    const session = await signedInSession(core, request, reply)
    return await sessions.list(userOf(session), session.sessionId)
  })

  const one = doc('Ends one session of the signed-in user', { params: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } })
  scope.delete<{ Params: { id: string } }>('/sessions/:id', { schema: one }, async (request, reply) => {
    const id = request.params.id
    const session = await ending(request, reply, (current) => id !== current)
    const current = session.sessionId
    const ended = await sessions.revoke(userOf(session), (ids) => ids.filter((x) => x === id))
    if (ended.length === 0) throw new HttpError(404, 'not found', 'no such session')
    auditEnded(core, request, userOf(session), ended.length)
    // Ending the session that asked signs this browser out too.
    if (id === current) {
      core.tokens.reset(reply)
      clearSiteCookies(reply)
    }
    return await reply.code(204).send()
  })

  const others = doc('Ends every session of the signed-in user but this one', { response: { 200: { type: 'object', properties: { revoked: { type: 'integer' } }, required: ['revoked'] } } })
  scope.delete('/sessions', { schema: others }, async (request, reply) => {
    const session = await ending(request, reply, () => true)
    const { jti, auth_time: authTime } = session.claims
    const ended = await sessions.endOthers(userOf(session), { jti, authTime: authTime ?? 0 })
    auditEnded(core, request, userOf(session), ended.length)
    return { revoked: ended.length }
  })
}

/** One `session.revoked` per session the user ended from the session list (`by: revokeSession`). */
function auditEnded (core: CoreInternals, request: FastifyRequest, userId: string, count: number): void {
  const audit = core.options.audit
  if (!audit.on) return
  for (let i = 0; i < count; i++) audit.emit(request, 'session.revoked', { reason: 'session_list', by: 'revokeSession', scope: 'session', userId })
}
