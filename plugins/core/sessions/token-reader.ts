/**
 * Where a request's token comes from: a list of sources tried in order, the first one present wins. The list is
 * built once from `tokenSources`: the app's own extractor (`tokenSources.extract`), the query parameter (off by
 * default), the header (`X-JWT`), `Authorization: Bearer` (RFC 6750), then the session cookie. One reader for every
 * path: the hooks, `get`, logout.
 */
import type { FastifyRequest } from 'fastify'
import type { ResolvedOptions } from '../base/types.js'
import { requestCookie } from '../base/cookie-jar.js'

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

/** One place a token may be: reads it from a request, or answers undefined (an empty value is none). */
interface Source { readonly from: TokenSource; read: (request: FastifyRequest) => string | undefined }

/** The longest `Authorization` value read as a bearer token: a session JWT is far shorter. */
const MAX_BEARER = 16_384
/** RFC 6750 §2.1: the scheme is case-insensitive, then one space, then the b64token. */
const BEARER = /^bearer ([A-Za-z0-9\-._~+/]+=*)$/i

/** The token of `Authorization: Bearer <token>`, or undefined for another scheme or a malformed value. */
export function bearerToken (request: FastifyRequest): string | undefined {
  const value = request.headers.authorization
  if (typeof value !== 'string' || value.length > MAX_BEARER) return undefined
  return BEARER.exec(value)?.[1]
}

/** RFC 9449 §7.1: the DPoP scheme's token, a token68 as Bearer's. */
const DPOP = /^dpop ([A-Za-z0-9\-._~+/]+=*)$/i

/** The token of `Authorization: DPoP <token>`, or undefined. */
function dpopToken (request: FastifyRequest): string | undefined {
  const value = request.headers.authorization
  if (typeof value !== 'string' || value.length > MAX_BEARER) return undefined
  return DPOP.exec(value)?.[1]
}

export class TokenReader {
  private readonly sources: readonly Source[]

  constructor (o: Pick<ResolvedOptions, 'tokenSources' | 'cookies'>) {
    const { extract, query, header, bearer } = o.tokenSources
    const cookie = o.cookies.sessionName
    const sources: Source[] = []
    if (extract !== null) sources.push({ from: FROM_EXTRACTOR, read: (request) => nonEmpty(extract(request)) })
    if (query !== null) {
      sources.push({
        from: FROM_QUERY,
        read (request) {
          const q = request.query as Record<string, unknown> | null | undefined
          return q !== null && typeof q === 'object' ? nonEmpty(q[query]) : undefined
        }
      })
    }
    if (header !== null) sources.push({ from: FROM_HEADER, read: (request) => nonEmpty(request.headers[header]) })
    if (bearer) sources.push({ from: FROM_BEARER, read: bearerToken })
    // The DPoP scheme beside Bearer (`tokenSources.bearer` turns both off); a DPoP token takes dpop.ts's branch.
    if (bearer) sources.push({ from: FROM_DPOP, read: dpopToken })
    sources.push({ from: FROM_COOKIE, read: (request) => nonEmpty(requestCookie(request, cookie)) })
    this.sources = sources
  }

  /** The presented token with its source, or undefined when the request carries none. */
  read (request: FastifyRequest): PresentedToken | undefined {
    for (const source of this.sources) {
      const token = source.read(request)
      if (token !== undefined) return { token, source: source.from }
    }
    return undefined
  }
}

function nonEmpty (value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}
