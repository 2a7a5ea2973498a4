/**
 * `fastify-gatehouse/testing`: helpers for the host app's own tests. `signIn(app, user)` gives the cookies and
 * header of a signed-in user for `app.inject`, with no login round trip:
 *
 * ```ts
 * const { cookies, headers } = await signIn(app, { id: 'u1', name: 'Ann' })
 * const res = await app.inject({ method: 'POST', url: '/notes', cookies, headers, payload: { text: 'hi' } })
 * ```
 */
import './augment.js'
import type { FastifyInstance } from 'fastify'
import { coreOf } from './plugins/core/signin/internals.js'
import type { Claims } from './plugins/core/base/types.js'
import type { UserData } from './lib/user.js'

/** Options of `signIn`. */
export interface SignInOptions {
  /** The session's audience (`site`/`aud` of a login); one of `audiences` when that option is set. Default none. */
  aud?: string | undefined
  /** Extra claims the session token carries (a claims updater still runs on them). */
  claims?: Record<string, unknown> | undefined
}

/** A signed-in user's credentials, ready for `app.inject({ cookies, headers })`. */
export interface SignedIn {
  /** The session cookie and the XSRF cookie, by the names the app's `cookies` options give them. */
  readonly cookies: Readonly<Record<string, string>>
  /** The XSRF header (`xsrf.headerName`) that cookie sessions need on every request. */
  readonly headers: Readonly<Record<string, string>>
  /** The session token itself (also in `cookies`); send it as the `X-JWT` header to test a token client. */
  readonly token: string
  /** The session's claims (`jti` is the XSRF value and the id `revokeSession` takes). */
  readonly claims: Claims
}

/**
 * Creates a session for `user` on `app` (its auth core, whatever its `decoratorName`), as a login would, and
 * returns what a browser would send with it. Waits for `app.ready()`, so call it once the app's routes are added.
 * The session is not added to the "where you're signed in" list (no login request happened).
 */
export async function signIn (app: FastifyInstance, user: UserData, opts: SignInOptions = {}): Promise<SignedIn> {
  await app.ready()
  const core = coreOf(app, 'signIn')
  const { token, claims } = await core.tokens.create({ ...opts.claims, user, ...(opts.aud === undefined ? {} : { aud: opts.aud }) })
  const { cookies, xsrf } = core.options
  return {
    cookies: { [cookies.sessionName]: token, [cookies.xsrfName]: claims.jti },
    headers: { [xsrf.headerName]: claims.jti },
    token,
    claims
  }
}
