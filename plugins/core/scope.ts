/**
 * What every auth route shares, whether the core or a provider plugin registers it: answers are `no-store`,
 * errors are `{error, details?, code}`, unknown paths a JSON 404.
 */
import type { FastifyError, FastifyInstance } from 'fastify'
import { HttpError, sendError, sendHttpError } from '../../lib/errors.js'
import type { Logger } from '../../lib/logger.js'

/** Applies the auth routes' answer rules to an encapsulated scope. */
export function applyAuthScope (scope: FastifyInstance, logger: Logger): void {
  scope.addHook('onSend', async (_req, reply, payload) => {
    reply.header('cache-control', 'no-store')
    return payload
  })
  scope.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof HttpError) return sendHttpError(reply, err)
    const status = err.statusCode ?? 500
    if (status >= 400 && status < 500) return sendError(reply, status, 'bad request', err.message)
    logger.logf('[ERROR] %s %s failed: %s', request.method, request.routeOptions.url ?? '', err.message)
    return sendError(reply, 500, 'internal error')
  })
}
