/**
 * Where a request's token comes from: the query parameter, the header, then the session cookie (the first one
 * present; `tokenSources` turns the first two off). One reader for every path: the hooks, `get`, logout.
 */
import type { FastifyRequest } from 'fastify'
import type { ResolvedOptions } from './types.js'
import { requestCookie } from './cookie-jar.js'

/** Where a token came from (numbers, so that keeping one costs nothing). */
export type TokenSource = typeof FROM_QUERY | typeof FROM_HEADER | typeof FROM_COOKIE
export const FROM_QUERY = 0
export const FROM_HEADER = 1
export const FROM_COOKIE = 2

export class TokenReader {
  /**
   * Where the token of the last `read` came from. A field rather than a returned pair, so that reading allocates
   * nothing on the hot path; valid until the next `read` (callers use it synchronously).
   */
  source: TokenSource = FROM_COOKIE
  private readonly query: string | null
  private readonly header: string | null
  private readonly cookie: string

  constructor (o: Pick<ResolvedOptions, 'tokenSources' | 'cookies'>) {
    this.query = o.tokenSources.query
    this.header = o.tokenSources.header
    this.cookie = o.cookies.sessionName
  }

  /** The presented token, or undefined when the request carries none. */
  read (request: FastifyRequest): string | undefined {
    if (this.query !== null) {
      const q = request.query as Record<string, unknown> | null | undefined
      const token = q !== null && typeof q === 'object' ? q[this.query] : undefined
      if (typeof token === 'string' && token !== '') {
        this.source = FROM_QUERY
        return token
      }
    }
    if (this.header !== null) {
      const token = request.headers[this.header]
      if (typeof token === 'string' && token !== '') {
        this.source = FROM_HEADER
        return token
      }
    }
    const token = requestCookie(request, this.cookie)
    if (typeof token !== 'string' || token === '') return undefined
    this.source = FROM_COOKIE
    return token
  }
}
