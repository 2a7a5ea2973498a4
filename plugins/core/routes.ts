import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { HttpError, sendError } from '../shared/errors.js'
import type { AuthProvider, GatehouseAuth } from './types.js'
import type { UserResolver } from './session.js'

const STEPS = ['login', 'callback', 'logout'] as const
type Step = typeof STEPS[number]

/**
 * The auth routes, in their own encapsulated scope under `authPrefix`: every answer is `no-store`, every
 * error is `{error, details?}`. Providers are dispatched through one parametric route per step, so a
 * provider added at any time before the server starts (or after) needs no new route.
 */
export function authRoutes (auth: GatehouseAuth, providers: Map<string, AuthProvider>, resolve: UserResolver) {
  return async function routes (scope: FastifyInstance): Promise<void> {
    scope.addHook('onSend', async (_req, reply, payload) => {
      reply.header('cache-control', 'no-store')
      return payload
    })

    scope.setErrorHandler((err: FastifyError, request, reply) => {
      if (err instanceof HttpError) return sendError(reply, err.statusCode, err.message, err.details)
      const status = err.statusCode ?? 500
      if (status >= 400 && status < 500) return sendError(reply, status, 'bad request', err.message)
      auth.logger.logf('[ERROR] %s %s failed: %s', request.method, request.routeOptions.url ?? '', err.message)
      return sendError(reply, 500, 'internal error')
    })

    scope.setNotFoundHandler((_req, reply) => sendError(reply, 404, 'not found'))

    scope.get('/list', async () => [...providers.keys()])

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

    scope.route({
      method: ['GET', 'POST'],
      url: '/logout',
      handler: async (_request, reply) => {
        auth.tokens.reset(reply)
        return { status: 'logged out' }
      }
    })

    for (const step of STEPS) {
      scope.route({
        method: ['GET', 'POST'],
        url: `/:provider/${step}`,
        // Login forms and Apple's form_post are small; anything larger is not a login.
        bodyLimit: 64 * 1024,
        handler: async (request: FastifyRequest, reply: FastifyReply) => {
          const name = (request.params as { provider: string }).provider
          const provider = providers.get(name)
          if (provider === undefined) throw new HttpError(404, 'not found', `unknown provider "${name}"`)
          return await dispatch(provider, step, request, reply)
        }
      })
    }
  }
}

function dispatch (p: AuthProvider, step: Step, request: FastifyRequest, reply: FastifyReply): unknown {
  if (step === 'login') return p.login(request, reply)
  if (step === 'callback') return p.callback(request, reply)
  return p.logout(request, reply)
}
