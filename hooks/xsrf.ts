import type { FastifyReply, FastifyRequest } from 'fastify'
import { safeEqual } from '../lib/compare.js'
import { ErrorCodes, HttpError, refuse } from '../lib/errors.js'
import type { XsrfHookOptions } from './types.js'

/**
 * Hook (`onRequest` or `preHandler`) for routes that take no session but must not be triggered cross-site (e.g. a form that starts a
 * login): requires the XSRF header to equal the XSRF cookie. (The XSRF rule of cookie sessions, which also binds
 * both to the session, is the token service's: plugins/core/sessions/xsrf.ts.)
 */
export function xsrfHook (o: XsrfHookOptions) {
  return async function gatehouseXsrf (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    if (o.disable || o.ignoreMethods.has(request.method)) return undefined
    const header = request.headers[o.headerName]
    const cookie = o.cookieOf(request)
    if (typeof header !== 'string' || header === '' || typeof cookie !== 'string' || !safeEqual(header, cookie)) {
      // Returned so that Fastify stops the chain (see hooks/authenticate.ts).
      return refuse(request, reply, new HttpError(403, 'forbidden', 'missing or mismatched XSRF header', ErrorCodes.XSRF))
    }
    return undefined
  }
}
