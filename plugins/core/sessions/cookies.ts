/**
 * The session cookies: the token (HttpOnly) and the XSRF value (readable by the page's scripts), set together at
 * login and refresh, cleared together at logout, with the `cookies` group's attributes. Written as Set-Cookie lines
 * (cookie-jar.ts), so that a host without @fastify/cookie gets them too, from a hook on any of its routes.
 */
import type { FastifyReply } from 'fastify'
import type { Claims, ResolvedOptions } from '../base/types.js'
import { clearReplyCookie, setReplyCookie, type CookieAttributes } from '../base/cookie-jar.js'

export class SessionCookies {
  private readonly maxAgeSeconds: number
  constructor (private readonly o: Pick<ResolvedOptions, 'cookies' | 'session' | 'tokenSources'>) {
    this.maxAgeSeconds = Math.max(1, Math.round(o.session.maxAgeMs / 1000))
  }

  /**
   * Sets both cookies of a session; session-only sessions (`sess`) get no Max-Age. Under
   * `tokenSources.headerRefresh` the token is answered in the `X-JWT` header too (go-pkgz's `SendJWTHeader`).
   */
  set (reply: FastifyReply, token: string, claims: Claims): void {
    const base = this.attributes(claims)
    setReplyCookie(reply, this.o.cookies.sessionName, token, { ...base, httpOnly: true })
    setReplyCookie(reply, this.o.cookies.xsrfName, claims.jti, base)
    if (this.o.tokenSources.headerRefresh) this.sendHeader(reply, token)
  }

  /** The token in the `X-JWT` response header, never stored by a cache. */
  sendHeader (reply: FastifyReply, token: string): void {
    reply.header('x-jwt', token).header('cache-control', 'no-store')
  }

  /** Clears both cookies (logout). */
  reset (reply: FastifyReply): void {
    const base = this.attributes()
    clearReplyCookie(reply, this.o.cookies.sessionName, { ...base, httpOnly: true })
    clearReplyCookie(reply, this.o.cookies.xsrfName, base)
  }

  private attributes (claims?: Claims): CookieAttributes {
    const { sameSite, secure, domain } = this.o.cookies
    const base: CookieAttributes = { path: '/', sameSite, secure }
    if (domain !== undefined) base.domain = domain
    if (claims !== undefined && claims.sess !== true) base.maxAge = this.maxAgeSeconds
    return base
  }
}

/**
 * Every logout answer also asks the browser to drop its cookies for the site (`Clear-Site-Data: "cookies"`, ASVS
 * 5.0 14.3.1): whatever else the app or a provider left there (a pending second-factor login, a ceremony cookie)
 * goes with the session. Browsers apply it to the whole registrable domain: see the security guide.
 */
export function clearSiteCookies (reply: FastifyReply): void {
  reply.header('clear-site-data', '"cookies"')
}
