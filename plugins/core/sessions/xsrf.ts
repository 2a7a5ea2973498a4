/**
 * The XSRF rule of cookie sessions (double submit, bound to the session): the header named `xsrf.headerName`
 * must equal the cookie `cookies.xsrfName`, and both must equal the session's `jti`. Binding to the `jti`
 * means a cookie pair planted by a sibling subdomain does not pass.
 */
import type { FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError } from '../../../lib/errors.js'
import type { ResolvedOptions } from '../base/types.js'
import { requestCookie } from '../base/cookie-jar.js'

/** Builds the check; it throws HttpError 401 `GATEHOUSE_XSRF`. */
export function makeXsrfCheck (o: Pick<ResolvedOptions, 'xsrf' | 'cookies'>): (request: FastifyRequest, jti: string) => void {
  const { disable, ignoreMethods, headerName, navigation } = o.xsrf
  const cookieName = o.cookies.xsrfName
  return (request, jti) => {
    if (disable || ignoreMethods.has(request.method)) return
    const cookie = requestCookie(request, cookieName)
    let header = request.headers[headerName]
    if (typeof header !== 'string' || header === '') {
      // A page navigation sends the cookies but cannot send a header: the cookie then stands for both, and only
      // when the browser itself says the navigation is same-origin (see pageNavigation).
      if (!navigation || !pageNavigation(request)) throw missingHeader(request, navigation)
      header = cookie
    }
    if (typeof header !== 'string' || typeof cookie !== 'string') throw new HttpError(401, 'unauthorized', 'missing XSRF header or cookie', ErrorCodes.XSRF)
    // Both comparisons always run.
    const headerOk = sameText(header, jti)
    const cookieOk = sameText(cookie, jti)
    if (!headerOk || !cookieOk) throw new HttpError(401, 'unauthorized', 'XSRF token mismatch', ErrorCodes.XSRF)
  }
}

/**
 * A GET or HEAD that the browser marks as a top-level navigation started on this origin or by the user (address
 * bar, bookmark). Fetch Metadata headers are set by the browser and cannot be set by a page's script, so a
 * cross-site page cannot make its request look like this one; `same-site` (a sibling subdomain) does not count.
 */
function pageNavigation (request: FastifyRequest): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false
  if (request.headers['sec-fetch-mode'] !== 'navigate') return false
  const site = request.headers['sec-fetch-site']
  return site === 'same-origin' || site === 'none'
}

/** The refusal of a cookie session without the header, logged at debug level: it is the answer a page gets. */
function missingHeader (request: FastifyRequest, navigation: boolean): HttpError {
  request.log.debug({ method: request.method, url: request.url, navigation }, 'fastify-gatehouse: cookie session ignored: no XSRF header%s',
    navigation ? '' : ' (a page navigation? see the xsrf.navigation option)')
  return new HttpError(401, 'unauthorized', 'missing XSRF header or cookie', ErrorCodes.XSRF)
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
