/**
 * The registered clients' token service, opened by the core when `clients` has any: refresh families on the state
 * store, the token and revocation endpoints, and the authorization server metadata (RFC 8414) at
 * `/.well-known/oauth-authorization-server{path of url + authPrefix}`, so that a standard OAuth 2 client needs only
 * the issuer's address.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { OptionsError } from '../../../lib/errors.js'
import type { StateStore } from '../../../lib/state-store.js'
import type { Revocations } from '../sessions/revocation.js'
import type { SessionList } from '../sessions/sessions.js'
import type { Throttle } from '../../../lib/throttle/throttle.js'
import type { CoreTokenService } from '../sessions/tokens.js'
import { RefreshFamilies } from './refresh-families.js'
import { authorizationServerMetadata, formOf, REFRESH_GRANT, tokenEndpoint, type Grant } from './token-endpoint.js'
import { DEVICE_GRANT, deviceCodeGrant, deviceCodeHandler, deviceDecisionHandler, devicePageHandler } from './device-sign-in.js'
import { userIdOf } from '../sessions/session-audit.js'
import { audOf } from '../base/claims.js'
import type { Claims, ClaimsInput, ResolvedOptions, TokenPairResponse } from '../base/types.js'
import type { RegisteredClient } from '../base/clients.js'
import { requestCookie } from '../base/cookie-jar.js'
import { authorizationCodeGrant, authorizeConfirmHandler, authorizeHandler } from './native-sign-in.js'

export interface ClientTokens {
  /** `fastify.auth.issueTokenPair`. */
  issue: (request: FastifyRequest, clientId: string, input: ClaimsInput) => Promise<TokenPairResponse>
  /** The endpoints, registered in the core's auth scope. */
  routes: (scope: FastifyInstance) => Promise<void>
}

interface Services { stateStore: StateStore; revocations: Revocations | null; sessions: SessionList | null; tokens: CoreTokenService; throttle: Throttle }

/** What the registered clients' endpoints read of the options. */
type ClientTokensOptions = Pick<ResolvedOptions, 'audit' | 'authPrefix' | 'clientKey' | 'clients' | 'cookies' | 'crossSite' | 'loginPage' | 'origin' | 'session' | 'url'>

/** The clients' token service, or null when no client is registered (no route is added then). */
export function openClientTokens (fastify: FastifyInstance, o: ClientTokensOptions, s: Services): ClientTokens | null {
  if (o.clients.size === 0 || s.revocations === null) return null
  const revocations = s.revocations
  const families = new RefreshFamilies({
    store: s.stateStore,
    revocations,
    list: s.sessions,
    audit: o.audit,
    access: s.tokens.access,
    accessSeconds: Math.max(1, Math.round(o.session.tokenDurationMs / 1000))
  })
  const grants = new Map<string, Grant>()
  // RFC 7009 §2.1: an access token ends its session only when it was issued to the client revoking it (its
  // `client_id`); any other token (another client's, a cookie session's, an app's own) is left alone, answered as
  // an unknown one is, so that /revoke tells nobody whether a token is live.
  const revokeAccess = async (request: FastifyRequest, client: RegisteredClient, token: string): Promise<boolean> => {
    let claims
    try { claims = await s.tokens.parse(token) } catch { return false }
    if (claims.client_id !== client.id) return false
    await revocations.revokeSession(claims.jti)
    if (o.audit.on) o.audit.emit(request, 'session.revoked', { reason: 'revoke', by: 'revokeSession', scope: 'session', userId: userIdOf(claims), aud: audOf(claims) })
    return true
  }
  const issuer = `${o.url}${o.authPrefix}`
  const metadataPath = `/.well-known/oauth-authorization-server${new URL(issuer).pathname.replace(/\/$/, '')}`
  fastify.get(metadataPath, async (_request, reply) => {
    const grantTypes = [...grants.keys(), REFRESH_GRANT]
    const extra = {
      ...(redirecting ? { authorization_endpoint: `${issuer}/authorize`, response_types_supported: ['code'] } : {}),
      ...(devices ? { device_authorization_endpoint: `${issuer}/device/code` } : {})
    }
    return await reply.header('cache-control', 'no-cache').send(authorizationServerMetadata(issuer, issuer, grantTypes, extra))
  })
  const native = {
    store: s.stateStore,
    clients: o.clients,
    families,
    loginPage: o.loginPage,
    issuer,
    origin: o.origin,
    crossSite: o.crossSite,
    startToken: {
      sign: async (payload: Record<string, unknown>, ttlMs: number) => await s.tokens.signPurpose('handshake', payload, ttlMs),
      verify: async (token: string) => await s.tokens.verifyPurpose('handshake', token)
    },
    startCookie: o.cookies.sessionName.startsWith('__Host-')
      ? { name: '__Host-gatehouse-authorize', path: '/', secure: true }
      : { name: 'gatehouse-authorize', path: `${o.authPrefix}/authorize`, secure: o.cookies.secure },
    async session (request: FastifyRequest): Promise<Claims | null> {
      const token = requestCookie(request, o.cookies.sessionName)
      if (token === undefined || token === '') return null
      try { return await s.tokens.parse(token) } catch { return null }
    }
  }
  const redirecting = [...o.clients.values()].some((c) => c.kind !== 'device')
  const devices = [...o.clients.values()].some((c) => c.kind === 'device')
  const device = { ...native, audit: o.audit, clientKey: o.clientKey, base: issuer, origin: o.origin }
  if (devices) grants.set(DEVICE_GRANT, deviceCodeGrant(device))
  const deviceRoutes = devices ? { code: deviceCodeHandler(device, formOf), page: devicePageHandler(device), decision: deviceDecisionHandler(device, formOf) } : undefined
  if (redirecting) grants.set('authorization_code', authorizationCodeGrant(native))
  return {
    async issue (request, clientId, input) {
      const client = o.clients.get(clientId)
      if (client === undefined) throw new OptionsError('client', `"${clientId}" is not a registered client (clients[].id)`)
      return (await families.issue(request, client, input)).response
    },
    routes: tokenEndpoint({ clients: o.clients, families, grants, throttle: s.throttle, revokeAccess, authorize: redirecting ? { start: authorizeHandler(native), confirm: authorizeConfirmHandler(native, formOf) } : undefined, device: deviceRoutes })
  }
}
