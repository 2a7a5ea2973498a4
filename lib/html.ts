/**
 * The package's HTML: one escaper for text into element content and quoted attribute values, and the headers of
 * every page it serves (the device page, the sign-in confirmations, the local OAuth2 servers' login page), so that
 * no page can be framed by another site (clickjacking a prefilled Approve) or run anything it did not ship.
 */
import type { FastifyReply } from 'fastify'

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Escapes `& < > " '` for HTML element content and quoted attribute values. */
export function escapeHtml (text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!)
}

/** The CSP of a page of the package: no script, its own inline style, forms to itself, no framing. */
export const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

/**
 * The headers of every HTML page the package serves. The referrer policy is `same-origin`, not `no-referrer`: the
 * page's own form is posted to this origin, and under `no-referrer` a browser sends that POST with `Origin: null`,
 * which the pages' same-origin check (rightly) refuses; other sites get no Referer either way.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': PAGE_CSP,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store'
})

/**
 * Sends `html` as a page of the package (PAGE_HEADERS). `formTargets`: where the page's form, posted to this origin,
 * is answered with a redirect (a sign-in handing its code to the client's redirect URI): allowed by its CSP (pageCsp).
 */
export function sendPage (reply: FastifyReply, html: string, status = 200, formTargets: string | readonly string[] = []): FastifyReply {
  reply.code(status).headers(PAGE_HEADERS)
  if (formTargets.length > 0) reply.header('content-security-policy', pageCsp(formTargets))
  return reply.send(html)
}

/**
 * The CSP of a page whose form is answered by redirects to other origins (the sign-in page sends the browser on to
 * `from` and, from `/authorize`, to an app's redirect URI; the confirmation to the app's redirect URI): browsers apply
 * `form-action` to every redirect that answers a form, so each target is allowed beside `'self'`: a URL's origin
 * (a loopback `http` one on any port, as RFC 8252 §7.3 lets native apps choose theirs), or the scheme of a
 * private-use URI (`com.example.app:`, RFC 8252 §7.1). A target that is no URL is left out.
 */
export function pageCsp (formTargets: string | readonly string[]): string {
  const sources = new Set<string>()
  for (const target of typeof formTargets === 'string' ? [formTargets] : formTargets) {
    let url: URL
    try { url = new URL(target) } catch { continue }
    if (url.protocol === 'http:' && (url.hostname === '127.0.0.1' || url.hostname === '[::1]')) sources.add(`http://${url.hostname}:*`)
    else if (url.protocol === 'http:' || url.protocol === 'https:') sources.add(url.origin)
    else if (/^[a-z][a-z0-9+.-]*:$/.test(url.protocol)) sources.add(url.protocol)
  }
  return sources.size === 0 ? PAGE_CSP : PAGE_CSP.replace("form-action 'self'", `form-action 'self' ${[...sources].join(' ')}`)
}

/**
 * PAGE_CSP without `form-action`, for a page whose form ends wherever its client's own flow goes (the local OAuth2
 * servers' login page: back to the client, which may send the browser on to an app's private-use scheme). Only
 * those development servers use it; the page still runs no script and cannot be framed.
 */
export const OPEN_FORM_CSP = PAGE_CSP.replace("form-action 'self'; ", '')

/**
 * For an answer of any kind on the package's own routes: `X-Frame-Options: DENY`, and `frame-ancestors 'none'` in
 * its CSP (added to the one it has, or as its CSP). A page that forgot its headers is still never framed.
 */
export function denyFraming (reply: FastifyReply): void {
  reply.header('x-frame-options', 'DENY')
  const csp = reply.getHeader('content-security-policy')
  if (csp === undefined) reply.header('content-security-policy', "frame-ancestors 'none'")
  else if (typeof csp === 'string' && !/(^|;)\s*frame-ancestors\s/i.test(csp)) reply.header('content-security-policy', `${csp}; frame-ancestors 'none'`)
}
