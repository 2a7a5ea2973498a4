import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { HttpError, sendError } from '../../lib/errors.js'
import type { GatehouseAuth } from './types.js'
import type { SessionList } from './sessions.js'
import type { UserResolver } from './session.js'
import type { CoreInternals } from './internals.js'
import { applyAuthScope } from './scope.js'
import { checkCrossSite } from './login-audit.js'

/**
 * The core's own routes under `authPrefix`: `/list`, `/user`, `/status`, `/logout`, `/sessions` (unless the session
 * list is off), `/.well-known/jwks.json` (with `session.signingKeys`), and the JSON 404 for
 * anything else there. Providers mount theirs beside these (plugins/core/mount.ts).
 */
export function authRoutes (auth: GatehouseAuth, core: CoreInternals, resolve: UserResolver) {
  return async function routes (scope: FastifyInstance): Promise<void> {
    applyAuthScope(scope, core.logger, core.options.audit)
    scope.setNotFoundHandler((_req, reply) => sendError(reply, 404, 'not found'))

    scope.get('/list', async () => auth.providers())

    scope.get('/user', async (request, reply) => {
      const user = await resolve(request, reply)
      if (user === null) throw new HttpError(401, 'unauthorized', 'not logged in')
      return user
    })

    scope.get('/status', async (request, reply) => {
      let user = null
      try { user = await resolve(request, reply) } catch (err) { if (!(err instanceof HttpError)) throw err }
      return user === null ? { status: 'not logged in' } : { status: 'logged in', user: user.name }
    })

    // GET (as in the original library) and POST; a cross-site request of either cannot end a session.
    scope.route({
      method: ['GET', 'POST'],
      url: '/logout',
      handler: async (request, reply) => {
        checkCrossSite(core, request, 'logout')
        return await core.logout(request, reply)
      }
    })

    if (core.sessions !== null) sessionRoutes(scope, core, core.sessions)

    // The public keys of asymmetric session signing, for services that verify sessions without a secret.
    if (auth.jwks !== null) scope.get('/.well-known/jwks.json', async () => auth.jwks)
  }
}

/**
 * "Where you're signed in", for the signed-in user (cookie and XSRF like every session route): `GET /sessions`
 * lists them, `DELETE /sessions/:id` ends one (404 unless it is a live session of this user), `DELETE /sessions`
 * ends every one but the current. The DELETEs are refused cross-site, like logout.
 */
function sessionRoutes (scope: FastifyInstance, core: CoreInternals, sessions: SessionList): void {
  const signedIn = async (request: FastifyRequest, reply: FastifyReply, ending: boolean): Promise<{ userId: string; jti: string }> => {
    if (ending) checkCrossSite(core, request, 'logout')
    const session = await core.tokens.read(request, reply)
    if (session === null) throw new HttpError(401, 'unauthorized', 'not logged in')
    const userId = session.claims.user?.id
    if (typeof userId !== 'string' || userId === '') throw new HttpError(401, 'unauthorized', 'token carries no user')
    return { userId, jti: session.claims.jti }
  }

  scope.get('/sessions', async (request, reply) => {
    const { userId, jti } = await signedIn(request, reply, false)
    return await sessions.list(userId, jti)
  })

  scope.delete<{ Params: { id: string } }>('/sessions/:id', async (request, reply) => {
    const { userId, jti } = await signedIn(request, reply, true)
    const id = request.params.id
    const ended = await sessions.revoke(userId, (ids) => ids.filter((x) => x === id))
    if (ended.length === 0) throw new HttpError(404, 'not found', 'no such session')
    auditEnded(core, request, userId, ended.length)
    // Ending the session that asked signs this browser out too.
    if (id === jti) core.tokens.reset(reply)
    return await reply.code(204).send()
  })

  scope.delete('/sessions', async (request, reply) => {
    const { userId, jti } = await signedIn(request, reply, true)
    const ended = await sessions.revoke(userId, (ids) => ids.filter((x) => x !== jti))
    auditEnded(core, request, userId, ended.length)
    return { revoked: ended.length }
  })
}

/** One `session.revoked` per session the user ended from the session list (`by: revokeSession`). */
function auditEnded (core: CoreInternals, request: FastifyRequest, userId: string, count: number): void {
  const audit = core.options.audit
  if (!audit.on) return
  for (let i = 0; i < count; i++) audit.emit(request, 'session.revoked', { reason: 'session_list', by: 'revokeSession', scope: 'session', userId })
}
