/**
 * Refusing cross-site requests to login, confirm and logout routes. A page on another site must not be able to
 * sign a visitor in (as the attacker's account: login CSRF) or out (logout CSRF) by submitting a form or
 * navigating the browser there.
 *
 * The browser's `Sec-Fetch-Site` decides: `same-origin` and `none` (a typed URL, a bookmark, a link from
 * another application) pass; `same-site` passes only when configured; `cross-site` is refused. A request whose
 * `Origin` is trusted (the origin of `url`, a host of `allowedRedirectHosts`, or one of `trustedOrigins`) passes
 * whatever the relation. Without `Sec-Fetch-Site` (older browsers, clients that are not browsers) an `Origin`
 * header, when sent, must be trusted; a request with neither is not a browser's cross-site request and passes.
 *
 * OAuth2 callbacks are not guarded: they arrive cross-site by design, and state, PKCE and the handshake cookie
 * protect them.
 */
import type { FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError, OptionsError } from '../errors.js'
import { keyList, named, optionBoolean, optionGroup, optionList } from '../options.js'
import { escapeHtml, PAGE_HEADERS } from '../html.js'

/** The `crossSite` option: which pages may send login, confirm and logout requests. `false` turns the check off. */
export interface CrossSiteOptions {
  /**
   * Origins (`https://app.example.com`) whose pages may send these requests, besides the origin of `url` and the
   * hosts of `allowedRedirectHosts`. Default none.
   */
  trustedOrigins?: string[] | undefined
  /** Accept `Sec-Fetch-Site: same-site` (a page on a sibling subdomain) from any origin. Default false. */
  allowSameSite?: boolean | undefined
}

const CROSS_SITE_KEYS = keyList<CrossSiteOptions>({ trustedOrigins: true, allowSameSite: true })

/** Tells whether a request comes cross-site (and so must be refused). */
export interface CrossSiteGuard {
  isCrossSite(request: FastifyRequest): boolean
  /** Throws 403 `GATEHOUSE_CROSS_SITE` for a cross-site request. */
  check(request: FastifyRequest): void
}

/** The guard the options describe, or `false` when it is off. Throws OptionsError naming `crossSite.*`. */
export function crossSiteGuard (value: unknown, ownOrigin: string, allowedHosts: readonly string[], name = 'crossSite'): CrossSiteGuard | false {
  if (value === false) return false
  const o = optionGroup<CrossSiteOptions>(name, value ?? undefined, CROSS_SITE_KEYS)
  const origins = new Set([ownOrigin])
  for (const entry of optionList(named(name, 'trustedOrigins'), o.trustedOrigins)) origins.add(originOf(entry, named(name, 'trustedOrigins')))
  const hosts = new Set(allowedHosts.map((h) => h.toLowerCase()))
  const allowSameSite = optionBoolean(named(name, 'allowSameSite'), o.allowSameSite, false)

  function trusted (origin: string): boolean {
    if (origins.has(origin)) return true
    let u: URL
    try { u = new URL(origin) } catch { return false }
    if (u.origin !== origin || (u.protocol !== 'https:' && u.protocol !== 'http:')) return false
    return hosts.has(u.host) || hosts.has(u.hostname)
  }

  function isCrossSite (request: FastifyRequest): boolean {
    const origin = request.headers.origin
    if (typeof origin === 'string' && origin !== '' && trusted(origin.toLowerCase())) return false
    switch (request.headers['sec-fetch-site']) {
      case 'same-origin':
      case 'none':
        return false
      case 'same-site':
        return !allowSameSite
      case 'cross-site':
        return true
    }
    // No Sec-Fetch-Site: an Origin, when sent, was not trusted above (`null` included).
    return origin !== undefined
  }

  return {
    isCrossSite,
    check (request) {
      if (isCrossSite(request)) throw new HttpError(403, 'forbidden', 'cross-site request refused: start from this site\'s own pages', ErrorCodes.CROSS_SITE)
    }
  }
}

/** The origin `entry` names (`https://app.example.com`, lower-cased), or an OptionsError naming `option`. */
export function originOf (entry: string, option: string): string {
  let u: URL | undefined
  try { u = new URL(entry) } catch { u = undefined }
  if (u === undefined || (u.protocol !== 'https:' && u.protocol !== 'http:') || u.origin !== entry.replace(/\/$/, '').toLowerCase()) {
    throw new OptionsError(option, `has ${JSON.stringify(entry)}, which is not an origin like https://app.example.com`)
  }
  return u.origin
}

/**
 * A page that asks the user to go on, with a same-origin form POST to `action` carrying `fields`: the answer to
 * a confirmation link opened from another site (a webmail's link is a cross-site navigation). The user's click
 * sends a same-origin request, which the guard lets through; another site cannot click it for them (the page
 * may not be framed).
 */
export function continuePage (action: string, fields: Record<string, string>, text: { title: string; button: string }): { headers: Record<string, string>; body: string } {
  const esc = escapeHtml
  const inputs = Object.entries(fields).map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`).join('')
  return {
    headers: { ...PAGE_HEADERS },
    body: '<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">' +
      `<title>${esc(text.title)}</title></head><body style="font-family:sans-serif;max-width:30em;margin:4em auto">` +
      `<h1 style="font-size:1.3em">${esc(text.title)}</h1><form method="post" action="${esc(action)}">${inputs}` +
      `<button type="submit" style="font-size:1.1em;padding:.5em 1.2em">${esc(text.button)}</button></form></body></html>`
  }
}
