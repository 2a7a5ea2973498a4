/**
 * The XSRF rule of cookie sessions (double submit, bound to the session): the header named `xsrf.headerName`
 * must equal the cookie `cookies.xsrfName`, and both must equal the session's `jti`. Binding to the `jti`
 * means a cookie pair planted by a sibling subdomain does not pass.
 */
import type { FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError } from '../../lib/errors.js'
import type { ResolvedOptions } from './types.js'
import { requestCookie } from './cookie-jar.js'

/** Builds the check; it throws HttpError 401 `GATEHOUSE_XSRF`. */
export function makeXsrfCheck (o: Pick<ResolvedOptions, 'xsrf' | 'cookies'>): (request: FastifyRequest, jti: string) => void {
  const { disable, ignoreMethods, headerName } = o.xsrf
  const cookieName = o.cookies.xsrfName
  return (request, jti) => {
    if (disable || ignoreMethods.has(request.method)) return
    const header = request.headers[headerName]
    const cookie = requestCookie(request, cookieName)
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
