import type { FastifyReply, FastifyRequest } from 'fastify'

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
  error?: string
}

/**
 * Renders the login page of a local OAuth2 server. Either return the page's HTML as a string (sent as
 * `text/html`, status 400 when `page.error` is set), or send the reply and return it, as in any async
 * Fastify handler. The form must POST `hidden` and the user-name field to `action`. Everything taken
 * from the context must be HTML-escaped (`escapeHtml`).
 */
export type LoginPageHandler = (request: FastifyRequest, reply: FastifyReply, page: LoginPageContext) => unknown

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml (text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!)
}

/** The default login page: one user-name field; any non-empty name signs in. */
export function defaultLoginPage (page: LoginPageContext): string {
  const hidden = Object.entries(page.hidden)
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`).join('\n      ')
  const error = page.error === undefined ? '' : `<p class="error" role="alert">${escapeHtml(page.error)}</p>`
  const scopes = page.scopes.length === 0 ? '' : `<p>Scopes: ${escapeHtml(page.scopes.join(' '))}</p>`
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Sign in</title>
  <style>
    body { font-family: system-ui, sans-serif; max-width: 22rem; margin: 4rem auto; padding: 0 1rem; }
    input[type=text] { width: 100%; padding: .5rem; box-sizing: border-box; margin: .5rem 0 1rem; }
    .error { color: #b00020; }
  </style>
</head>
<body>
  <h1>Sign in</h1>
  <p>Client <b>${escapeHtml(page.clientId)}</b> asks who you are. Any user name signs in.</p>
  ${scopes}
  ${error}
  <form method="post" action="${escapeHtml(page.action)}">
      ${hidden}
    <label for="user">User name</label>
    <input type="text" id="user" name="${USER_FIELD}" maxlength="64" autofocus required>
    <button type="submit">Sign in</button>
    <button type="submit" name="${DENY_FIELD}" value="1" formnovalidate>Deny</button>
  </form>
</body>
</html>
`
}
