import type { FastifyReply } from 'fastify'

/** The one error body shape of the package: `{ error, details? }`. */
export interface ErrorBody { error: string; details?: string }

/**
 * An error that maps to a client-facing status and JSON body. Thrown from hooks, providers and routes;
 * the auth routes' error handler turns it into `{error, details}`.
 */
export class HttpError extends Error {
  readonly statusCode: number
  readonly details: string | undefined
  constructor (statusCode: number, error: string, details?: string) {
    super(error)
    this.name = 'HttpError'
    this.statusCode = statusCode
    this.details = details
  }

  toJSON (): ErrorBody {
    return this.details === undefined ? { error: this.message } : { error: this.message, details: this.details }
  }
}

/** Sends `{error, details?}` with the given status. */
export function sendError (reply: FastifyReply, statusCode: number, error: string, details?: string): FastifyReply {
  const body: ErrorBody = details === undefined ? { error } : { error, details }
  return reply.code(statusCode).type('application/json; charset=utf-8').send(body)
}
