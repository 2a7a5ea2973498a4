/**
 * Where a request's token comes from: the sources `tokenSources` turns on, tried in order, the first one present
 * wins: the app's own extractor (`tokenSources.extract`), the query parameter (off by default), the header
 * (`X-JWT`), `Authorization: Bearer` (RFC 6750) or `DPoP` (RFC 9449), then the session cookie. One reader for
 * every path: the hooks, `get`, logout.
 */
import type { FastifyRequest } from 'fastify'
import type { ResolvedOptions } from '../base/types.js'
import { cookieValue, locateCookies, type CookieSpans } from '../base/cookie-jar.js'

/** Where a token came from (numbers, so that comparing them costs nothing). */
export type TokenSource = typeof FROM_QUERY | typeof FROM_HEADER | typeof FROM_COOKIE | typeof FROM_BEARER | typeof FROM_EXTRACTOR | typeof FROM_DPOP
export const FROM_QUERY = 0
export const FROM_HEADER = 1
export const FROM_COOKIE = 2
export const FROM_BEARER = 3
export const FROM_EXTRACTOR = 4
/** `Authorization: DPoP <token>` (RFC 9449 §7.1): served only with a valid proof (dpop.ts). */
export const FROM_DPOP = 5

/**
 * A token and where this request carried it. Returned by value, one per read: two requests served at once never
 * share one (the XSRF rule applies to cookie tokens only, so a source read from another request would skip it).
 */
export interface PresentedToken {
  readonly token: string
  readonly source: TokenSource
}

/** The longest `Authorization` value read as a bearer token: a session JWT is far shorter. */
const MAX_BEARER = 16_384
/** RFC 6750 §2.1: the scheme is case-insensitive, then one space, then the b64token. */
const BEARER = /^bearer ([A-Za-z0-9\-._~+/]+=*)$/i

/** The token of `Authorization: Bearer <token>`, or undefined for another scheme or a malformed value. */
export function bearerToken (request: FastifyRequest): string | undefined {
  return checkedBearer(request.headers.authorization)
}

function checkedBearer (value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > MAX_BEARER) return undefined
  return BEARER.exec(value)?.[1]
}

/** RFC 9449 §7.1: the DPoP scheme's token, a token68 as Bearer's. */
const DPOP = /^dpop ([A-Za-z0-9\-._~+/]+=*)$/i

/** The token of an `Authorization: DPoP <token>` value, or undefined. */
function dpopToken (value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > MAX_BEARER) return undefined
  return DPOP.exec(value)?.[1]
}

/**
 * What follows `bearer ` (any case) in an `Authorization` value, not yet checked against RFC 6750's syntax. Equal
 * to a token of the verified-session cache, it is one (those are compact JWS: letters, digits, `-`, `_`, `.`).
 */
function uncheckedBearer (value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length <= 7 || value.length > MAX_BEARER) return undefined
  // "bearer " without a lower-cased copy: `| 32` folds the letters' case (the space stays a space).
  if ((value.charCodeAt(0) | 32) !== 98 || (value.charCodeAt(1) | 32) !== 101 || (value.charCodeAt(2) | 32) !== 97 ||
    (value.charCodeAt(3) | 32) !== 114 || (value.charCodeAt(4) | 32) !== 101 || (value.charCodeAt(5) | 32) !== 114 ||
    value.charCodeAt(6) !== 32) return undefined
  return value.slice(7)
}

/**
 * Reads the token of a request from the sources `tokenSources` turns on, in their order: the app's extractor
 * (`tokenSources.extract`), the query parameter (off by default), the header (`X-JWT`), `Authorization: Bearer`
 * (RFC 6750), then the session cookie; the first one present wins, an empty value is none.
 */
export class TokenReader {
  private readonly extract: ((request: FastifyRequest) => unknown) | null
  private readonly query: string | null
  private readonly header: string | null
  private readonly bearer: boolean
  private readonly cookie: string
  private readonly xsrfCookie: string
  private readonly spans: CookieSpans = { aStart: -1, aEnd: -1, bStart: -1, bEnd: -1 }
  /**
   * Where the token the last `token()` call answered came from. Read right after that call, in the same
   * synchronous step (nothing else reads a token in between), so the hot path allocates nothing for it.
   */
  source: TokenSource = FROM_COOKIE
  /**
   * With a token from the Cookie header (no `request.cookies`), the XSRF cookie found in the same walk: the header
   * (`xsrfIn`, undefined otherwise) and the cookie value's [xsrfStart, xsrfEnd) in it (xsrfStart -1: no such
   * cookie), not decoded. Valid right after `token()`, as `source`.
   */
  xsrfIn: string | undefined
  xsrfStart = -1
  xsrfEnd = -1
  /**
   * The string the last `token()` answer was cut from (the header it came in), and where it ends there: the
   * verified-session cache keys entries by a token's last characters, cheaper to read in this flat string than
   * in the slice. Valid right after `token()`, as `source`.
   */
  tokenIn = ''
  tokenEnd = 0

  constructor (o: Pick<ResolvedOptions, 'tokenSources' | 'cookies'>) {
    const { extract, query, header, bearer } = o.tokenSources
    this.extract = extract
    this.query = query
    this.header = header
    this.bearer = bearer
    this.cookie = o.cookies.sessionName
    this.xsrfCookie = o.cookies.xsrfName
  }

  /**
   * The presented token or undefined, with its source in `source`, as the request carries it: a Bearer value as it
   * follows the scheme (not checked against RFC 6750's syntax), a cookie value not URL-decoded. A caller that finds
   * it in the verified-session cache needs no more (a cached token is a compact JWS: neither check can change it);
   * any other caller calls `read`, which checks and decodes (and reads on past a malformed Bearer value).
   */
  token (request: FastifyRequest): string | undefined {
    return this.first(request, false)
  }

  /** The presented token with its source (a malformed Bearer value is no token), or undefined when it carries none. */
  read (request: FastifyRequest): PresentedToken | undefined {
    const token = this.first(request, true)
    return token === undefined ? undefined : { token, source: this.source }
  }

  private first (request: FastifyRequest, checked: boolean): string | undefined {
    this.xsrfIn = undefined
    if (this.extract !== null) {
      const t = nonEmpty(this.extract(request))
      if (t !== undefined) return this.found(t, FROM_EXTRACTOR)
    }
    if (this.query !== null) {
      const q = request.query as Record<string, unknown> | null | undefined
      const t = q !== null && typeof q === 'object' ? nonEmpty(q[this.query]) : undefined
      if (t !== undefined) return this.found(t, FROM_QUERY)
    }
    const headers = request.headers
    if (this.header !== null) {
      const t = nonEmpty(headers[this.header])
      if (t !== undefined) return this.found(t, FROM_HEADER)
    }
    if (this.bearer) {
      const value = headers.authorization
      const t = checked ? checkedBearer(value) : uncheckedBearer(value)
      if (t !== undefined) return this.found(t, FROM_BEARER, value as string, (value as string).length)
      // The DPoP scheme beside Bearer (`tokenSources.bearer` turns both off); a DPoP token takes dpop.ts's branch.
      const d = dpopToken(value)
      if (d !== undefined) return this.found(d, FROM_DPOP, value as string, (value as string).length)
    }
    const jar = request.cookies as Record<string, string | undefined> | null | undefined
    if (jar !== null && jar !== undefined) {
      const t = nonEmpty(jar[this.cookie])
      return t === undefined ? undefined : this.found(t, FROM_COOKIE)
    }
    // One walk of the Cookie header for the session cookie and the XSRF cookie its check reads next.
    const header = headers.cookie
    if (header === undefined) return undefined
    const at = this.spans
    locateCookies(header, this.cookie, this.xsrfCookie, at)
    if (at.aStart < 0 || at.aEnd === at.aStart) return undefined
    // Not decoded for `token()`: a value equal to a cached token holds no `%` (decoding it changes nothing), and
    // anything else is read again by `read()`, decoded.
    const t = checked ? nonEmpty(cookieValue(header, at.aStart, at.aEnd)) : header.slice(at.aStart, at.aEnd)
    if (t === undefined) return undefined
    this.xsrfIn = header
    this.xsrfStart = at.bStart
    this.xsrfEnd = at.bEnd
    return checked ? this.found(t, FROM_COOKIE) : this.found(t, FROM_COOKIE, header, at.aEnd)
  }

  private found (token: string, source: TokenSource, tokenIn = token, tokenEnd = token.length): string {
    this.source = source
    this.tokenIn = tokenIn
    this.tokenEnd = tokenEnd
    return token
  }
}

function nonEmpty (value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}
