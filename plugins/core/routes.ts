import type { FastifyInstance } from 'fastify'
import { HttpError, sendError } from '../../lib/errors.js'
import type { GatehouseAuth } from './types.js'
import type { UserResolver } from './session.js'
import type { CoreInternals } from './internals.js'
import { applyAuthScope } from './scope.js'

/**
 * The core's own routes under `authPrefix`: `/list`, `/user`, `/status`, `/logout`, `/.well-known/jwks.json` (with
 * `session.signingKeys`), and the JSON 404 for
 * anything else there. Providers mount theirs beside these (plugins/core/mount.ts).
 */
export function authRoutes (auth: GatehouseAuth, core: CoreInternals, resolve: UserResolver) {
  return async function routes (scope: FastifyInstance): Promise<void> {
    applyAuthScope(scope, core.logger)
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
    const guard = core.options.crossSite
    scope.route({
      method: ['GET', 'POST'],
      url: '/logout',
      handler: async (request, reply) => {
        if (guard !== false) guard.check(request)
        return await auth.logout(request, reply)
      }
    })

    // The public keys of asymmetric session signing, for services that verify sessions without a secret.
    if (auth.jwks !== null) scope.get('/.well-known/jwks.json', async () => auth.jwks)
  }
}
