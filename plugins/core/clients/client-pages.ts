/**
 * The small pages the registered clients' sign-ins show in the browser (the device code entry page, the
 * confirmation of a native sign-in started from another site), and the rule their forms are posted under: from
 * this site's own page only.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError } from '../../../lib/errors.js'
import { DEFAULT_THEME, renderPage } from '../base/page-layout.js'
import { safeEqual } from '../../../lib/compare.js'
import type { FieldReader } from './token-endpoint.js'
import type { Claims } from '../base/types.js'

/** A page in the package's layout and the app's theme: `body` is HTML the caller escaped; `title` is escaped here. */
export function clientPage (title: string, body: string, theme: string = DEFAULT_THEME): string {
  return renderPage(theme, title, body)
}

/** The signed-in user's name as the pages show it, or undefined for a session without one. */
export function userNameOf (claims: Claims): string | undefined {
  const name = claims.user?.name
  return typeof name === 'string' && name !== '' ? name : undefined
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
  /** The app's origin: a page's form is posted from its own page only. */
  origin: string
  /** The browser's cookie session, read and refreshed as on any authenticated route (tokens.ts `pageSession`), or null. */
  session: (request: FastifyRequest, reply: FastifyReply) => Promise<Claims | null>
  /** Whether the request carries a token elsewhere than the session cookie (a header, Bearer, the app's extractor). */
  tokenSent: (request: FastifyRequest) => boolean
}

/** A confirmed answer on one of these pages: the signed-in session, the form's fields, and the user's choice. */
export interface PageAnswer { claims: Claims; field: FieldReader; approve: boolean }

/**
 * The one check of an answer posted from these pages (the device page, the confirmation of a sign-in started from
 * another site): from this site's own page (403 `GATEHOUSE_CROSS_SITE`), by a signed-in browser (401), carrying the
 * page's XSRF value (the session's `jti`, compared in constant time; 403 `GATEHOUSE_XSRF`), and `action` approve or
 * deny (400).
 */
export async function pageAnswer (d: PageFormDeps, request: FastifyRequest, reply: FastifyReply, formOf: (request: FastifyRequest) => FieldReader, what: string): Promise<PageAnswer> {
  checkOwnPageForm(request, d.origin, what)
  const claims = await d.session(request, reply)
  if (claims === null) throw notSignedIn(d.tokenSent(request), what)
  const field = formOf(request)
  if (!safeEqual(field('xsrf'), claims.jti)) throw new HttpError(403, 'forbidden', 'the page\'s XSRF value does not match the session', ErrorCodes.XSRF)
  const action = field('action')
  if (action !== 'approve' && action !== 'deny') throw new HttpError(400, 'bad request', 'action must be approve or deny')
  return { claims, field, approve: action === 'approve' }
}

/**
 * The 401 of a page's form without a browser session. A client that sent its token in a header (a CLI posting the
 * form itself with its Bearer token) is told what is missing: the decision is the signed-in browser's, by its
 * session cookie, never a token's.
 */
function notSignedIn (tokenSent: boolean, what: string): HttpError {
  if (!tokenSent) return new HttpError(401, 'unauthorized', 'not logged in')
  return new HttpError(401, 'unauthorized', `${what} by a signed-in browser (its session cookie), on this page: a Bearer or header token is not taken here`)
}
