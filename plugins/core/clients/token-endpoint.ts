/**
 * The token endpoint (`POST {authPrefix}/token`, RFC 6749 §3.2 and §5) and the revocation endpoint
 * (`POST {authPrefix}/revoke`, RFC 7009) of the app's registered clients, and the authorization server metadata
 * (RFC 8414) that tells a standard OAuth 2 client where they are. Public clients only: a client is named by
 * `client_id` in the form body and presents no secret.
 *
 * Every answer is `Cache-Control: no-store`; a refusal is an RFC 6749 §5.2 error, and consumes nothing.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { StateStoreError } from '../../../lib/state-store.js'
import { ErrorCodes, HttpError, RateLimitedError, sendHttpError } from '../../../lib/errors.js'
import type { ClientRefusalLog } from './client-refusals.js'
import type { Throttle } from '../../../lib/throttle/throttle.js'
import type { RegisteredClient } from '../base/clients.js'
import type { RefreshFamilies, TokenResponse } from './refresh-families.js'
import { OAuthError, invalidClient, invalidRequest, sendOAuthError, tooManyRequests, unauthorizedClient } from '../base/oauth-error.js'
import { routeDoc as doc } from '../signin/scope.js'
import { noteGrant, traced } from '../base/grant-spans.js'
import type { DPoP } from '../sessions/dpop.js'

/** A token request is a few short fields. */
const BODY_LIMIT = 16 * 1024
/** The longest value of one field (a refresh token is 66 characters, a PKCE verifier at most 128). */
const MAX_FIELD = 2048
const FORM = 'application/x-www-form-urlencoded'
export const REFRESH_GRANT = 'refresh_token'

/**
 * One grant the token endpoint serves: the kinds of client it is for and what it answers. `jkt` is the thumbprint
 * of the request's DPoP key (dpop.ts), undefined for a request without a proof: what it issues is bound to it.
 */
export interface Grant {
  readonly kinds: ReadonlySet<RegisteredClient['kind']>
  /**
   * The grant's answer. `jkt`: the thumbprint of the request's DPoP proof's key (RFC 9449 §5), if it carried one.
   * `admitted` resolves once the address lockout lets the request through (see `Throttle.tokenRequest`): awaited
   * before `exchange` is called, unless `readsFirst`.
   */
  exchange: (request: FastifyRequest, client: RegisteredClient, field: FieldReader, jkt: string | undefined, admitted: () => Promise<void>) => Promise<TokenResponse>
  /** The grant reads the store before it awaits `admitted` itself (and changes nothing before). */
  readonly readsFirst?: boolean | undefined
}

/** Reads one field of the form body: a single string of bounded length (required unless `optional`). */
export type FieldReader = {
  (name: string): string
  (name: string, optional: true): string | undefined
}

export interface TokenEndpointDeps {
  clients: ReadonlyMap<string, RegisteredClient>
  families: RefreshFamilies
  /** Grants by `grant_type` (the refresh grant is added here). */
  grants: ReadonlyMap<string, Grant>
  /** Locks out an address that sends refused requests (`rateLimit.grants`). */
  throttle: Pick<Throttle, 'tokenRequest'>
  /** Revokes an access token `client` presented at `/revoke` (its family ends); false when it is none of that client's. */
  revokeAccess: (request: FastifyRequest, client: RegisteredClient, token: string) => Promise<boolean>
  /** `GET /authorize` of native and browser clients and the `POST` of its confirmation page (none without such a client). */
  authorize?: { start: Handler; confirm: Handler } | undefined
  /** The device routes (`POST /device/code`, `GET` and `POST /device`), with a device client only. */
  device?: DeviceRoutes | undefined
  /** Writes the developer's warning of a refused `/authorize` or `/token` request (client-refusals.ts). */
  refused: ClientRefusalLog
  /** DPoP proofs of token requests (RFC 9449 §5). */
  dpop: DPoP
}

type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>
export interface DeviceRoutes { code: Handler; page: Handler; decision: Handler }

/** Registers `/token` and `/revoke` in an auth scope of their own (their errors answer in RFC 6749's shape). */
export function tokenEndpoint (d: TokenEndpointDeps) {
  const grants = new Map(d.grants)
  grants.set(REFRESH_GRANT, {
    kinds: new Set(['native', 'device', 'spa']),
    readsFirst: true,
    exchange: async (request, client, field, jkt, admitted) => await d.families.refresh(request, client, field('refresh_token'), jkt, admitted)
  })
  return async function tokenRoutes (scope: FastifyInstance): Promise<void> {
    scope.setErrorHandler((err: FastifyError, request, reply) => {
      const endpoint = refusedAt(request, err)
      if (endpoint !== undefined) d.refused(request, endpoint, `${err.message}: ${(err as HttpError).details ?? ''}`)
      return answerError(reply, err)
    })
    if (d.authorize !== undefined) {
      scope.get('/authorize', { schema: doc('Signs a native or browser client in through this browser (RFC 8252)') }, traced('gatehouse.authorize', d.authorize.start))
      scope.post('/authorize', { bodyLimit: BODY_LIMIT, schema: doc('The user\'s answer on the confirmation page of a sign-in started from another site') }, d.authorize.confirm)
    }
    if (d.device !== undefined) {
      scope.post('/device/code', { bodyLimit: BODY_LIMIT, schema: doc('Starts a device sign-in (RFC 8628)') }, traced('gatehouse.device.code', d.device.code))
      scope.get('/device', { schema: doc('The device sign-in page: a signed-in user types the code and approves or denies') }, d.device.page)
      scope.post('/device', { bodyLimit: BODY_LIMIT, schema: doc('Approves or denies a device sign-in') }, d.device.decision)
    }

    scope.post('/token', { bodyLimit: BODY_LIMIT, schema: doc('Token endpoint of the registered clients (RFC 6749)') }, traced('gatehouse.token', async (request, reply) => {
      const answer = await d.throttle.tokenRequest(request, async (admitted) => {
        const field = formOf(request)
        const client = clientOf(d.clients, request, field)
        const grantType = field('grant_type')
        const grant = grants.get(grantType)
        noteGrant(request, { grantType: grant === undefined ? '_OTHER' : grantType })
        if (grant === undefined) throw new OAuthError(400, 'unsupported_grant_type', `grant_type ${grantType.slice(0, 80)} is not supported`)
        if (!grant.kinds.has(client.kind)) throw unauthorizedClient(`a ${client.kind} client may not use grant_type ${grantType}`)
        // A proof's jti is written to the store: with a DPoP header the lockout decides first, for every grant.
        if (grant.readsFirst !== true || request.headers.dpop !== undefined) await admitted()
        return await grant.exchange(request, client, field, await d.dpop.tokenRequest(request, client, reply), admitted)
      }, (outcome) => 'error' in outcome && isRefusal(outcome.error))
      return await reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(answer)
    }))

    scope.post('/revoke', { bodyLimit: BODY_LIMIT, schema: doc('Revokes a refresh or access token of a registered client (RFC 7009)') }, traced('gatehouse.revoke', async (request, reply) => {
      const found = await d.throttle.tokenRequest(request, async (admitted) => {
        await admitted()
        const field = formOf(request)
        const client = clientOf(d.clients, request, field)
        return await revokeToken(d, request, client, field('token'), field('token_type_hint', true))
      }, (outcome) => 'error' in outcome ? isRefusal(outcome.error) : !outcome.result)
      noteGrant(request, { result: found ? 'revoked' : 'unknown_token' })
      // RFC 7009 §2.2: unknown tokens answer 200 too, so that the answer tells an attacker nothing.
      return await reply.code(200).header('cache-control', 'no-store').send()
    }))
  }
}

/** Ends the family or session of a token presented at `/revoke`: false when it is none of this client's. */
async function revokeToken (d: TokenEndpointDeps, request: FastifyRequest, client: RegisteredClient, token: string, hint: string | undefined): Promise<boolean> {
  if (hint !== 'access_token' && await d.families.revoke(request, client, token)) return true
  if (await d.revokeAccess(request, client, token)) return true
  return hint === 'access_token' && await d.families.revoke(request, client, token)
}

/**
 * The refusals an address is locked out for sending too many of: a malformed request, a wrong client or grant.
 * A device's polling answers (`authorization_pending`, `slow_down`) and the user's or the clock's verdicts
 * (`access_denied`, `expired_token`) are a working client's, not a guess.
 */
const REFUSALS = new Set(['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_dpop_proof'])
function isRefusal (err: unknown): boolean {
  return err instanceof OAuthError && REFUSALS.has(err.error)
}

/**
 * The endpoint whose refusal this is, for the developer's warning: `/token` refusing a client's request (not a
 * device's polling answers, nor a lockout), `/authorize` refusing its client or redirect URI. Undefined otherwise.
 */
function refusedAt (request: FastifyRequest, err: unknown): '/authorize' | '/token' | undefined {
  const path = request.routeOptions.url ?? ''
  if (path.endsWith('/token')) return isRefusal(err) ? '/token' : undefined
  if (path.endsWith('/authorize') && request.method === 'GET') return err instanceof HttpError && err.code === ErrorCodes.OAUTH ? '/authorize' : undefined
  return undefined
}

/** The form body's field reader; JSON and other bodies are refused (RFC 6749 §3.2: form encoding). */
export function formOf (request: FastifyRequest): FieldReader {
  const type = request.headers['content-type']
  if (typeof type !== 'string' || type.split(';')[0]!.trim().toLowerCase() !== FORM) throw invalidRequest(`send the parameters as ${FORM}`)
  const body = request.body as Record<string, unknown> | undefined
  return function field (name: string, optional?: true): string {
    const value = body?.[name]
    if (value === undefined || value === '') {
      if (optional === true) return undefined as unknown as string
      throw invalidRequest(`${name} is required`)
    }
    if (typeof value !== 'string') throw invalidRequest(`${name} is repeated`)
    if (value.length > MAX_FIELD) throw invalidRequest(`${name} is longer than ${MAX_FIELD} characters`)
    return value
  } as FieldReader
}

/** The registered client the request names; a client secret is refused (public clients have none). */
function clientOf (clients: ReadonlyMap<string, RegisteredClient>, request: FastifyRequest, field: FieldReader): RegisteredClient {
  if (request.headers.authorization !== undefined || field('client_secret', true) !== undefined) {
    throw invalidClient('the registered clients are public: send client_id without a secret')
  }
  const client = clients.get(field('client_id'))
  if (client === undefined) throw invalidClient('unknown client_id')
  noteGrant(request, { client: client.id })
  return client
}

/** Refusals in RFC 6749's shape; a body too large or unreadable is `invalid_request`; a store failure stays 503. */
function answerError (reply: FastifyReply, err: FastifyError): FastifyReply {
  if (err instanceof OAuthError) return sendOAuthError(reply, err)
  if (err instanceof RateLimitedError) return sendOAuthError(reply.headers(err.headers), tooManyRequests(err))
  if (err instanceof StateStoreError || err instanceof HttpError) return sendHttpError(reply.header('cache-control', 'no-store'), err)
  const status = err.statusCode ?? 500
  if (status >= 400 && status < 500) return sendOAuthError(reply, invalidRequest(status === 413 ? `the body is larger than ${BODY_LIMIT} bytes` : 'the body cannot be read'))
  reply.log.error({ err }, 'token endpoint failed')
  return sendHttpError(reply.header('cache-control', 'no-store'), new HttpError(500, 'internal error'))
}

/** RFC 8414 metadata of the token endpoints, for the registered clients' OAuth 2 libraries. */
export function authorizationServerMetadata (issuer: string, base: string, grantTypes: readonly string[], extra: Record<string, unknown>): Record<string, unknown> {
  return {
    issuer,
    token_endpoint: `${base}/token`,
    revocation_endpoint: `${base}/revoke`,
    ...extra,
    grant_types_supported: grantTypes,
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    code_challenge_methods_supported: ['S256']
  }
}
