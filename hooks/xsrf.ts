import type { FastifyReply, FastifyRequest } from 'fastify'
import { safeEqual } from '../lib/compare.js'
import { ErrorCodes, HttpError, sendError } from '../lib/errors.js'
import type { ResolvedOptions } from '../plugins/core/types.js'

/**
 * The XSRF rule of cookie sessions (double submit, bound to the session): the header named `xsrf.headerKey`
 * must equal the cookie `xsrf.cookieName`, and both must equal the session's `jti`. Binding to the `jti`
 * means a cookie pair planted by a sibling subdomain does not pass. Throws HttpError 401.
 */
export function makeXsrfCheck (o: ResolvedOptions): (request: FastifyRequest, jti: string) => void {
  return (request, jti) => {
    if (o.xsrf.disable || o.xsrf.ignoreMethods.has(request.method)) return
    const header = request.headers[o.xsrf.headerKey]
    const cookie = request.cookies?.[o.xsrf.cookieName]
    if (typeof header !== 'string' || header === '' || typeof cookie !== 'string') throw new HttpError(401, 'unauthorized', 'missing XSRF header or cookie', ErrorCodes.XSRF)
    // Both comparisons always run.
    const headerOk = sameText(header, jti)
    const cookieOk = sameText(cookie, jti)
    if (!headerOk || !cookieOk) throw new HttpError(401, 'unauthorized', 'XSRF token mismatch', ErrorCodes.XSRF)
  }
}

/**
 * Constant-time comparison of a presented value with the session's `jti`, without the buffers `safeEqual` makes:
 * it runs on every cookie-authenticated request. Time depends on the length of `expected` only (a `jti` is always
 * 22 characters, so its length tells nothing); no branch depends on the characters.
 */
function sameText (given: string, expected: string): boolean {
  let diff = given.length ^ expected.length
  for (let i = 0; i < expected.length; i++) diff |= (given.charCodeAt(i) | 0) ^ expected.charCodeAt(i)
  return diff === 0
}

/**
 * preHandler for routes that take no session but must not be triggered cross-site (e.g. a form that starts a
 * login): requires the XSRF header to equal the XSRF cookie.
 */
export function xsrfHook (o: ResolvedOptions) {
  return async function gatehouseXsrf (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    if (o.xsrf.disable || o.xsrf.ignoreMethods.has(request.method)) return undefined
    const header = request.headers[o.xsrf.headerKey]
    const cookie = request.cookies?.[o.xsrf.cookieName]
    if (typeof header !== 'string' || header === '' || typeof cookie !== 'string' || !safeEqual(header, cookie)) {
      // Returned so that Fastify stops the chain (see hooks/authenticate.ts).
      return sendError(reply, 403, 'forbidden', 'missing or mismatched XSRF header', ErrorCodes.XSRF)
    }
    return undefined
  }
}
