import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ResolveUser } from './types.js'
import { HttpError } from '../lib/errors.js'

/** onRequest or preHandler: attaches the user when the request carries a valid session; never rejects. */
export function traceHook (resolve: ResolveUser) {
  return async function gatehouseTrace (request: FastifyRequest, reply: FastifyReply): Promise<void> {
    try {
      const resolved = resolve(request, reply)
      request.user = resolved instanceof Promise ? await resolved : resolved
    } catch (err) {
      if (!(err instanceof HttpError)) throw err
      request.user = null
    }
  }
}
