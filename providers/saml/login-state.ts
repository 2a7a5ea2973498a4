/**
 * The signed login state: what the browser carries from `/login` to the assertion consumer service. `/login`
 * signs `{rid, tenant, from, site, session}` as a short-lived token of the kit's login-state purpose (never usable
 * as a session) in an HttpOnly cookie whose Path is the ACS alone. `rid` is the ID of the AuthnRequest, which the
 * response's `InResponseTo` must equal, so a response answers the login this browser started; the tenant names the
 * only IdP the response is checked against.
 *
 * The ACS is reached by a cross-site POST (the IdP's page submits the form), which carries no Lax cookie: on
 * https the cookie is `SameSite=None; Secure`, scoped to the ACS path and cleared by the ACS's first answer, and
 * its `rid` is accepted once (state store), so it serves that one round trip. On plain http (development) the
 * attribute is left out, which Chromium treats as Lax but still sends on a top-level POST within two minutes.
 */
import { randomBytes } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type {} from '@fastify/cookie'
import { ErrorCodes, HttpError } from '../../lib/errors.js'
import type { ProviderKit } from '../../plugins/core/kit.js'

/** What the login-state token carries. */
export interface SamlLoginState {
  provider: string
  /** The AuthnRequest's ID (an NCName: `_` and hex). */
  rid: string
  tenant?: string | undefined
  from?: string | undefined
  site?: string | undefined
  sessionOnly?: boolean | undefined
  /** When the login started (seconds), for node-saml's InResponseTo age check. */
  iat?: number | undefined
}

export class LoginStateCookie {
  readonly name: string
  readonly path: string
  private readonly sameSite: 'none' | undefined

  constructor (private readonly kit: ProviderKit, private readonly provider: string, private readonly ttlMs: number) {
    this.name = `gatehouse-saml-${provider}`
    this.path = `${kit.authPrefix}/${provider}/acs`
    this.sameSite = kit.cookies.secure ? 'none' : undefined
  }

  /** A fresh AuthnRequest ID. */
  static requestId (): string {
    return `_${randomBytes(20).toString('hex')}`
  }

  async set (reply: FastifyReply, state: Omit<SamlLoginState, 'provider' | 'iat'>): Promise<void> {
    const token = await this.kit.loginState.sign({ ...state, provider: this.provider }, this.ttlMs)
    reply.setCookie(this.name, token, { path: this.path, httpOnly: true, secure: this.kit.cookies.secure, sameSite: this.sameSite, maxAge: Math.ceil(this.ttlMs / 1000) })
  }

  /**
   * The state of the login this browser started, or undefined when it carries none; the cookie is cleared on the
   * answer whatever happens next. 403 `GATEHOUSE_HANDSHAKE` for an expired, forged or other provider's state.
   */
  async take (request: FastifyRequest, reply: FastifyReply): Promise<SamlLoginState | undefined> {
    const token = request.cookies?.[this.name]
    reply.clearCookie(this.name, { path: this.path, httpOnly: true, secure: this.kit.cookies.secure, sameSite: this.sameSite })
    if (token === undefined || token === '') return undefined
    let claims: Record<string, unknown>
    try {
      claims = await this.kit.loginState.verify(token)
    } catch {
      throw stateError('the login state expired or is invalid')
    }
    if (claims.provider !== this.provider || typeof claims.rid !== 'string') throw stateError('the login state belongs to another provider')
    return claims as unknown as SamlLoginState
  }

  /** Marks the login's request ID used (until the state would have expired): 403 `GATEHOUSE_ALREADY_USED` the second time. */
  async spend (request: FastifyRequest, state: SamlLoginState): Promise<void> {
    const ttlMs = Math.max(1000, this.ttlMs)
    const fresh = await this.kit.stateStore.setIfAbsent(`saml-request:${this.provider}:${state.rid}`, '1', ttlMs, { client: this.kit.throttle.clientKey(request) })
    if (!fresh) throw new HttpError(403, 'SAML response already used', 'this login was already completed; start again', ErrorCodes.ALREADY_USED, { reason: 'already_used' })
  }
}

function stateError (details: string): HttpError {
  return new HttpError(403, 'login state expired or invalid', details, ErrorCodes.HANDSHAKE, { reason: 'handshake' })
}
