/**
 * What every auth route shares, whether the core or a provider plugin registers it: answers are `no-store`,
 * errors are `{error, details?, code}`, unknown paths a JSON 404.
 */
import type { FastifyError, FastifyInstance } from 'fastify'
import { HttpError, sendError, sendHttpError } from '../../lib/errors.js'
import { describeError, type Logger } from '../../lib/logger.js'
import type { Audit } from '../../lib/audit/audit.js'
import { StateStoreError } from '../../lib/state-store/types.js'

/** Applies the auth routes' answer rules to an encapsulated scope; a state store failure is audited (`audit`). */
export function applyAuthScope (scope: FastifyInstance, logger: Logger, audit?: Audit): void {
  scope.addHook('onSend', async (_req, reply, payload) => {
    reply.header('cache-control', 'no-store')
    return payload
  })
  // Every 5xx answer is logged here, once, with its cause chain (the logger redacts secrets from it): code that
  // answers 5xx throws an HttpError with `{ cause }` and does not log it itself.
  scope.setErrorHandler((err: FastifyError, request, reply) => {
    const route = `${request.method} ${request.routeOptions.url ?? ''}`
    if (err instanceof HttpError) {
      if (err instanceof StateStoreError) audit?.storeDown(request, err)
      if (err.statusCode >= 500) logger.logf('[ERROR] %s answered %d %s: %s', route, err.statusCode, err.code, describeAnswer(err))
      return sendHttpError(reply, err)
    }
    const status = err.statusCode ?? 500
    if (status >= 400 && status < 500) return sendError(reply, status, 'bad request', err.message)
    logger.logf('[ERROR] %s failed: %s', route, describeError(err))
    return sendError(reply, 500, 'internal error')
  })
}

/** `error (details): cause: cause…` of a 5xx answer, for the log. */
function describeAnswer (err: HttpError): string {
  const text = err.details === undefined ? err.message : `${err.message} (${err.details})`
  return err.cause === undefined ? text : `${text}: ${describeError(err.cause)}`
}
