/**
 * The token service: the one place where tokens are signed, verified, set on replies and read from requests.
 * It composes one part per job: the token reader (token-reader.ts), verification (verify.ts, keys.ts, jws.ts),
 * issue and refresh (issue.ts), the cookies (cookies.ts), the checks of every request (post-check.ts, with the
 * XSRF rule in xsrf.ts), the verified-session cache (verified-sessions.ts) and revocation (revocation.ts,
 * revoke-presented.ts).
 *
 * The hot path is `session`: a token verified once is served from the verified-session cache until its `exp`, as
 * long as its key is still in its audience's ring and it is not revoked; XSRF, the audience allow-list and the
 * validator run on every request either way. A cached session with a synchronous validator is answered without
 * a promise; every other token takes the one asynchronous verification. Expiry and not-before are checked
 * against `Date.now()`, so that tests can move the clock.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError, OptionsError } from '../../../lib/errors.js'
import { createKeyRings, type Jwks } from '../keys/keys.js'
import { audOf, nowSeconds, unauthorized } from '../base/claims.js'
import type { SessionCache, CachedSession } from './session-cache.js'
import { revokedError, subjectOf, type Revocations } from './revocation.js'
import { revokePresented } from './revoke-presented.js'
import type { AudienceRule } from '../base/audience.js'
import { FROM_COOKIE, FROM_DPOP, TokenReader, type PresentedToken, type TokenSource } from './token-reader.js'
import { requestCookie } from '../base/cookie-jar.js'
import { createVerifier, type Verified, type Verify } from '../keys/verify.js'
import { mustRefresh, type SessionLifetime } from './lifetime.js'
import { Issuer, type SessionBase } from '../keys/issue.js'
import { headerTokenSpender, type SpendToken } from './header-refresh.js'
import { SessionCookies } from './cookies.js'
import { PAGE_FORM, PostCheck } from './post-check.js'
import { keyRemoved, refused, userIdOf } from './session-audit.js'
import type { Audit } from '../../../lib/audit/audit.js'
import { VerifiedSessions } from './verified-sessions.js'
import { SEEN_INTERVAL_MS, type SessionList } from './sessions.js'
import type { Claims, ClaimsInput, ResolvedOptions, Session, TokenPurpose, TokenService } from '../base/types.js'
import { GoPkgzMigration } from './migration.js'
import { looksLikeGoPkgz } from '../keys/go-pkgz-token.js'
import type { StateStore } from '../../../lib/state-store.js'
import { DPoP, needsProof } from './dpop.js'

/** The token service plus what only the core uses (token pairs are the client tokens' own, client-tokens.ts). */
export interface CoreTokenService extends Omit<TokenService, 'issuePair'> {
  /** Signs a short-lived token of another purpose (OAuth2 handshake, confirmation): the provider kit's. */
  signPurpose(purpose: Exclude<TokenPurpose, 'session'>, payload: Record<string, unknown>, ttlMs: number, aud?: string): Promise<string>
  /** Verifies a token of that purpose (signature, expiry, purpose). Throws HttpError 401 (or 400 when malformed). */
  verifyPurpose(purpose: Exclude<TokenPurpose, 'session'>, token: string): Promise<Claims>
  /**
   * `get` without the promise when the session is served from the cache and the validator (if any) answers
   * synchronously: the hot path of the hooks. Throws (or rejects) HttpError as `get` does.
   */
  session (request: FastifyRequest, reply: FastifyReply): Session | null | Promise<Session | null>
  /**
   * Revokes the session a request presents (logout); with `everywhere`, every session of its user too. Resolves
   * its verified claims, or undefined (none presented, or revocation off).
   */
  revokePresented (request: FastifyRequest, everywhere: boolean): Promise<Claims | undefined>
  /**
   * Signs an access token of a refresh family (`base`: the family's `jti` and `auth_time`; none for a new one), living
   * `seconds` (default `session.tokenDuration`): the claims updater and the validator run as for a cookie refresh.
   * Rejects HttpError 401 when the validator refuses.
   */
  access (input: ClaimsInput, base: SessionBase, seconds?: number): Promise<{ token: string; claims: Claims }>
  /**
   * The cookie session of one of the package's pages (the device page, the sign-in confirmation, the session page):
   * read by the one path every authenticated request takes (verification, revocation, the validator, and the
   * refresh of an expired session within `session.maxAge` and `session.idleTimeout`, new cookies on `reply`), the
   * XSRF header apart: a page navigation cannot send one, and a page's form carries the session's XSRF value in a
   * field instead, which its handler compares (client-pages.ts). Null when the request has no cookie session that
   * can still sign its user in (refused sessions are audited as on any route).
   */
  pageSession (request: FastifyRequest, reply: FastifyReply): Promise<Session | null>
  /** Where the request's token comes from (extractor, query, header, bearer or cookie), undefined when it carries none. */
  sourceOf (request: FastifyRequest): TokenSource | undefined
  readonly cache: SessionCache
  /** The public session keys as a JWKS, or null for HMAC sessions. */
  readonly jwks: Jwks | null
  /** DPoP proofs (RFC 9449) of the token endpoint and the protected routes; null without the state store. */
  readonly dpop: DPoP | null
}

/** What the token service and its parts read of the options. */
type TokenServiceOptions = Pick<ResolvedOptions, 'audit' | 'claimsUpdater' | 'clientKey' | 'cookies' | 'dpop' | 'issuer' | 'migration' | 'secret' | 'session' | 'tokenSources' | 'url' | 'validator' | 'xsrf'>

/**
 * The token service. `store` (the state store) is needed by `migration.goPkgz`, which marks each exchanged Go
 * token there, and by DPoP (each proof's `jti`, the server nonce): without it DPoP is off.
 */
export function createTokenService (o: TokenServiceOptions, revocations: Revocations | null, audiences: AudienceRule, list: SessionList | null = null, store?: StateStore): CoreTokenService {
  const keys = createKeyRings(o.secret, o.session.signingKeys, (reason) => unauthorized(reason, ErrorCodes.UNAUTHORIZED))
  const verify = createVerifier(keys, o.issuer, audiences)
  const issuer = new Issuer(o, keys, audiences)
  const cookies = new SessionCookies(o)
  const reader = new TokenReader(o)
  const verified = new VerifiedSessions(o.session.cacheSize, o.session.tokenDurationMs, keys, o.session.signingKeys, revocations, list !== null)
  const check = new PostCheck(o, audiences)
  const goPkgz = o.migration.goPkgz
  if (goPkgz !== null && store === undefined) throw new OptionsError('migration.goPkgz', 'needs the state store (register the core plugin, not the token service alone)')
  if (o.tokenSources.headerRefresh && store === undefined) throw new OptionsError('tokenSources.headerRefresh', 'needs the state store (register the core plugin, not the token service alone)')
  const migration = goPkgz === null || store === undefined ? null : new GoPkgzMigration(o, goPkgz, { issuer, verified, cookies, revocations, list, audiences, store })
  const dpop = store === undefined ? null : new DPoP({ options: o.dpop, store, url: o.url, clientKey: o.clientKey, audit: o.audit })
  const sessions = new SessionReader(o, { reader, verify, issuer, cookies, verified, revocations, list, check, migration, store, dpop })
  const presented = { reader, verify, revocations, lifetime: sessions.lifetime, audit: o.audit, check, dpop }

  async function issue (input: ClaimsInput): Promise<{ token: string; claims: Session['claims'] }> {
    const claims = await issuer.claims(input)
    const { token, key } = await issuer.sign(claims)
    verified.remember(token, claims, key, Date.now(), true)
    return { token, claims }
  }
  const session = sessions.session.bind(sessions)

  return {
    cache: verified.cache,
    jwks: keys.jwks,
    dpop,
    create: issue,
    async parse (token, opts = {}) {
      const { claims } = await verify(token, 'session')
      if (revocations !== null && await revocations.isRevoked(subjectOf(claims))) throw revokedError()
      if (opts.allowExpired !== true && claims.exp <= nowSeconds()) throw unauthorized('token expired', ErrorCodes.TOKEN_EXPIRED)
      return claims
    },
    async set (reply, input) {
      const out = await issue(input)
      cookies.set(reply, out.token, out.claims)
      return out
    },
    session,
    async read (request, reply) { return await session(request, reply) },
    reset (reply) { cookies.reset(reply) },
    signPurpose: async (purpose, payload, ttlMs, aud) => await issuer.purpose(purpose, payload, ttlMs, aud),
    async verifyPurpose (purpose, token) {
      const { claims } = await verify(token, purpose)
      if (claims.exp <= nowSeconds()) throw unauthorized('token expired', ErrorCodes.TOKEN_EXPIRED)
      return claims
    },
    async access (input, base, seconds) {
      const claims = await issuer.claims(input, base, seconds)
      const { token, key } = await issuer.sign(claims)
      await check.validated(verified.remember(token, claims, key, Date.now(), true))
      return { token, claims }
    },
    revokePresented: async (request, everywhere) => await revokePresented(presented, request, everywhere),
    pageSession: async (request, reply) => await sessions.page(request, reply),
    sourceOf: (request) => reader.read(request)?.source
  }
}

interface SessionParts {
  reader: TokenReader
  verify: Verify
  issuer: Issuer
  cookies: SessionCookies
  verified: VerifiedSessions
  revocations: Revocations | null
  /** The session list, told of a session seen at most once a minute per entry (null when off). */
  list: SessionList | null
  check: PostCheck
  /** Exchanges go-pkgz/auth tokens for sessions (`migration.goPkgz`); null when off. */
  migration: GoPkgzMigration | null
  /** The state store, where header refresh marks the tokens it spent (present whenever `headerRefresh` is on). */
  store: StateStore | undefined
  /** DPoP proofs of key-bound sessions (null without the state store: a bound session is then refused). */
  dpop: DPoP | null
}

/**
 * The session of a request, in two parts written once each: `session` reads the verified-session cache
 * synchronously, and `verified` is the one asynchronous path for everything else (a first-seen token, a cached
 * entry due for a recheck, a refresh).
 */
class SessionReader {
  readonly lifetime: SessionLifetime
  private readonly audit: Audit
  /** Marks a refreshed header token spent (headerRefresh on). */
  private readonly spend: SpendToken | undefined
  /**
   * A session refreshed while answering a request, by that request and the expired token it came with: a second
   * read in the same request (a hook, then its route) gets that session instead of refreshing it again.
   */
  private readonly refreshedFor = new WeakMap<FastifyRequest, { from: string; entry: CachedSession }>()
  /** The session cookie's name: a page reads its session from there only. */
  private readonly cookieName: string
  constructor (o: Pick<ResolvedOptions, 'audit' | 'cookies' | 'session' | 'tokenSources'>, private readonly p: SessionParts) {
    this.audit = o.audit
    this.cookieName = o.cookies.sessionName
    this.lifetime = { maxAgeSeconds: Math.max(1, Math.round(o.session.maxAgeMs / 1000)), idleTimeoutMs: o.session.idleTimeoutMs, headerRefresh: o.tokenSources.headerRefresh }
    this.spend = p.store === undefined ? undefined : headerTokenSpender(p.store, this.lifetime)
  }

  /**
   * The hot path: a servable cached entry is admitted and answered without a promise (unless the validator is
   * asynchronous), a Map lookup being most of what it costs. Anything else goes to `verified`.
   */
  session (request: FastifyRequest, reply: FastifyReply): Session | null | Promise<Session | null> {
    const reader = this.p.reader
    const token = reader.token(request)
    if (token === undefined) return this.p.migration === null ? null : this.goCookie(request, reply)
    // What the reader found, taken at once: anything called below (the secret reader, the validator) could read again.
    const source = reader.source
    const xsrfIn = reader.xsrfIn
    const xsrfStart = reader.xsrfStart
    const xsrfEnd = reader.xsrfEnd
    const entry = this.p.verified.cache.find(token, reader.tokenIn, reader.tokenEnd)
    // Not cached (or a Bearer value that must first pass RFC 6750's syntax): the careful read, then the slow path.
    if (entry === undefined) return this.uncached(request, reply)
    const now = Date.now()
    if (!this.p.verified.servable(entry, now)) return this.verified({ token, source }, entry, now, request, reply)
    // DPoP (RFC 9449) is a branch of its own, taken only by the DPoP scheme or a key-bound session.
    if (source === FROM_DPOP || entry.claims.cnf !== undefined) return this.proven({ token, source }, entry, request, reply, now)
    // A try block costs nothing until something throws; the audit is only asked on a refusal.
    try {
      entry.hit = true
      this.p.check.admit(request, source, entry.claims.jti, entry.aud, xsrfIn, xsrfStart, xsrfEnd, entry.jtiCodes)
      this.sighted(entry, request, now)
      const checked = this.p.check.validated(entry)
      return checked === entry ? entry : this.audited(checked as Promise<Session>, request, source, entry.claims)
    } catch (err) {
      throw refused(this.audit, err, request, source, entry.claims)
    }
  }

  /** DPoP's branch of a cached session: one proof verified (dpop.ts), then the checks every session passes. */
  private async proven (presented: PresentedToken, entry: CachedSession, request: FastifyRequest, reply: FastifyReply, now: number): Promise<Session> {
    try {
      await this.prove(presented, entry.claims, request, reply)
      this.admit(entry, presented.source, request, now)
      return await this.p.check.validated(entry)
    } catch (err) {
      throw refused(this.audit, err, request, presented.source, entry.claims)
    }
  }

  /** The proof a session sent with the DPoP scheme or bound to a key needs (none for any other session). */
  private async prove ({ token, source }: PresentedToken, claims: Claims, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (!needsProof(source, claims)) return
    if (this.p.dpop === null) throw unauthorized('a DPoP-bound token needs the state store', ErrorCodes.DPOP)
    await this.p.dpop.resource(request, reply, token, source, claims)
  }

  /** A token the cache does not hold: read again with every check (a malformed Bearer value is no token). */
  private uncached (request: FastifyRequest, reply: FastifyReply): Session | null | Promise<Session | null> {
    const presented = this.p.reader.read(request)
    if (presented === undefined) return this.p.migration === null ? null : this.goCookie(request, reply)
    const again = this.refreshedFor.get(request)
    return again?.from === presented.token ? again.entry : this.verified(presented, undefined, Date.now(), request, reply)
  }

  /** The go-pkgz service's own cookie (`migration.goPkgz.cookieName`), when the request carries no token of ours. */
  private goCookie (request: FastifyRequest, reply: FastifyReply): Promise<Session> | null {
    const presented = this.p.migration!.goCookie(request)
    return presented === undefined ? null : this.migrated(presented, request, reply)
  }

  /**
   * A page's cookie session (`CoreTokenService.pageSession`): the asynchronous path below, with the page's rule for
   * XSRF. A refusal of any kind (expired past its lifetime, revoked, refused by the validator) is no session.
   */
  async page (request: FastifyRequest, reply: FastifyReply): Promise<Session | null> {
    const token = requestCookie(request, this.cookieName)
    if (token === undefined || token === '') return null
    const again = this.refreshedFor.get(request)
    if (again?.from === token) return again.entry
    try {
      return await this.verified({ token, source: FROM_COOKIE }, this.p.verified.cache.get(token), Date.now(), request, reply, true)
    } catch (err) {
      if (err instanceof HttpError && err.statusCode === 401) return null
      throw err
    }
  }

  /** A go-pkgz/auth token exchanged for a session of ours (migration.ts), then the validator's word on that session. */
  private async migrated (presented: PresentedToken, request: FastifyRequest, reply: FastifyReply): Promise<Session> {
    try {
      return await this.p.check.validated(await this.p.migration!.exchange(presented, request, reply))
    } catch (err) {
      throw refused(this.audit, err, request, presented.source)
    }
  }

  /**
   * XSRF and the audience for a cached entry; once a minute per entry the session list is told of it. A page's
   * session comes as `PAGE_FORM`: its form's field stands for the XSRF header.
   */
  private admit (entry: CachedSession, source: TokenSource | typeof PAGE_FORM, request: FastifyRequest, now: number): void {
    entry.hit = true
    this.p.check.admit(request, source, entry.claims.jti, entry.aud)
    this.sighted(entry, request, now)
  }

  /** The session list hears of a cached entry once a minute: one comparison per request (seenAt is Infinity when the list is off). */
  private sighted (entry: CachedSession, request: FastifyRequest, now: number): void {
    if (now - entry.seenAt >= SEEN_INTERVAL_MS && this.p.list !== null) this.p.list.sighted(entry, request, now)
  }

  /** An asynchronous validator's word; its refusal is audited when it comes. */
  private async audited (checked: Promise<Session>, request: FastifyRequest, source: TokenSource, claims: Claims): Promise<Session> {
    try {
      return await checked
    } catch (err) {
      throw refused(this.audit, err, request, source, claims)
    }
  }

  /**
   * The one asynchronous path: a cached entry the fast test did not clear is rechecked (expiry, key, revocation
   * in the store); a token not cached, or no longer servable, is verified, admitted and cached or refreshed.
   */
  private async verified ({ token, source }: PresentedToken, cached: CachedSession | undefined, now: number, request: FastifyRequest, reply: FastifyReply, page = false): Promise<Session> {
    // One separate step: a token in go-pkgz/auth's layout goes to the migration, when it is on (else it is refused below).
    if (cached === undefined && this.p.migration !== null && looksLikeGoPkgz(token)) return await this.migrated({ token, source }, request, reply)
    let claims = cached?.claims
    try {
      const rechecked = cached === undefined ? undefined : await this.p.verified.recheck(cached, now)
      if (rechecked !== undefined) {
        this.admit(rechecked, page ? PAGE_FORM : source, request, now)
        await this.prove({ token, source }, rechecked.claims, request, reply)
        return await this.p.check.validated(rechecked)
      }
      const verified = await this.p.verify(token, 'session')
      claims = verified.claims
      const entry = await this.kept(token, verified, source, request, reply, page)
      await this.prove({ token, source }, entry.claims, request, reply)
      return await this.p.check.validated(entry)
    } catch (err) {
      // A session this instance had verified, whose key is in no ring any more: the key's removal ended it.
      if (cached !== undefined && cached.expiresAt > now && keyRemoved(err) && this.audit.on) {
        this.audit.emit(request, 'session.revoked', { reason: 'key_removed', by: 'key_removed', scope: 'session', userId: cached.subject.userId, aud: cached.aud })
      }
      throw refused(this.audit, err, request, source, claims)
    }
  }

  /** A verified token: admitted (before anything else happens with it), not revoked, then cached or refreshed. */
  private async kept (token: string, { claims, key, current }: Verified, source: TokenSource, request: FastifyRequest, reply: FastifyReply, page = false): Promise<CachedSession> {
    const p = this.p
    p.check.admit(request, page ? PAGE_FORM : source, claims.jti, audOf(claims))
    if (p.revocations !== null && await p.revocations.revoked(subjectOf(claims))) throw revokedError()
    const now = Date.now()
    if (key !== current && this.audit.on) {
      this.audit.emit(request, 'key.rotated', { reason: 'older_key', kid: key.kid, currentKid: current.kid, userId: userIdOf(claims), aud: audOf(claims) })
    }
    if (!mustRefresh(claims, source, now, this.lifetime)) {
      const entry = p.verified.remember(token, claims, key, now, false)
      // New to this instance: the list hears of it at its next request here (a token seen once costs it nothing).
      if (p.list !== null) entry.seenAt = now - SEEN_INTERVAL_MS
      return entry
    }
    return await this.refreshed(token, claims, source, request, reply, now)
  }

  private async refreshed (token: string, claims: Claims, source: TokenSource, request: FastifyRequest, reply: FastifyReply, now: number): Promise<CachedSession> {
    const p = this.p
    // Every request still carrying an expired cookie gets its one successor (the refresh cache); a header token
    // (under headerRefresh) is spent by its refresh (header-refresh.ts).
    const refreshed = source === FROM_COOKIE
      ? await p.issuer.refresh(token, claims)
      : await p.issuer.rotate(token, claims, async () => await this.spend!(token, claims, now))
    // A cookie session gets new cookies; a header token its successor in the X-JWT header.
    if (source === FROM_COOKIE) p.cookies.set(reply, refreshed.token, refreshed.claims)
    else p.cookies.sendHeader(reply, refreshed.token)
    const entry = p.verified.remember(refreshed.token, refreshed.claims, refreshed.key, now, true)
    this.refreshedFor.set(request, { from: token, entry })
    if (this.audit.on) this.audit.emit(request, 'session.refreshed', { reason: 'expired_token', userId: userIdOf(entry.claims), aud: entry.aud })
    // A refresh is a sighting that also adds the session when the list lacks it (one the app created itself).
    p.list?.sighted(entry, request, now)
    return entry
  }
}
