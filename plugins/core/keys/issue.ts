/**
 * Issuing tokens: session claims (registered claims are the service's; the claims updater shapes the rest),
 * their refresh (once per expired token, however many requests carry it), and the short-lived tokens of other
 * purposes (OAuth2 handshake, confirmation).
 */
import { randomBytes } from 'node:crypto'
import { signJws, type JwsKey } from '../base/jws.js'
import type { KeyRings } from './keys.js'
import { audOf, nowSeconds, sessionAud, unauthorized } from '../base/claims.js'
import { ErrorCodes, OptionsError } from '../../../lib/errors.js'
import type { AudienceRule } from '../base/audience.js'
import { MemoryRefreshCache } from '../base/refresh-cache.js'
import type { Claims, ClaimsInput, RefreshCache, ResolvedOptions, TokenPurpose } from '../base/types.js'

export interface Signed { token: string; claims: Claims; key: JwsKey }

/**
 * What a session's claims take from elsewhere than their input: the service's own claims. `jti` and `auth_time`
 * (a refresh keeps them; a new session with a sign-in of before, such as a client's family or a session moved from
 * go-pkgz/auth, gives `auth_time` only), `client_id`, the registered client a refresh family's access tokens belong
 * to (RFC 9068 §2.2), and `started_at`, kept over a refresh (see `Claims.started_at`).
 */
export interface SessionBase { jti?: string | undefined; auth_time?: number | undefined; client_id?: string | undefined; started_at?: number | undefined }

/** The service's own claims that only some sessions carry: never taken from an input or a claims updater. */
const OWN_OPTIONAL = ['client_id', 'started_at'] as const

export class Issuer {
  private readonly tokenSeconds: number
  private readonly refreshCache: RefreshCache
  private readonly inflight = new Map<string, Promise<Claims>>()
  /** Header tokens being refreshed: the requests in flight with one share its one successor. */
  private readonly rotating = new Map<string, Promise<Signed>>()
  // The default refresh cache hands back the same claims object to every request carrying one expired token,
  // so its token is signed once.
  private readonly refreshedTokens = new WeakMap<Claims, { token: string; key: JwsKey }>()

  constructor (private readonly o: Pick<ResolvedOptions, 'claimsUpdater' | 'issuer' | 'session'>, private readonly keys: KeyRings, private readonly audiences: AudienceRule) {
    this.tokenSeconds = Math.max(1, Math.round(o.session.tokenDurationMs / 1000))
    this.refreshCache = o.session.refreshCache ?? new MemoryRefreshCache()
  }

  /** Signs session claims; `base` carries the service's own claims (jti, auth_time, client_id, started_at) over a refresh. */
  async claims (input: ClaimsInput, base?: SessionBase): Promise<Claims> {
    // `client_id` and `started_at` are the service's to set (from `base`): an input or a refresh's claims never sets them.
    const { aud: rawAud, user, sess, client_id: _client, started_at: _started, ...extra } = input
    const aud = sessionAud(rawAud)
    this.audiences.checkCreation(aud)
    const nowMs = Date.now()
    const now = Math.floor(nowMs / 1000)
    // Registered claims are the service's: neither the input nor the claims updater may change them.
    const fixed = {
      iss: this.o.issuer,
      iat: now,
      nbf: now,
      exp: now + this.tokenSeconds,
      jti: base?.jti ?? randomBytes(16).toString('base64url'),
      auth_time: base?.auth_time ?? nowMs / 1000,
      purpose: 'session' as const,
      ...(base?.client_id === undefined ? undefined : { client_id: base.client_id }),
      // A new session whose sign-in came before it (a family, a moved go-pkgz session) notes when it started here.
      ...(base?.started_at !== undefined ? { started_at: base.started_at } : base?.jti === undefined && base?.auth_time !== undefined ? { started_at: nowMs / 1000 } : undefined)
    }
    let claims: Claims = { ...extra, aud: [aud], ...fixed }
    if (user !== undefined) claims.user = user
    if (sess === true) claims.sess = true
    if (this.o.claimsUpdater !== undefined) {
      const updated = await this.o.claimsUpdater(claims)
      if (updated === null || typeof updated !== 'object') throw new OptionsError('claimsUpdater', 'must return claims')
      const a = sessionAud(updated.aud)
      this.audiences.checkCreation(a)
      claims = { ...updated, ...fixed, aud: [a] }
      for (const own of OWN_OPTIONAL) if (!(own in fixed)) delete claims[own]
    }
    return claims
  }

  async sign (claims: Claims): Promise<{ token: string; key: JwsKey }> {
    const key = (await this.keys.ring(audOf(claims), 'session')).signer
    return { token: signJws(key, claims), key }
  }

  /** New claims and token for an expired cookie session (its checks passed: the caller decides it may refresh). */
  async refresh (token: string, claims: Claims): Promise<Signed> {
    // The cache only spares concurrent requests a second refresh; a cached result that has expired in turn is
    // refreshed again rather than handed out as an already-dead token.
    let next = this.refreshCache.get(token)
    if (next === undefined || next.exp <= nowSeconds()) {
      let pending = this.inflight.get(token)
      if (pending === undefined) {
        const { iat, nbf, exp, iss, jti, auth_time: at, purpose, ...input } = claims
        pending = this.claims(input, claims).then((c) => { this.refreshCache.set(token, c); return c })
          .finally(() => this.inflight.delete(token))
        this.inflight.set(token, pending)
      }
      next = await pending
    }
    let signed = this.refreshedTokens.get(next)
    if (signed === undefined) {
      signed = await this.sign(next)
      this.refreshedTokens.set(next, signed)
    }
    return { token: signed.token, claims: next, key: signed.key }
  }

  /**
   * New claims and token for an expired header token, which the refresh spends: `spend` marks it used on every
   * instance (false when it was already: 401 `GATEHOUSE_ALREADY_USED`). The requests in flight with the same token
   * when it is spent share its one successor; any later one is refused.
   */
  async rotate (token: string, claims: Claims, spend: () => Promise<boolean>): Promise<Signed> {
    let pending = this.rotating.get(token)
    if (pending === undefined) {
      pending = this.spent(claims, spend).finally(() => this.rotating.delete(token))
      this.rotating.set(token, pending)
    }
    return await pending
  }

  private async spent (claims: Claims, spend: () => Promise<boolean>): Promise<Signed> {
    if (!await spend()) throw unauthorized('this token was refreshed already: send the one its refresh answered', ErrorCodes.ALREADY_USED)
    const { iat, nbf, exp, iss, jti, auth_time: at, purpose, ...input } = claims
    const next = await this.claims(input, claims)
    const { token, key } = await this.sign(next)
    return { token, claims: next, key }
  }

  /** A short-lived token of another purpose, signed with that purpose's keys. */
  async purpose (purpose: Exclude<TokenPurpose, 'session'>, payload: Record<string, unknown>, ttlMs: number, aud?: string): Promise<string> {
    const now = nowSeconds()
    const claims: Claims = {
      ...payload,
      aud: aud === undefined || aud === '' ? [] : [aud],
      iss: this.o.issuer,
      iat: now,
      nbf: now,
      exp: now + Math.max(1, Math.round(ttlMs / 1000)),
      jti: randomBytes(16).toString('base64url'),
      purpose
    }
    return signJws((await this.keys.ring(aud ?? '', purpose)).signer, claims)
  }
}
