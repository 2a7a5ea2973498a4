/**
 * recoverer: a handler that throws (or rejects) is logged with its stack and answered 500
 * `{error: "internal server error", code: "GATEHOUSE_INTERNAL"}` when the response has not started yet. The
 * error's message never reaches the client. Errors that carry a 4xx `statusCode` (validation, body parsing,
 * `HttpError`) are client errors, not crashes: they keep their status with `{error, details?, code}` and are
 * not logged as crashes. The code is an HttpError's own, else the status's (`GATEHOUSE_BAD_REQUEST` for a
 * failed validation).
 *
 * When the answer had already started (headers or part of the body written, then a throw), no answer can be
 * sent any more and the client would wait for the rest forever: the crash is logged and the connection is
 * closed at once, as Fastify's own error handling does, so the client sees a cut answer and `app.close()` is
 * not held by a connection that will never finish.
 */
import fp from 'fastify-plugin'
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { funcLogger, type Logger } from '../../lib/logging/logger.js'
import { HttpError, OptionsError, sendError } from '../../lib/errors.js'

export interface RecovererOptions {
  /** Where crashes are logged (with the stack). Default: Fastify's logger at error level. */
  logger?: Logger | undefined
}

type ErrorHandler = (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void

/** The error handler itself, for `fastify.setErrorHandler(recovererErrorHandler(logger))`. */
export function recovererErrorHandler (logger: Logger): ErrorHandler {
  if (logger === null || typeof logger !== 'object' || typeof logger.logf !== 'function') {
    throw new OptionsError('recoverer.logger', 'must be a Logger ({ logf })')
  }
  return (error, request, reply) => {
    if (reply.raw.headersSent) {
      logger.logf('[ERROR] request panic %s %s after the answer started (connection closed): %s', request.method, pathOf(request), stackOf(error))
      // An unfinished answer cannot be completed or replaced: cut the connection. A finished one is left alone.
      if (!reply.raw.writableEnded) reply.raw.destroy()
      return
    }
    const status = clientStatus(error)
    if (status !== undefined) {
      // Only the package's own codes go out; Fastify's `FST_ERR_*` codes are not part of the answer's catalogue.
      if (!reply.sent) sendError(reply, status, clientMessage(error, status), detailsOf(error), error instanceof HttpError ? error.code : undefined)
      return
    }
    // %s with the stack keeps the whole backtrace; the core logger escapes line breaks into one record.
    logger.logf('[ERROR] request panic %s %s: %s', request.method, pathOf(request), stackOf(error))
    if (reply.sent) return
    sendError(reply, 500, 'internal server error')
  }
}

function stackOf (error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error)
}

/** The path without the query, where tokens travel. */
function pathOf (request: FastifyRequest): string {
  return request.url.split('?', 1)[0]!
}

function clientStatus (error: unknown): number | undefined {
  const s = (error as { statusCode?: unknown } | null)?.statusCode
  return typeof s === 'number' && s >= 400 && s < 500 ? s : undefined
}

function clientMessage (error: unknown, status: number): string {
  const msg = (error as { message?: unknown }).message
  return typeof msg === 'string' && msg !== '' ? msg : `request failed with status ${status}`
}

function detailsOf (error: unknown): string | undefined {
  const d = (error as { details?: unknown }).details
  return typeof d === 'string' ? d : undefined
}

/**
 * fastify-plugin: the error handler is set on the context it is registered in (errors of its routes and of
 * its children without their own handler), which is where a recoverer is expected to act.
 */
const recovererPluginImpl: FastifyPluginAsync<RecovererOptions> = async (fastify, opts) => {
  fastify.setErrorHandler(recovererErrorHandler(opts.logger ?? funcLogger((line) => fastify.log.error(line))))
}

export const recovererPlugin = fp(recovererPluginImpl, { name: 'gatehouse-recoverer', fastify: '5.x' })
