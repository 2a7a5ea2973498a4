/**
 * The package's sign-in page (`login.page: true`, or left out when the app has no `GET /login`), at
 * `{authPrefix}/sign-in`: a page to start from. It offers what the mounted providers declare (`MountOptions.signInPage`):
 * a link to each OAuth2 provider's `/login` and a password form per password provider (with the captcha's field
 * when `captcha` guards it), each carrying `from` (kept only when the redirect policy would follow it). No script:
 * the forms post to the providers' own login routes, behind their prelude (throttling, captcha, cross-site check);
 * a refused sign-in from this page comes back here with the reason shown (`pageError`), never as JSON.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify'
import { ErrorCodes, type HttpError } from '../../../lib/errors.js'
import { escapeHtml, sendPage } from '../../../lib/html.js'
import type { Logger } from '../../../lib/logging/logger.js'
import { renderPage } from '../base/page-layout.js'

/** What the page reads of the core: the providers it offers, and the redirect policy that judges `from`. */
export interface SignInPageCore {
  readonly signInMethods: ReadonlyMap<string, 'link' | 'password'>
  safeRedirect(from: string | undefined): string | undefined
}
import type { ResolvedOptions } from '../base/types.js'

/** The query parameter a form of this page adds to its action, so that a refusal comes back to the page. */
export const FROM_PAGE = 'page'
const PAGE_NAME = 'sign-in'

/** What a refusal says on the page, by error code: fixed texts (a code not listed gets the generic one). */
const MESSAGES: Record<string, string> = {
  [ErrorCodes.CREDENTIALS]: 'Incorrect user name or password.',
  [ErrorCodes.RATE_LIMITED]: 'Too many attempts: wait a few minutes, then try again.',
  [ErrorCodes.CAPTCHA]: 'The captcha was not solved: try again.',
  [ErrorCodes.BREACHED_PASSWORD]: 'This password is known from data breaches: reset it to sign in.',
  [ErrorCodes.BAD_REQUEST]: 'Fill in every field.',
  [ErrorCodes.CROSS_SITE]: 'This form was sent from another site: open this page again.'
}
const GENERIC = 'The sign-in did not work: try again.'

/** Display names of the built-ins whose name is not simply capitalised. */
const LABELS: Record<string, string> = { github: 'GitHub', gitlab: 'GitLab', battlenet: 'Battle.net', linkedin: 'LinkedIn', dev: 'the dev server', paypal: 'PayPal', twitter: 'X' }
const labelOf = (name: string): string => LABELS[name] ?? name.charAt(0).toUpperCase() + name.slice(1)

/** Where a browser signs in: the app's page or the package's; the package's page and its route, when served. */
export class SignInPage {
  /** The absolute URL a browser is sent to for a sign-in (read when sending it: the start may change it). */
  url: string
  /** Whether the package serves its page (its route is registered). */
  readonly served: boolean
  /** The URL of the package's page (`{url}{authPrefix}/sign-in`). */
  readonly packaged: string

  constructor (private readonly o: ResolvedOptions) {
    this.url = o.loginPage
    this.packaged = o.pages.packagedSignIn
    const needed = o.clients.size > 0 || o.pages.sessions
    this.served = o.pages.signIn === 'package' || (o.pages.signIn === 'fallback' && needed)
  }

  /** `url` with `from` added to its query. */
  with (from: string): string {
    return `${this.url}${this.url.includes('?') ? '&' : '?'}from=${encodeURIComponent(from)}`
  }

  /**
   * At startup, `login.page` left out: the app's `GET /login` when it has one, else the package's page, said once
   * in the log (a first device or native sign-in must not end on a 404).
   */
  ready (fastify: FastifyInstance, logger: Logger): void {
    if (this.o.pages.signIn !== 'fallback' || !this.served) return
    if (fastify.hasRoute({ method: 'GET', url: new URL(this.url).pathname })) return
    this.url = this.o.pages.packagedSignIn
    logger.logf('[INFO] auth: no GET %s route: browsers sign in on the package\'s page %s (set login.page to your page, or to true)', new URL(this.o.loginPage).pathname, this.url)
  }

  /** `GET /sign-in`, in the core's auth scope. */
  route (scope: FastifyInstance, core: SignInPageCore): void {
    if (!this.served) return
    scope.get('/sign-in', { schema: { summary: 'The package\'s sign-in page (HTML)' } as FastifySchema }, async (request, reply) => await this.page(core, request, reply))
  }

  private async page (core: SignInPageCore, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const query = (request.query ?? {}) as Record<string, unknown>
    const from = typeof query.from === 'string' ? core.safeRedirect(query.from) : undefined
    const code = typeof query.error === 'string' ? query.error : undefined
    const error = code === undefined ? '' : `<p id="error" class="message error" role="alert">${escapeHtml(MESSAGES[code] ?? GENERIC)}</p>`
    const to = from ?? `${this.o.url}/`
    // A sign-in from its forms is answered by a redirect to `to` (another allowed host, maybe), and from /authorize on
    // to a registered app's redirect URI: the browser checks each hop against form-action.
    const targets = [to, ...[...this.o.clients.values()].flatMap((c) => [...c.redirectUris])]
    return await sendPage(reply, renderPage(this.o.pages.theme, 'Sign in', `${error}${this.methods(core, to)}`), 200, targets)
  }

  /** The providers this page offers, in registration order: links first, then a form per password provider. */
  private methods (core: SignInPageCore, from: string): string {
    const base = `${this.o.url}${this.o.authPrefix}`
    const to = encodeURIComponent(from)
    const links: string[] = []
    const forms: string[] = []
    const passwords = [...core.signInMethods.values()].filter((m) => m === 'password').length
    for (const [name, method] of core.signInMethods) {
      const login = `${base}/${name}/login?from=${to}`
      if (method === 'link') links.push(`<li><a class="button" href="${escapeHtml(login)}" data-provider="${escapeHtml(name)}">Continue with ${escapeHtml(labelOf(name))}</a></li>`)
      else forms.push(this.passwordForm(name, `${login}&${FROM_PAGE}=${PAGE_NAME}`, passwords > 1))
    }
    if (links.length + forms.length === 0) return '<p class="message">No sign-in method is offered on this page.</p>'
    const list = links.length === 0 ? '' : `<ul class="providers" aria-label="Sign in with">${links.join('')}</ul>`
    return list + forms.join('')
  }

  private passwordForm (name: string, action: string, named: boolean): string {
    const id = (field: string): string => escapeHtml(`${field}-${name}`)
    const captcha = this.o.captcha !== undefined && this.o.captcha.guards(name)
      ? `<label for="${id('captcha')}">Captcha</label><input id="${id('captcha')}" name="${escapeHtml(this.o.captcha.field)}" autocomplete="off" required>`
      : ''
    return `<form method="post" action="${escapeHtml(action)}" id="${id('form')}"><h2>${named ? `With your ${escapeHtml(labelOf(name))} password` : 'With your password'}</h2>
<label for="${id('user')}">User name</label><input id="${id('user')}" name="user" autocomplete="username" required>
<label for="${id('passwd')}">Password</label><input id="${id('passwd')}" name="passwd" type="password" autocomplete="current-password" required>${captcha}
<button type="submit">Sign in</button></form>`
  }
}

/**
 * A refused sign-in posted from the package's page (its form's action carries `page=sign-in`): back to the page with
 * the reason (303, `error=<code>`), `from` kept. Undefined for any other request, which is answered as usual.
 */
export function pageError (page: SignInPage, request: FastifyRequest, reply: FastifyReply, err: HttpError): FastifyReply | undefined {
  const query = (request.query ?? {}) as Record<string, unknown>
  if (request.method !== 'POST' || query[FROM_PAGE] !== PAGE_NAME || !page.served) return undefined
  const from = typeof query.from === 'string' ? `&from=${encodeURIComponent(query.from)}` : ''
  if (err.headers !== undefined) reply.headers(err.headers)
  return reply.redirect(`${page.packaged}?error=${encodeURIComponent(err.code)}${from}`, 303)
}
