/**
 * What every auth route shares, whether the core or a provider plugin registers it: answers are `no-store`,
 * errors are `{error, details?, code}`, unknown paths a JSON 404.
 */
import type { FastifyError, FastifyInstance } from 'fastify'
import { HttpError, isAppErrorHandler, sendHttpError } from '../../lib/errors.js'
import { describeError, type Logger } from '../../lib/logger.js'
import { coreOf } from './internals.js'

/**
 * Applies the auth routes' answer rules to an encapsulated scope. Errors become HttpErrors here; the app's error
 * handler (of the scope the auth core was registered in) then sees them first, else they answer as they are.
 */
export function applyAuthScope (scope: FastifyInstance, logger: Logger): void {
  const core = coreOf(scope, 'routes')
  scope.addHook('onSend', async (_req, reply, payload) => {
    reply.header('cache-control', 'no-store')
    return payload
  })
  // Every 5xx answer is logged here, once, with its cause chain (the logger redacts secrets from it): code that
  // answers 5xx throws an HttpError with `{ cause }` and does not log it itself.
  scope.setErrorHandler((err: FastifyError, request, reply) => {
    const answer = httpErrorOf(err, `${request.method} ${request.routeOptions.url ?? ''}`, logger)
    const app = core.appErrorHandler()
    if (!isAppErrorHandler(app)) return sendHttpError(reply, answer)
    if (answer.headers !== undefined) reply.headers(answer.headers)
    return app(answer, request, reply)
  })
}

/** The HttpError an error of an auth route answers as; 5xx are logged here with their cause. */
function httpErrorOf (err: FastifyError, route: string, logger: Logger): HttpError {
  if (err instanceof HttpError) {
    if (err.statusCode >= 500) logger.logf('[ERROR] %s answered %d %s: %s', route, err.statusCode, err.code, describeAnswer(err))
    return err
  }
  const status = err.statusCode ?? 500
  if (status >= 400 && status < 500) return new HttpError(status, 'bad request', err.message)
  logger.logf('[ERROR] %s failed: %s', route, describeError(err))
  return new HttpError(500, 'internal error')
}

/** `error (details): cause: cause…` of a 5xx answer, for the log. */
function describeAnswer (err: HttpError): string {
  const text = err.details === undefined ? err.message : `${err.message} (${err.details})`
  return err.cause === undefined ? text : `${text}: ${describeError(err.cause)}`
}
