/**
 * The XSRF rule of cookie sessions (double submit, bound to the session): the header named `xsrf.headerName`
 * must equal the cookie `cookies.xsrfName`, and both must equal the session's `jti`. Binding to the `jti`
 * means a cookie pair planted by a sibling subdomain does not pass.
 */
import type { FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError } from '../../../lib/errors.js'
import type { ResolvedOptions } from '../base/types.js'
import { cookieValue, requestCookie } from '../base/cookie-jar.js'

/**
 * The check: `(request, jti)`, or with the XSRF cookie located already (`cookieIn`, the Cookie header, and the
 * value's [start, end) in it, start -1 for none: what the token reader found in its walk), so that the header is
 * not walked again and the value is compared where it is. Throws HttpError 401 `GATEHOUSE_XSRF`.
 */
export type XsrfCheck = (request: FastifyRequest, jti: string, cookieIn?: string, start?: number, end?: number, jtiCodes?: Uint16Array) => void

/** Builds the check. */
export function makeXsrfCheck (o: Pick<ResolvedOptions, 'xsrf' | 'cookies'>): XsrfCheck {
  const { disable, ignoreMethods, headerName, navigation } = o.xsrf
  const cookieName = o.cookies.xsrfName
  // No method ignored (the default): the method is not even read.
  const ignoring = ignoreMethods.size > 0
  return (request, jti, cookieIn, start = -1, end = -1, jtiCodes) => {
    if (disable || (ignoring && ignoreMethods.has(request.method))) return
    // The cookie's value: where the token reader found it in the Cookie header (`raw`: not URL-decoded), or read now.
    let text: string | undefined
    let from = 0
    let to = 0
    const raw = cookieIn !== undefined
    if (!raw) {
      text = requestCookie(request, cookieName)
      to = text?.length ?? 0
    } else if (start >= 0) {
      text = cookieIn
      from = start
      to = end
    }
    let header = request.headers[headerName]
    if (typeof header !== 'string' || header === '') {
      // A page navigation sends the cookies but cannot send a header: the cookie then stands for both, and only
      // when the browser itself says the navigation is same-origin (see pageNavigation).
      if (!navigation || !pageNavigation(request)) throw missingHeader(request, navigation)
      header = text === undefined ? undefined : raw ? cookieValue(text, from, to) : text
    }
    if (typeof header !== 'string' || text === undefined) throw new HttpError(401, 'unauthorized', 'missing XSRF header or cookie', ErrorCodes.XSRF)
    // Both comparisons always run (in one loop). A raw value holding `%` that does not match is compared again as
    // the cookie parser gives it, decoded: a second loop that only a `%` the sender wrote can cause.
    if (bothSame(header, text, from, to, jti, jtiCodes)) return
    if (raw && hasPercent(text, from, to)) {
      const decoded = cookieValue(text, from, to)
      if (bothSame(header, decoded, 0, decoded.length, jti, jtiCodes)) return
    }
    throw new HttpError(401, 'unauthorized', 'XSRF token mismatch', ErrorCodes.XSRF)
  }
}

function hasPercent (text: string, start: number, end: number): boolean {
  const at = text.indexOf('%', start)
  return at >= 0 && at < end
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
 * Constant-time comparison of the two presented values (the header's, and the cookie's at [start, end) of `cookieIn`,
 * compared where it is: a copy would be a sliced string, each of whose characters costs a look-up through its
 * parent) with the session's `jti`, in one loop, without the buffers `safeEqual` makes: it runs on every
 * cookie-authenticated request. Time depends on the length of `expected` only (a `jti` is always 22 characters,
 * so its length tells nothing); no branch depends on the characters. `codes`: `expected`'s character codes, kept
 * ready by the verified-session cache's entry (one string read fewer per character). Reading past a shorter
 * value changes nothing but the verdict, already false by the lengths.
 */
function bothSame (header: string, cookieIn: string, start: number, end: number, expected: string, codes?: Uint16Array): boolean {
  const n = expected.length
  let diff = (header.length ^ n) | ((end - start) ^ n)
  if (codes !== undefined && codes.length === n) {
    for (let i = 0; i < n; i++) {
      const e = codes[i]!
      diff |= ((header.charCodeAt(i) | 0) ^ e) | ((cookieIn.charCodeAt(start + i) | 0) ^ e)
    }
  } else {
    for (let i = 0; i < n; i++) {
      const e = expected.charCodeAt(i)
      diff |= ((header.charCodeAt(i) | 0) ^ e) | ((cookieIn.charCodeAt(start + i) | 0) ^ e)
    }
  }
  return diff === 0
}
