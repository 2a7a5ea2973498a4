/**
 * The provider's own tokens, kept for the app (option `keepTokens` of an OAuth2 provider): the access and refresh
 * tokens of the login, sealed with AES-256-GCM under a key from the options and kept in the state store for the
 * signed-in user, so that a route can call the provider's API as that user (`getProviderToken`). An expired access
 * token is refreshed at the token endpoint, one refresh at a time per user and provider across every instance
 * sharing the state store (a lock key there; the others wait for the token it keeps); `revokeProviderToken` and the logout revoke it at the provider's revocation endpoint (RFC 7009) and drop it.
 *
 * Never in the session JWT, a log line or an audit event: the tokens exist only sealed in the store and, unsealed,
 * in the answer of `getProviderToken`. The sealed value is bound to its provider and user (the GCM additional
 * data), so one user's entry copied under another's key does not open.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError, OptionsError } from '../../lib/errors.js'
import { checkKeys, optionDuration, optionUrl } from '../../lib/options.js'
import type { Duration } from '../../lib/duration.js'
import type { StateStore } from '../../lib/state-store.js'

/** Options of `keepTokens`: keep the provider's tokens for the app. */
export interface KeepTokensOptions {
  /** AES-256-GCM key sealing the tokens in the state store: 32 bytes as 64 hex characters. Required. */
  key: string
  /** The provider's token revocation endpoint (RFC 7009), called at logout and by `revokeProviderToken`. Default none. */
  revocationURL?: string | undefined
  /** How long the tokens are kept after the login: ms or `'30d'`. Default 30 days. */
  keepFor?: Duration | undefined
}

/** An access token of the provider, fresh (refreshed when it had expired). */
export interface ProviderToken {
  accessToken: string
  /** When it expires (ms since the epoch), when the provider said. */
  expiresAt: number | undefined
  /** The scopes granted, when the provider said. */
  scope: string | undefined
}

/** What the engine lends the keeper: calls to the provider's token and revocation endpoints. */
export interface TokenEndpoint {
  /** A token request (`grant_type=refresh_token`); resolves the checked answer's fields. */
  token(form: URLSearchParams): Promise<Record<string, unknown>>
  /** A revocation request (RFC 7009) with the client's authentication; resolves the status. */
  revoke(url: string, form: URLSearchParams): Promise<number>
  /** How long one call may take (the provider's `timeout`): a refresh lock outlives it. */
  timeoutMs: number
}

interface Kept { a: string; r?: string | undefined; e?: number | undefined; s?: string | undefined }

const KEY_PREFIX = 'provider-tokens:'
const LOCK_PREFIX = 'provider-tokens-refresh:'
// How often an instance waiting for another's refresh looks for the new token in the store.
const POLL_MS = 25
// A token this close to its expiry is refreshed first: it could expire on its way to the provider's API.
const SKEW_MS = 30_000
const KEEPERS = Symbol.for('gatehouse.providerTokens')

/** The checked `keepTokens` option. */
export interface KeepRules { key: Buffer; revocationURL: string | undefined; keepForMs: number }

export function keepRules (label: string, value: unknown): KeepRules | undefined {
  if (value === undefined) return undefined
  const o = checkKeys(value, ['key', 'revocationURL', 'keepFor'], `${label}.keepTokens`) as unknown as KeepTokensOptions
  if (typeof o.key !== 'string' || !/^[0-9a-fA-F]{64}$/.test(o.key)) throw new OptionsError(`${label}.keepTokens.key`, 'must be 32 bytes as 64 hex characters')
  const revocationURL = o.revocationURL === undefined ? undefined : optionUrl(`${label}.keepTokens.revocationURL`, o.revocationURL).href
  return { key: Buffer.from(o.key, 'hex'), revocationURL, keepForMs: optionDuration(`${label}.keepTokens.keepFor`, o.keepFor, 30 * 86_400_000) }
}

/** One provider's kept tokens. */
export class TokenKeeper {
  readonly #refreshing = new Map<string, Promise<ProviderToken>>()

  constructor (readonly name: string, private readonly rules: KeepRules, private readonly store: StateStore, private readonly endpoint: TokenEndpoint) {}

  /** Keeps the tokens of a login's token answer for `userId`. */
  async keep (userId: string, answer: Record<string, unknown>): Promise<void> {
    await this.write(userId, keptOf(answer, undefined))
  }

  /** A fresh access token of `userId`: refreshed (once at a time) when it expired. */
  async fresh (userId: string): Promise<ProviderToken> {
    const kept = await this.read(userId)
    if (isFresh(kept)) return tokenOf(kept)
    // In this process, concurrent callers share one promise; across instances, the lock of `refreshOnce`.
    let running = this.#refreshing.get(userId)
    if (running === undefined) {
      running = this.refreshOnce(userId).finally(() => this.#refreshing.delete(userId))
      this.#refreshing.set(userId, running)
    }
    return await running
  }

  /**
   * One refresh across every instance sharing the store: the instance that sets the lock key refreshes, the others
   * wait for the token it keeps. Two refreshes with one refresh token would both spend it, and a provider that
   * rotates refresh tokens takes the second use for a stolen token and may revoke the whole grant (RFC 9700 §4.14).
   */
  private async refreshOnce (userId: string): Promise<ProviderToken> {
    const lock = `${LOCK_PREFIX}${this.name}:${userId}`
    // The lock outlives the token call (bounded by the provider's timeout), so it is not lost mid-refresh; an
    // instance that dies holding it holds it this long at most.
    const lockMs = 2 * this.endpoint.timeoutMs + 5_000
    const giveUpAt = performance.now() + 2 * lockMs
    for (;;) {
      if (await this.store.setIfAbsent(lock, '1', lockMs)) return await this.refreshLocked(userId, lock)
      await new Promise((resolve) => setTimeout(resolve, POLL_MS))
      const raw = await this.store.get(this.key(userId))
      const kept = raw === undefined ? undefined : this.open(userId, raw)
      // Dropped while another instance held the lock: the provider refused its refresh (or the user signed out).
      if (kept === undefined) throw expired(this.name, 'the provider refused the refresh token')
      if (isFresh(kept)) return tokenOf(kept)
      if (performance.now() > giveUpAt) throw new HttpError(503, 'provider token refresh pending', `another instance has been refreshing the ${this.name} token for too long`, ErrorCodes.UNAVAILABLE)
    }
  }

  private async refreshLocked (userId: string, lock: string): Promise<ProviderToken> {
    try {
      // Read again under the lock: another instance may have refreshed between the caller's read and the lock.
      const kept = await this.read(userId)
      return isFresh(kept) ? tokenOf(kept) : await this.refresh(userId, kept)
    } finally {
      // A lock that could not be deleted (the store failing) ends with its TTL.
      await this.store.delete(lock).catch(() => false)
    }
  }

  /** Revokes the user's tokens at the provider (when it has a revocation endpoint) and drops them. */
  async revoke (userId: string): Promise<boolean> {
    const raw = await this.store.take(this.key(userId))
    if (raw === undefined) return false
    const kept = this.open(userId, raw)
    const url = this.rules.revocationURL
    if (kept === undefined || url === undefined) return true
    // The refresh token first: revoking it ends the grant (RFC 7009 §2.1); the access token as well when alone.
    const [token, hint] = kept.r !== undefined ? [kept.r, 'refresh_token'] : [kept.a, 'access_token']
    const status = await this.endpoint.revoke(url, new URLSearchParams({ token, token_type_hint: hint }))
    if (status !== 200) throw new HttpError(502, 'provider revocation failed', `the revocation endpoint answered status ${status}`, ErrorCodes.UPSTREAM)
    return true
  }

  private async refresh (userId: string, kept: Kept): Promise<ProviderToken> {
    if (kept.r === undefined) throw expired(this.name, 'it expired and the provider gave no refresh token')
    let answer: Record<string, unknown>
    try {
      answer = await this.endpoint.token(new URLSearchParams({ grant_type: 'refresh_token', refresh_token: kept.r }))
    } catch (err) {
      // A refused refresh token (invalid_grant: revoked, expired) will not work again: drop it, sign in again.
      if (err instanceof HttpError && err.statusCode === 400) {
        await this.store.delete(this.key(userId))
        throw expired(this.name, 'the provider refused the refresh token')
      }
      throw err
    }
    const next = keptOf(answer, kept.r)
    await this.write(userId, next)
    return tokenOf(next)
  }

  private async read (userId: string): Promise<Kept> {
    const raw = await this.store.get(this.key(userId))
    const kept = raw === undefined ? undefined : this.open(userId, raw)
    if (kept === undefined) throw new HttpError(404, 'no provider token', `no ${this.name} token is kept for this user: sign in with ${this.name}`, ErrorCodes.NOT_FOUND)
    return kept
  }

  private async write (userId: string, kept: Kept): Promise<void> {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.rules.key, iv)
    cipher.setAAD(Buffer.from(this.key(userId)))
    const sealed = Buffer.concat([iv, cipher.update(JSON.stringify(kept), 'utf8'), cipher.final(), cipher.getAuthTag()])
    await this.store.set(this.key(userId), sealed.toString('base64url'), this.rules.keepForMs)
  }

  /** The kept tokens, or undefined when the value does not open (another key, another user's entry, garbage). */
  private open (userId: string, raw: string): Kept | undefined {
    try {
      const sealed = Buffer.from(raw, 'base64url')
      const decipher = createDecipheriv('aes-256-gcm', this.rules.key, sealed.subarray(0, 12))
      decipher.setAAD(Buffer.from(this.key(userId)))
      decipher.setAuthTag(sealed.subarray(sealed.length - 16))
      const kept = JSON.parse(Buffer.concat([decipher.update(sealed.subarray(12, sealed.length - 16)), decipher.final()]).toString('utf8')) as Kept
      return typeof kept.a === 'string' ? kept : undefined
    } catch {
      return undefined
    }
  }

  private key (userId: string): string {
    return `${KEY_PREFIX}${this.name}:${userId}`
  }
}

function keptOf (answer: Record<string, unknown>, previousRefresh: string | undefined): Kept {
  const expiresIn = Number(answer.expires_in)
  return {
    a: answer.access_token as string,
    // A provider that rotates refresh tokens sends a new one; one that does not keeps the old one valid.
    r: typeof answer.refresh_token === 'string' && answer.refresh_token !== '' ? answer.refresh_token : previousRefresh,
    e: Number.isFinite(expiresIn) && expiresIn > 0 ? Date.now() + expiresIn * 1000 : undefined,
    s: typeof answer.scope === 'string' ? answer.scope : undefined
  }
}

/** Not expired, nor within SKEW_MS of it (a token without an expiry is taken as live). */
function isFresh (kept: Kept): boolean {
  return kept.e === undefined || kept.e - SKEW_MS > Date.now()
}

function tokenOf (kept: Kept): ProviderToken {
  return { accessToken: kept.a, expiresAt: kept.e, scope: kept.s }
}

function expired (name: string, why: string): HttpError {
  return new HttpError(401, 'provider token expired', `${why}: sign in with ${name} again`, ErrorCodes.TOKEN_EXPIRED)
}

/** Registers a provider's keeper on the app (found again from a request by `getProviderToken`). */
export function registerKeeper (fastify: FastifyInstance, keeper: TokenKeeper): void {
  const holder = fastify as unknown as Record<symbol, Map<string, TokenKeeper> | undefined>
  if (holder[KEEPERS] === undefined) fastify.decorate(KEEPERS, new Map<string, TokenKeeper>())
  holder[KEEPERS]!.set(keeper.name, keeper)
}

function keeperOf (request: FastifyRequest, name: string): { keeper: TokenKeeper; userId: string } {
  const keepers = (request.server as unknown as Record<symbol, Map<string, TokenKeeper> | undefined>)[KEEPERS]
  const keeper = keepers?.get(name)
  if (keeper === undefined) throw new OptionsError(`oauth2.${name}.keepTokens`, 'is not set: no tokens of this provider are kept')
  const userId = (request as { user?: { id?: unknown } | null | undefined }).user?.id
  if (typeof userId !== 'string') throw new HttpError(401, 'unauthorized', 'not logged in', ErrorCodes.UNAUTHORIZED)
  return { keeper, userId }
}

/**
 * A fresh access token of provider `name` for the request's signed-in user (a route behind `authenticate`):
 * refreshed when it expired. 404 when none is kept, 401 `GATEHOUSE_TOKEN_EXPIRED` when it cannot be refreshed
 * (sign in with the provider again), 502/503/504 when the provider failed.
 */
export async function getProviderToken (request: FastifyRequest, name: string): Promise<ProviderToken> {
  const { keeper, userId } = keeperOf(request, name)
  return await keeper.fresh(userId)
}

/** Revokes the signed-in user's tokens of provider `name` at the provider and drops them; false when none was kept. */
export async function revokeProviderToken (request: FastifyRequest, name: string): Promise<boolean> {
  const { keeper, userId } = keeperOf(request, name)
  return await keeper.revoke(userId)
}
