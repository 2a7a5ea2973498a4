/**
 * Token pairs for clients without cookies: a short access token (a session JWT) and an opaque refresh token. The
 * pairs of one sign-in are a **family**: one session id (the access tokens' `jti` and `auth_time`), so that the
 * session machinery already ends it (`revokeSession`, `revokeUser`, logout everywhere, the session list) and its
 * access tokens are refused at once on every instance.
 *
 * Refresh tokens are kept hashed (SHA-256) in the state store, under the client's id: the current one of a family
 * (its value the family's record, living the idle timeout), and every rotated one (its value the family id, until
 * the family's end). Each use rotates the token (RFC 9700 §4.14.2); a rotated token presented again means that two
 * parties hold the family, so the whole family ends, access tokens included. A refused grant consumes nothing: a
 * token of another client is not even found, and the current token is taken only once every check has passed.
 */
import { createHash, randomBytes } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import type { StateStore } from '../../../lib/state-store.js'
import type { Audit } from '../../../lib/audit/audit.js'
import { HttpError } from '../../../lib/errors.js'
import type { Revocations } from '../sessions/revocation.js'
import type { SessionList } from '../sessions/sessions.js'
import type { RegisteredClient } from '../base/clients.js'
import type { Claims, ClaimsInput, TokenPairResponse } from '../base/types.js'
import type { SessionBase } from '../keys/issue.js'
import { invalidGrant } from '../base/oauth-error.js'

const CURRENT = 'rt:'
const ROTATED = 'rt-used:'

/** What a family keeps beside its current refresh token. */
interface FamilyRecord {
  /** The family's session id (the access tokens' `jti`). */
  f: string
  /** `auth_time` of the sign-in (seconds, as in the claims). */
  at: number
  /** `started_at` of the family's session (seconds), when its sign-in came before it. */
  st?: number | undefined
  /** When the family ends at the latest (ms). */
  end: number
  /** The claims input of its access tokens (the last ones, as the claims updater left them). */
  in: ClaimsInput
  /** The thumbprint of the DPoP key the family is bound to (RFC 9449 §5): its refresh needs a proof of that key. */
  k?: string | undefined
}

/** The token response of RFC 6749 §5.1. */
export type TokenResponse = TokenPairResponse

/** What the families need of the core. */
export interface FamilyDeps {
  store: StateStore
  revocations: Revocations
  list: SessionList | null
  audit: Audit
  /**
   * Signs an access token of a family, living `seconds` (the client's `accessToken.maxAge`): the claims updater and
   * the validator run; rejects HttpError 401 on refusal.
   */
  access: (input: ClaimsInput, base: SessionBase, seconds: number) => Promise<{ token: string; claims: Claims }>
}

export class RefreshFamilies {
  constructor (private readonly d: FamilyDeps) {}

  /**
   * A new family for a signed-in user: its first pair and its id. `authTime` is the sign-in's (seconds; now when
   * the app signs the user in itself); `reason` names the grant in the `token.issued` event; `jkt` is the DPoP key
   * the family is bound to, if any.
   */
  async issue (request: FastifyRequest, client: RegisteredClient, input: ClaimsInput, authTime?: number, reason = 'sign_in', jkt?: string): Promise<{ response: TokenResponse; family: string }> {
    // A new session (its own jti), its access tokens marked as this client's: they are renewed at /token only.
    const { token, claims } = await this.d.access(input, { auth_time: authTime, client_id: client.id, jkt }, client.accessSeconds)
    const record: FamilyRecord = { f: claims.jti, at: claims.auth_time!, st: claims.started_at, end: Math.round(claims.auth_time! * 1000) + client.maxAgeMs, in: inputOf(claims), k: jkt }
    const refresh = await this.store(client, record)
    // Listed under the client's name: the user agent of a token request says nothing a person recognises.
    await this.d.list?.login(request, claims, `client:${client.id}`, client.name)
    if (this.d.audit.on) this.d.audit.emit(request, 'token.issued', { reason, clientId: client.id, userId: userIdOfInput(claims) })
    return { response: this.answer(client, token, refresh, jkt), family: claims.jti }
  }

  /** Ends a family because one of its one-time values (a code) was presented again: audited as a reuse. */
  async endFamily (request: FastifyRequest, client: RegisteredClient, family: string): Promise<void> {
    await this.end(family)
    if (this.d.audit.on) this.d.audit.emit(request, 'token.reuse_detected', { reason: 'code_replay', clientId: client.id, familyEnded: true })
  }

  /**
   * The `refresh_token` grant: a new pair, the presented token rotated; reuse of a rotated one ends the family.
   * `jkt` is the key of the request's DPoP proof: a bound family takes only that key's (refused otherwise, and
   * audited); an unbound one is bound from then on to the key of the first proof it comes with.
   */
  async refresh (request: FastifyRequest, client: RegisteredClient, presented: string, jkt?: string): Promise<TokenResponse> {
    const hash = hashOf(presented)
    const key = `${CURRENT}${client.id}:${hash}`
    const raw = await this.d.store.get(key)
    if (raw === undefined) return await this.unknown(request, client, hash)
    const record = JSON.parse(raw) as FamilyRecord
    const now = Date.now()
    if (record.end <= now) throw invalidGrant('the refresh token has expired')
    const userId = userIdOfInput(record.in)
    if (record.k !== undefined && record.k !== jkt) return this.wrongKey(request, client, 'refresh token', userId, jkt)
    const bound = record.k ?? jkt
    if (await this.d.revocations.isRevoked({ jti: record.f, userId, authTime: record.at, since: record.st ?? record.at })) throw invalidGrant('the session has ended')
    // The claims updater and the validator have their say before anything is consumed.
    let next
    try {
      next = await this.d.access(record.in, { jti: record.f, auth_time: record.at, client_id: client.id, started_at: record.st, jkt: bound }, client.accessSeconds)
    } catch (err) {
      if (err instanceof HttpError && err.statusCode === 401) throw invalidGrant('the session is refused')
      throw err
    }
    // Of two requests presenting one token, one takes it; the other is a reuse.
    if (await this.d.store.take(key) === undefined) return await this.reused(request, client, record.f, userId)
    // The rotated marker and the next token are independent writes: one round trip for both.
    const [, refresh] = await Promise.all([
      this.d.store.set(`${ROTATED}${client.id}:${hash}`, record.f, record.end - now),
      this.store(client, { ...record, in: inputOf(next.claims), k: bound })
    ])
    if (this.d.audit.on) this.d.audit.emit(request, 'token.refreshed', { reason: 'refresh_token', clientId: client.id, userId })
    return this.answer(client, next.token, refresh, bound)
  }

  /**
   * A grant bound to a DPoP key (a family's refresh token, a code of `dpop_jkt`) without a proof of that key:
   * whoever sends it does not hold the key (a stolen token), so nothing is issued, and the grant stays its owner's.
   * Audited as `token.refused`.
   */
  wrongKey (request: FastifyRequest, client: RegisteredClient, what: 'refresh token' | 'code', userId: string | undefined, jkt: string | undefined): never {
    if (this.d.audit.on) this.d.audit.emit(request, 'token.refused', { reason: jkt === undefined ? 'dpop_required' : 'dpop_key', clientId: client.id, userId })
    throw invalidGrant(jkt === undefined ? `the ${what} is bound to a DPoP key: send a DPoP proof of that key` : `the ${what} is bound to another DPoP key`)
  }

  /**
   * RFC 7009 for a refresh token of this client: the family ends (a rotated token ends it too: it was stolen or
   * replayed). Resolves false when the token is none of this client's.
   */
  async revoke (request: FastifyRequest, client: RegisteredClient, presented: string): Promise<boolean> {
    const hash = hashOf(presented)
    const raw = await this.d.store.take(`${CURRENT}${client.id}:${hash}`)
    const family = raw === undefined ? await this.d.store.get(`${ROTATED}${client.id}:${hash}`) : (JSON.parse(raw) as FamilyRecord).f
    if (family === undefined) return false
    const userId = raw === undefined ? undefined : userIdOfInput((JSON.parse(raw) as FamilyRecord).in)
    await this.end(family)
    if (this.d.audit.on) this.d.audit.emit(request, 'token.revoked', { reason: 'revoke', clientId: client.id, userId })
    return true
  }

  /** A token that is not a current one: a rotated one is a reuse (the family ends), anything else is unknown. */
  private async unknown (request: FastifyRequest, client: RegisteredClient, hash: string): Promise<never> {
    const family = await this.d.store.get(`${ROTATED}${client.id}:${hash}`)
    if (family === undefined) throw invalidGrant('unknown or expired refresh token')
    return await this.reused(request, client, family, undefined)
  }

  private async reused (request: FastifyRequest, client: RegisteredClient, family: string, userId: string | undefined): Promise<never> {
    await this.end(family)
    if (this.d.audit.on) this.d.audit.emit(request, 'token.reuse_detected', { reason: 'reuse', clientId: client.id, userId, familyEnded: true })
    throw invalidGrant('the refresh token was already used: the session has ended')
  }

  /** Ends a family: its session is revoked, so its access tokens are refused and no token of it refreshes. */
  private async end (family: string): Promise<void> {
    await this.d.revocations.revokeSession(family)
  }

  private async store (client: RegisteredClient, record: FamilyRecord): Promise<string> {
    const token = randomBytes(32).toString('base64url')
    const ttl = Math.min(client.idleTimeoutMs, record.end - Date.now())
    if (ttl <= 0) throw invalidGrant('the refresh token has expired')
    await this.d.store.set(`${CURRENT}${client.id}:${hashOf(token)}`, JSON.stringify(record), ttl)
    return token
  }

  private answer (client: RegisteredClient, access: string, refresh: string, jkt: string | undefined): TokenResponse {
    return { access_token: access, token_type: jkt === undefined ? 'Bearer' : 'DPoP', expires_in: client.accessSeconds, refresh_token: refresh }
  }
}

export function hashOf (token: string): string {
  return createHash('sha256').update(token).digest('base64url')
}

/** The claims input of a family's next access token: its claims without the registered ones. */
export function inputOf (claims: Claims): ClaimsInput {
  const { iat, nbf, exp, iss, jti, auth_time: at, purpose, client_id: client, started_at: started, cnf, ...input } = claims
  return input
}

function userIdOfInput (input: ClaimsInput): string | undefined {
  const id = input.user?.id
  return typeof id === 'string' ? id : undefined
}
