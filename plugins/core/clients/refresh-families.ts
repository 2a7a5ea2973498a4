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
 *
 * A refresh token is `<family id>.<32 random bytes, base64url>`, and a family's entries join the group of its
 * session's revocation mark in the store (`{revoked:<family id>}:…`, see StateStore): one Redis Cluster slot, so that
 * one MGET reads the token's record with the mark, and a rotation is one atomic step (`StateStore.exchange`). A
 * grant on Redis is then three round trips and eight commands: the address lockout's lock (rateLimit.grants) beside
 * the record and the session mark (one MGET); the user's mark and the store's revocation epoch; the exchange (its
 * EVAL, the successor's SET NX, the current token's DEL, the rotated marker's SET). Tokens of before (`<32 random
 * bytes>`, under `rt:<client>:<hash>` and `rt-used:…`) are still read; their next grant answers one of the new shape.
 */
import { createHash, randomBytes } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import type { StateStore, StoredEntry } from '../../../lib/state-store.js'
import type { Audit } from '../../../lib/audit/audit.js'
import { HttpError } from '../../../lib/errors.js'
import { sessionMarkKey, type Revocations } from '../sessions/revocation.js'
import type { SessionList } from '../sessions/sessions.js'
import type { RegisteredClient } from '../base/clients.js'
import type { Claims, ClaimsInput, TokenPairResponse } from '../base/types.js'
import type { SessionBase } from '../keys/issue.js'
import { invalidGrant } from '../base/oauth-error.js'

/** The keys of tokens of before the family groups (a token without `<family id>.`). */
const CURRENT = 'rt:'
const ROTATED = 'rt-used:'
/** A family id as a token carries it (a session id: 22 base64url characters; a few more are let through). */
const FAMILY_ID = /^[A-Za-z0-9_-]{1,64}$/

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
  /** When this token's entry expires (ms; absent on entries of before): what is put back when a rotation fails. */
  x?: number
  /** The thumbprint of the DPoP key the family is bound to (RFC 9449 §5): its refresh needs a proof of that key. */
  k?: string | undefined
}

/** Where a presented refresh token's entries are: its current one and its rotated marker. */
interface Place {
  current: string
  rotated: string
  /** The family the token names (its entries in the group of the family's revocation mark); none for a token of before. */
  family: string | undefined
}

/** The keys of `token` (presented or new) of `client`. */
function placeOf (client: RegisteredClient, token: string): Place {
  const hash = hashOf(token)
  const dot = token.indexOf('.')
  const family = dot > 0 ? token.slice(0, dot) : ''
  if (!FAMILY_ID.test(family)) return { current: `${CURRENT}${client.id}:${hash}`, rotated: `${ROTATED}${client.id}:${hash}`, family: undefined }
  const group = `{${sessionMarkKey(family)}}:`
  return { current: `${group}${client.id}:${hash}`, rotated: `${group}used:${client.id}:${hash}`, family }
}

/** A stored record, or undefined for anything else (an undone exchange's tombstone is an empty value). */
function recordOf (raw: string | undefined): FamilyRecord | undefined {
  if (raw === undefined || raw === '') return undefined
  try {
    const r = JSON.parse(raw) as FamilyRecord | null
    return r !== null && typeof r === 'object' && typeof r.f === 'string' ? r : undefined
  } catch {
    return undefined
  }
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
   * audited); an unbound one is bound from then on to the key of the first proof it comes with. `admitted` (the
   * address lockout's word, read meanwhile) is awaited once the record is read, before anything else.
   */
  async refresh (request: FastifyRequest, client: RegisteredClient, presented: string, jkt?: string, admitted: () => Promise<void> = async () => {}): Promise<TokenResponse> {
    const at = placeOf(client, presented)
    const { raw, mark } = await this.read(at)
    await admitted()
    const record = recordOf(raw)
    if (record === undefined) return await this.unknown(request, client, at.rotated)
    const now = Date.now()
    if (record.end <= now) throw invalidGrant('the refresh token has expired')
    const userId = userIdOfInput(record.in)
    if (record.k !== undefined && record.k !== jkt) return this.wrongKey(request, client, 'refresh token', userId, jkt)
    const bound = record.k ?? jkt
    const subject = { jti: record.f, userId, authTime: record.at, since: record.st ?? record.at }
    if (await this.d.revocations.isRevoked(subject, record.f === at.family ? mark : undefined)) throw invalidGrant('the session has ended')
    // The claims updater and the validator have their say before anything is consumed.
    let next
    try {
      next = await this.d.access(record.in, { jti: record.f, auth_time: record.at, client_id: client.id, started_at: record.st, jkt: bound }, client.accessSeconds)
    } catch (err) {
      if (err instanceof HttpError && err.statusCode === 401) throw invalidGrant('the session is refused')
      throw err
    }
    const successor = this.entry(client, { ...record, in: inputOf(next.claims), k: bound })
    const marker = { key: at.rotated, value: record.f, ttlMs: record.end - now }
    // Of two requests presenting one token, one rotates it; the other is a reuse.
    const store = this.d.store
    const rotated = at.family !== undefined && store.exchange !== undefined
      ? await store.exchange({ key: at.current, value: raw!, ttlMs: (record.x ?? now + client.idleTimeoutMs) - now }, successor.entry, marker)
      : await this.rotateApart(at.current, successor.entry, marker)
    if (!rotated) return await this.reused(request, client, record.f, userId)
    if (this.d.audit.on) this.d.audit.emit(request, 'token.refreshed', { reason: 'refresh_token', clientId: client.id, userId })
    return this.answer(client, next.token, successor.token, bound)
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

  /** The token's record, with its family's revocation mark beside it when the token names its family (one MGET on Redis). */
  private async read (at: Place): Promise<{ raw: string | undefined, mark?: { value: string | undefined } }> {
    const store = this.d.store
    if (at.family === undefined) return { raw: await store.get(at.current) }
    const keys = [at.current, sessionMarkKey(at.family)]
    const [raw, mark] = store.getMany !== undefined ? await store.getMany(keys) : await Promise.all(keys.map(async (k) => await store.get(k)))
    return { raw, mark: { value: mark } }
  }

  /** A rotation for a store without `exchange` (or a token of before): the take decides, then both writes at once. */
  private async rotateApart (from: string, to: StoredEntry, marker: StoredEntry): Promise<boolean> {
    if (await this.d.store.take(from) === undefined) return false
    await Promise.all([this.d.store.set(marker.key, marker.value, marker.ttlMs), this.d.store.set(to.key, to.value, to.ttlMs)])
    return true
  }

  /**
   * RFC 7009 for a refresh token of this client: the family ends (a rotated token ends it too: it was stolen or
   * replayed). Resolves false when the token is none of this client's.
   */
  async revoke (request: FastifyRequest, client: RegisteredClient, presented: string): Promise<boolean> {
    const at = placeOf(client, presented)
    const record = recordOf(await this.d.store.take(at.current))
    const family = record === undefined ? await this.d.store.get(at.rotated) : record.f
    if (family === undefined) return false
    const userId = record === undefined ? undefined : userIdOfInput(record.in)
    await this.end(family)
    if (this.d.audit.on) this.d.audit.emit(request, 'token.revoked', { reason: 'revoke', clientId: client.id, userId })
    return true
  }

  /** A token that is not a current one: a rotated one is a reuse (the family ends), anything else is unknown. */
  private async unknown (request: FastifyRequest, client: RegisteredClient, rotated: string): Promise<never> {
    const family = await this.d.store.get(rotated)
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
    const { token, entry } = this.entry(client, record)
    await this.d.store.set(entry.key, entry.value, entry.ttlMs)
    return token
  }

  /** A new refresh token of the family and its entry (living the idle timeout, never past the family's end). */
  private entry (client: RegisteredClient, record: FamilyRecord): { token: string; entry: StoredEntry } {
    const token = `${record.f}.${randomBytes(32).toString('base64url')}`
    const now = Date.now()
    const ttlMs = Math.min(client.idleTimeoutMs, record.end - now)
    if (ttlMs <= 0) throw invalidGrant('the refresh token has expired')
    return { token, entry: { key: placeOf(client, token).current, value: JSON.stringify({ ...record, x: now + ttlMs }), ttlMs } }
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
