/**
 * Single logout, SP-initiated (HTTP-Redirect binding). `/logout` ends the session here first (revoked on every
 * instance, cookies cleared), so the user is signed out whatever the IdP does; then, for a session this provider
 * signed in whose IdP has a logout endpoint, it sends a signed-when-keyed LogoutRequest for the session's NameID and
 * SessionIndex: a 303 to the IdP for a page navigation, else `{status: 'logged out', location}` for the page to
 * follow. The IdP's LogoutResponse comes back to `/slo`, is checked by node-saml (issuer, status, its signature when
 * signed, `InResponseTo` equal to the request sent, kept once in the state store) and ends at the app's root.
 * Logout requests an IdP starts are not taken (400).
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError } from '../../lib/errors.js'
import { queryText } from '../../lib/login/login-request.js'
import { requestLogger } from '../../lib/logging/logger.js'
import type { SignedInSession } from '../../plugins/core/kit.js'
import { samlClient } from './client.js'
import { LoginStateCookie } from './login-state.js'
import { isNavigation, type SamlContext } from './context.js'
import { sessionAttrs } from './user.js'

const UNSPECIFIED = 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified'

/** The provider's `/logout`. */
export function samlLogout (ctx: SamlContext) {
  const { kit, o } = ctx
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    let session: SignedInSession | undefined
    try {
      session = await kit.sessions.signedIn(request, reply)
    } catch (err) {
      if (!(err instanceof HttpError && err.statusCode === 401)) throw err
    }
    kit.api.tokens.reset(reply)
    if (session === undefined) return await reply.send({ status: 'logged out' })
    await kit.api.sessions.revoke(session.sessionId)
    const userId = session.user.id
    if (kit.audit.on) kit.audit.emit(request, 'logout', { reason: 'session', provider: o.name, userId, aud: session.claims.aud?.[0], everywhere: false })
    const location = await logoutRequestUrl(ctx, request, session).catch((err: unknown) => {
      // The session has ended here; the IdP's session stays, which the log says.
      requestLogger(kit.logger, request).logf('[WARN] saml %s: no single logout at the IdP: %s', o.name, err instanceof HttpError ? err.details ?? err.message : String(err))
      return undefined
    })
    if (location === undefined) return await reply.send({ status: 'logged out' })
    if (isNavigation(request)) return reply.redirect(location, 303)
    return await reply.send({ status: 'logged out', location })
  }
}

/** The IdP's logout URL with a LogoutRequest for this session, or undefined when there is none to send. */
async function logoutRequestUrl (ctx: SamlContext, request: FastifyRequest, session: SignedInSession): Promise<string | undefined> {
  const { kit, o } = ctx
  const attrs = sessionAttrs(session.user.attrs)
  if (attrs === undefined || !session.user.id.startsWith(`${o.name}_`)) return undefined
  const idp = await ctx.directory.get(attrs.tenant)
  if (idp.sloUrl === undefined) return undefined
  const rid = LoginStateCookie.requestId()
  // Kept for the one LogoutResponse that answers it, as long as a login may take.
  await kit.stateStore.set(logoutKey(o.name, rid), JSON.stringify({ tenant: attrs.tenant ?? null, at: Date.now() }), o.loginTtlMs, { client: kit.throttle.clientKey(request) })
  const profile = { issuer: idp.entityId, nameID: attrs.nameId, nameIDFormat: attrs.nameIdFormat ?? UNSPECIFIED, sessionIndex: attrs.sessionIndex }
  return await samlClient(ctx.driver, o, idp, undefined, rid).getLogoutUrlAsync(profile, rid, {})
}

function logoutKey (name: string, rid: string): string {
  return `saml-logout:${name}:${rid}`
}

/** `/slo`: the IdP's LogoutResponse to a LogoutRequest sent from `/logout`. */
export async function singleLogoutReturn (ctx: SamlContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const { kit, o } = ctx
  const post = request.method === 'POST'
  const fields = (post ? request.body : request.query) as Record<string, unknown> | null
  const params = fields !== null && typeof fields === 'object' ? fields : {}
  if (params.SAMLRequest !== undefined) throw logoutError(400, 'logout requests from the identity provider are not taken; sign out here at /logout')
  const rid = queryText(params, 'RelayState', 64, false)
  const kept = rid === undefined ? undefined : await kit.stateStore.take(logoutKey(o.name, rid))
  if (kept === undefined) throw logoutError(400, 'no single logout in progress (or it was answered already)')
  const { tenant, at } = JSON.parse(kept) as { tenant: string | null; at: number }
  const idp = await ctx.directory.get(tenant ?? undefined)
  const client = samlClient(ctx.driver, o, idp, { id: rid!, issuedAt: at })
  try {
    if (post) {
      await client.validatePostResponseAsync(params as Record<string, string>)
    } else {
      const raw = request.raw.url ?? ''
      await client.validateRedirectAsync(params as Record<string, string>, raw.slice(raw.indexOf('?') + 1))
    }
  } catch (err) {
    throw logoutError(403, 'the logout response does not verify', err)
  }
  return reply.redirect(`${kit.url}/`, 303)
}

function logoutError (status: number, details: string, cause?: unknown): HttpError {
  return new HttpError(status, 'single logout failed', details, status === 400 ? ErrorCodes.BAD_REQUEST : ErrorCodes.FORBIDDEN, { reason: 'saml_logout', cause })
}
