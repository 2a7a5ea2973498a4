/**
 * "Where you're signed in" as a page of the package (`revocation.sessionList.page: true`), at
 * `{authPrefix}/sessions/page`: the signed-in user's sessions, this browser's first, each with an "End" button, and
 * "End every other session". No script: every button is a form posted to the same path with the session's XSRF
 * value, from this site's own page only. Ending another session takes the one rule of ending other sessions
 * (`sessionEndingOthers`): a recent sign-in, or the password typed into the form (asked for when the sign-in is
 * not recent and the user has a password here; a user without one signs in again). Ending this browser's session
 * signs it out. A browser without a session is sent to sign in first, and back.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify'
import { ErrorCodes, HttpError } from '../../lib/errors.js'
import { escapeHtml, sendPage } from '../../lib/html.js'
import { safeEqual } from '../../lib/compare.js'
import type { CoreInternals } from './signin/internals.js'
import type { SessionList } from './sessions/sessions.js'
import { renderPage } from './base/page-layout.js'
import { checkOwnPageForm } from './clients/client-pages.js'
import { sessionEndingOthers, type SignedInSession } from './signin/reauth.js'
import { auditEnded } from './sessions/session-audit.js'
import { clearSiteCookies } from './sessions/cookies.js'
import type { ListedSession } from './base/types.js'

const PATH = '/sessions/page'
/** What the page says after an action or a refusal, by a fixed key of its query (never text from the URL). */
const DONE: Record<string, string> = { ended: 'The session was ended.', others: 'Every other session was ended.' }
const ERRORS: Record<string, string> = {
  reauth: 'Ending another session needs your password (or a new sign-in): type it and try again.',
  [ErrorCodes.CREDENTIALS]: 'Incorrect password.',
  [ErrorCodes.RATE_LIMITED]: 'Too many attempts: wait a few minutes, then try again.',
  [ErrorCodes.NOT_FOUND]: 'That session has already ended.',
  [ErrorCodes.XSRF]: 'This page is out of date: try again.'
}
const GENERIC = 'That did not work: try again.'

export function sessionsPage (scope: FastifyInstance, core: CoreInternals, sessions: SessionList): void {
  if (!core.options.pages.sessions) return
  const url = `${core.options.url}${core.options.authPrefix}${PATH}`

  /** The page's cookie session with its user, or null (the browser signs in first). */
  const signedIn = async (request: FastifyRequest, reply: FastifyReply): Promise<SignedInSession | null> => {
    const session = await core.tokens.pageSession(request, reply)
    if (session === null || session.user === null) return null
    return { user: session.user, claims: session.claims, sessionId: session.claims.jti, cookie: true }
  }

  scope.get(PATH, { schema: { summary: 'The signed-in user\'s sessions, as a page (HTML)' } as FastifySchema }, async (request, reply) => {
    const session = await signedIn(request, reply)
    if (session === null) return reply.redirect(core.signInPage.with(url), 302)
    const query = (request.query ?? {}) as Record<string, unknown>
    const message = typeof query.done === 'string' && DONE[query.done] !== undefined
      ? `<p id="message" class="message" role="status">${DONE[query.done]!}</p>`
      : typeof query.error === 'string' ? `<p id="message" class="message error" role="alert">${escapeHtml(ERRORS[query.error] ?? GENERIC)}</p>` : ''
    const listed = await sessions.list(session.user.id, session.sessionId)
    const body = `<p>Signed in as <strong>${escapeHtml(session.user.name)}</strong>.</p>${message}${table(core, url, session, listed, query.error === 'reauth')}`
    return await sendPage(reply, renderPage(core.options.pages.theme, 'Where you\'re signed in', body))
  })

  scope.post(PATH, { schema: { summary: 'Ends a session from the session page' } as FastifySchema }, async (request, reply) => {
    checkOwnPageForm(request, core.options.origin, 'a session is ended')
    const session = await signedIn(request, reply)
    if (session === null) return reply.redirect(core.signInPage.with(url), 303)
    const fields = (request.body ?? {}) as Record<string, unknown>
    const back = (key: 'done' | 'error', value: string): FastifyReply => reply.redirect(`${url}?${key}=${encodeURIComponent(value)}`, 303)
    if (typeof fields.xsrf !== 'string' || !safeEqual(fields.xsrf, session.sessionId)) return back('error', ErrorCodes.XSRF)
    const id = typeof fields.id === 'string' ? fields.id : undefined
    const userId = session.user.id
    if (id === session.sessionId) {
      // This browser's own session: a sign-out.
      await sessions.revoke(userId, (ids) => ids.filter((x) => x === id))
      auditEnded(core.options.audit, request, userId, 1)
      core.tokens.reset(reply)
      clearSiteCookies(reply)
      return reply.redirect(core.signInPage.url, 303)
    }
    try {
      await sessionEndingOthers(core, request, reply, session)
    } catch (err) {
      if (err instanceof HttpError) return back('error', err.code === ErrorCodes.REAUTHENTICATE ? 'reauth' : err.code)
      throw err
    }
    if (id === undefined) {
      const ended = await sessions.endOthers(userId, { jti: session.sessionId, authTime: session.claims.auth_time ?? 0 })
      auditEnded(core.options.audit, request, userId, ended.length)
      return back('done', 'others')
    }
    const ended = await sessions.revoke(userId, (ids) => ids.filter((x) => x === id))
    if (ended.length === 0) return back('error', ErrorCodes.NOT_FOUND)
    auditEnded(core.options.audit, request, userId, ended.length)
    return back('done', 'ended')
  })
}

/** The sessions, each with its form; the password field when ending another session would need it. */
function table (core: CoreInternals, url: string, session: SignedInSession, listed: ListedSession[], asked: boolean): string {
  const reauth = reauthNeeded(core, session, asked)
  const form = (label: string, id: string | undefined, secondary: boolean): string => {
    const password = id === session.sessionId || reauth !== 'password' ? '' : `<label for="password-${escapeHtml(id ?? 'others')}">Your password</label><input id="password-${escapeHtml(id ?? 'others')}" name="password" type="password" autocomplete="current-password" required>`
    const hidden = id === undefined ? '' : `<input type="hidden" name="id" value="${escapeHtml(id)}">`
    return `<form method="post" action="${escapeHtml(url)}">${hidden}<input type="hidden" name="xsrf" value="${escapeHtml(session.sessionId)}">${password}<button type="submit"${secondary ? ' class="secondary"' : ''}>${label}</button></form>`
  }
  const rows = listed.map((s) => `<tr${s.current ? ' id="current"' : ''}><td>${escapeHtml(s.device)}${s.current ? ' <strong>(this browser)</strong>' : ''}<div class="muted">${escapeHtml(s.provider ?? 'the app')} · signed in ${when(s.createdAt)} · last seen ${when(s.lastSeenAt)}</div></td>
<td>${s.current ? form('Sign out', s.id, true) : reauth === 'sign-in' ? '' : form('End', s.id, false)}</td></tr>`).join('')
  const others = listed.some((s) => !s.current)
  const again = reauth === 'sign-in' && others
    ? `<p class="message">To end another session, <a href="${escapeHtml(core.signInPage.with(url))}">sign in again</a> first.</p>`
    : ''
  const all = others && reauth !== 'sign-in' ? form('End every other session', undefined, false) : ''
  return `<table><caption class="muted">Sessions of this account, this browser's first</caption><thead><tr><th scope="col">Session</th><th scope="col"><span class="muted">Action</span></th></tr></thead><tbody>${rows}</tbody></table>${again}${all}`
}

/**
 * What ending another session needs beyond the button: nothing (a recent sign-in, or the rule is off), the password
 * (the user has one here: a password provider's user), or a new sign-in (none). `asked`: a refusal just said so.
 */
function reauthNeeded (core: CoreInternals, session: SignedInSession, asked: boolean): 'none' | 'password' | 'sign-in' {
  const { otherSessions, withinMs } = core.options.reauthentication
  const recent = Date.now() - (session.claims.auth_time ?? session.claims.iat) * 1000 <= withinMs
  if (!otherSessions || (recent && !asked)) return 'none'
  const passwordUser = [...core.signInMethods].some(([name, method]) => method === 'password' && session.user.id.startsWith(`${name}_`))
  return passwordUser && core.reauth.kinds().includes('password') ? 'password' : 'sign-in'
}

/** An ISO date as the page shows it: `2026-01-05 09:00 UTC`. */
function when (iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`
}
