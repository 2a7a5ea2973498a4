import type { FastifyReply, FastifyRequest } from 'fastify'
import { escapeHtml } from '../lib/html.js'

/** Name of the form field carrying the user name. */
export const USER_FIELD = 'user'
/** Name of the form field (any value) that refuses the login: the client then gets `error=access_denied`. */
export const DENY_FIELD = 'deny'

/** What a login page needs to build its form. */
export interface LoginPageContext {
  /** Where the form must be POSTed (`application/x-www-form-urlencoded`). */
  action: string
  /** Hidden fields the form must send back unchanged (they identify the pending authorization request). */
  hidden: Record<string, string>
  /** Name of the user-name field. */
  userField: typeof USER_FIELD
  /** Name of the optional "deny" submit field. */
  denyField: typeof DENY_FIELD
  /** The client asking for access and the scopes it asked for (for display; escape them). */
  clientId: string
  scopes: string[]
  /** Why the previous submit was refused, e.g. an empty user name. */
  error?: string | undefined
}

/**
 * Renders the login page of a local OAuth2 server. Either return the page's HTML as a string (sent as
 * `text/html`, status 400 when `page.error` is set), or send the reply and return it, as in any async
 * Fastify handler. The form must POST `hidden` and the user-name field to `action`. Everything taken
 * from the context must be HTML-escaped (`escapeHtml`).
 */
export type LoginPageHandler = (request: FastifyRequest, reply: FastifyReply, page: LoginPageContext) => unknown

export { escapeHtml }

/** The default login page: one user-name field; any non-empty name signs in. Styled like the demo page. */
export function defaultLoginPage (page: LoginPageContext): string {
  const hidden = Object.entries(page.hidden)
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`).join('\n      ')
  const error = page.error === undefined ? '' : `<p class="error" role="alert">${escapeHtml(page.error)}</p>`
  const scopes = page.scopes.length === 0 ? '' : `<p class="scopes">Scopes: <code>${escapeHtml(page.scopes.join(' '))}</code></p>`
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Sign in · local OAuth2 server</title>
  <style>${LOGIN_PAGE_CSS}</style>
</head>
<body>
  <header><div class="bar">${MARK}<span>local OAuth2 server</span><span class="tag">development</span></div></header>
  <main>
    <h1>Sign in</h1>
    <p>Client <b>${escapeHtml(page.clientId)}</b> asks who you are. This server is for development: any user name
      signs in, no password.</p>
    ${scopes}
    ${error}
    <form method="post" action="${escapeHtml(page.action)}">
      ${hidden}
      <label for="user">User name</label>
      <input type="text" id="user" name="${USER_FIELD}" maxlength="64" autocomplete="username" autofocus required>
      <div class="actions">
        <button type="submit">Sign in</button>
        <button type="submit" name="${DENY_FIELD}" value="1" class="secondary" formnovalidate>Deny</button>
      </div>
    </form>
  </main>
</body>
</html>
`
}

// The gatehouse mark, inline: the page's CSP loads nothing from anywhere.
const MARK = '<svg viewBox="0 0 64 64" width="28" height="28" aria-hidden="true"><rect width="64" height="64" rx="14" fill="#2f5bd3"/>' +
  '<path d="M14 52V28a18 18 0 0 1 36 0v24" fill="none" stroke="#fff" stroke-width="5" stroke-linecap="round"/>' +
  '<circle cx="32" cy="34" r="5.5" fill="#fff"/><path d="M29.5 37h5l1.5 10h-8z" fill="#fff"/></svg>'

// The demo page's colours and controls (example/public/style.css), reduced to this one form.
const LOGIN_PAGE_CSS = `
    :root { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1b2230; background: #f3f5f8; }
    * { box-sizing: border-box; }
    body { margin: 0; }
    header { background: linear-gradient(135deg, #18213a, #24386b); color: #fff; }
    .bar { max-width: 26rem; margin: 0 auto; padding: .9rem 1.25rem; display: flex; align-items: center; gap: .6rem; font-weight: 600; }
    .tag { font-size: .75rem; font-weight: 500; padding: .05rem .5rem; border-radius: 999px; background: #ffffff26; }
    main { max-width: 26rem; margin: 2rem auto; padding: 1.4rem 1.5rem; background: #fff; border: 1px solid #dde1e8; border-radius: 10px; }
    h1 { margin: 0 0 .5rem; font-size: 1.35rem; }
    p { color: #5d6677; margin: 0 0 1rem; }
    p b { color: #1b2230; }
    code { font: 13.5px ui-monospace, Menlo, Consolas, monospace; background: #f3f5f8; padding: 0 .25rem; border-radius: 4px; }
    label { display: block; font-size: .92rem; color: #5d6677; margin-bottom: .3rem; }
    input[type=text] { width: 100%; padding: .55rem .7rem; font: inherit; border: 1px solid #c5cbd6; border-radius: 7px; }
    input:focus-visible, button:focus-visible { outline: 3px solid #2f5bd355; outline-offset: 1px; border-color: #2f5bd3; }
    .actions { display: flex; gap: .6rem; margin-top: 1rem; }
    button { padding: .5rem 1.1rem; border: 1px solid #2f5bd3; border-radius: 7px; background: #2f5bd3; color: #fff; font: inherit; font-weight: 500; cursor: pointer; }
    button:hover { background: #1f44a8; }
    button.secondary { background: #fff; color: #2f5bd3; }
    button.secondary:hover { background: #eef2fc; }
    .error { padding: .6rem .9rem; border-radius: 8px; background: #fdecec; color: #8a1c1c; border: 1px solid #f3c6c6; }
  `
