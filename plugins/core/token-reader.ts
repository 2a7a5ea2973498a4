/**
 * Where a request's token comes from: the query parameter, the header, then the session cookie (the first one
 * present; `tokenSources` turns the first two off). One reader for every path: the hooks, `get`, logout.
 */
import type { FastifyRequest } from 'fastify'
import type { ResolvedOptions } from './types.js'
import { requestCookie } from './cookie-jar.js'

/** Where a token came from (numbers, so that comparing them costs nothing). */
export type TokenSource = typeof FROM_QUERY | typeof FROM_HEADER | typeof FROM_COOKIE
export const FROM_QUERY = 0
export const FROM_HEADER = 1
export const FROM_COOKIE = 2

/**
 * A token and where this request carried it. Returned by value, one per read: two requests served at once never
 * share one (the XSRF rule applies to cookie tokens only, so a source read from another request would skip it).
 */
export interface PresentedToken {
  readonly token: string
  readonly source: TokenSource
}

export class TokenReader {
  private readonly query: string | null
  private readonly header: string | null
  private readonly cookie: string

  constructor (o: Pick<ResolvedOptions, 'tokenSources' | 'cookies'>) {
    this.query = o.tokenSources.query
    this.header = o.tokenSources.header
    this.cookie = o.cookies.sessionName
  }

  /** The presented token with its source, or undefined when the request carries none. */
  read (request: FastifyRequest): PresentedToken | undefined {
    if (this.query !== null) {
      const q = request.query as Record<string, unknown> | null | undefined
      const token = q !== null && typeof q === 'object' ? q[this.query] : undefined
      if (typeof token === 'string' && token !== '') return { token, source: FROM_QUERY }
    }
    if (this.header !== null) {
      const token = request.headers[this.header]
      if (typeof token === 'string' && token !== '') return { token, source: FROM_HEADER }
    }
    const token = requestCookie(request, this.cookie)
    return typeof token === 'string' && token !== '' ? { token, source: FROM_COOKIE } : undefined
  }
}
