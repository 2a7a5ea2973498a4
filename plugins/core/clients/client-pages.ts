/**
 * The small pages the registered clients' sign-ins show in the browser (the device code entry page, the
 * confirmation of a native sign-in started from another site), and the rule their forms are posted under: from
 * this site's own page only.
 */
import type { FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError } from '../../../lib/errors.js'
import { escapeHtml } from '../../../lib/html.js'
import { safeEqual } from '../../../lib/compare.js'
import type { FieldReader } from './token-endpoint.js'
import type { Claims } from '../base/types.js'

/** A page of its own: `body` is HTML the caller escaped; `title` is escaped here. */
export function clientPage (title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:26rem;margin:3rem auto;padding:0 1rem}input{font-size:1.5rem;letter-spacing:.2em;text-transform:uppercase;width:100%}button{font-size:1rem;margin:.5rem .5rem 0 0;padding:.4rem 1rem}</style></head>
<body><h1>${escapeHtml(title)}</h1>${body}</body></html>`
}

/**
 * 403 `GATEHOUSE_CROSS_SITE` unless the form was posted from a page of `origin` itself: a page on another site must
 * not approve a sign-in for the user who happens to be signed in here.
 */
export function checkOwnPageForm (request: FastifyRequest, origin: string, what: string): void {
  const site = request.headers['sec-fetch-site']
  const from = request.headers.origin
  if ((site !== undefined && site !== 'same-origin') || (from !== undefined && from !== origin)) {
    throw new HttpError(403, 'forbidden', `${what} from this site's own page`, ErrorCodes.CROSS_SITE)
  }
}

/** What a confirmation form needs: the app's origin and the browser's session. */
export interface PageFormDeps {
  origin: string
  session: (request: FastifyRequest) => Promise<Claims | null>
}

/** A confirmed answer on one of these pages: the signed-in session, the form's fields, and the user's choice. */
export interface PageAnswer { claims: Claims; field: FieldReader; approve: boolean }

/**
 * The one check of an answer posted from these pages (the device page, the confirmation of a sign-in started from
 * another site): from this site's own page (403 `GATEHOUSE_CROSS_SITE`), by a signed-in browser (401), carrying the
 * page's XSRF value (the session's `jti`, compared in constant time; 403 `GATEHOUSE_XSRF`), and `action` approve or
 * deny (400).
 */
export async function pageAnswer (d: PageFormDeps, request: FastifyRequest, formOf: (request: FastifyRequest) => FieldReader, what: string): Promise<PageAnswer> {
  checkOwnPageForm(request, d.origin, what)
  const claims = await d.session(request)
  if (claims === null) throw new HttpError(401, 'unauthorized', 'not logged in')
  const field = formOf(request)
  if (!safeEqual(field('xsrf'), claims.jti)) throw new HttpError(403, 'forbidden', 'the page\'s XSRF value does not match the session', ErrorCodes.XSRF)
  const action = field('action')
  if (action !== 'approve' && action !== 'deny') throw new HttpError(400, 'bad request', 'action must be approve or deny')
  return { claims, field, approve: action === 'approve' }
}
