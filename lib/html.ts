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
 * Sends `html` as a page of the package (PAGE_HEADERS). `formTarget`: where the page's form, posted to this origin,
 * is answered with a redirect (a sign-in handing its code to the client's redirect URI). Browsers hold a redirect
 * after a form's POST to the page's `form-action` too, so that target is allowed there beside `'self'`.
 */
export function sendPage (reply: FastifyReply, html: string, status = 200, formTarget?: string): FastifyReply {
  reply.code(status).headers(PAGE_HEADERS)
  if (formTarget !== undefined) reply.header('content-security-policy', pageCsp(formTarget))
  return reply.send(html)
}

/**
 * PAGE_CSP whose `form-action` also allows the redirect after the form to `target` (an absolute URI): its origin for
 * http(s), its scheme for a private-use scheme (`com.example.app:`, RFC 8252 §7.1). Anything else stays `'self'`.
 */
export function pageCsp (target: string): string {
  let source: string | undefined
  try {
    const url = new URL(target)
    if (url.protocol === 'http:' || url.protocol === 'https:') source = url.origin
    else if (/^[a-z][a-z0-9+.-]*:$/.test(url.protocol)) source = url.protocol
  } catch {}
  return source === undefined ? PAGE_CSP : PAGE_CSP.replace("form-action 'self'", `form-action 'self' ${source}`)
}

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
