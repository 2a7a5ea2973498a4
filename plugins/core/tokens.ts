/**
 * The token service: the one place where tokens are signed, verified, set on replies and read from requests.
 *
 * The hot path is `get`: a token verified once is served from the verified-session cache (plugins/core/
 * session-cache.ts) until its `exp`, as long as its key is still in its audience's ring and it is not revoked
 * (plugins/core/revocation.ts); XSRF, the audience allow-list and the validator run on every request either way.
 * Signing and verifying are plugins/core/jws.ts with keys chosen by plugins/core/keys.ts; expiry and not-before
 * are checked here against `Date.now()`, so that refresh can tell "expired but refreshable" from "bad" and tests
 * can move the clock.
 */
import { randomBytes } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { CookieSerializeOptions } from '@fastify/cookie'
import { ErrorCodes, HttpError, OptionsError } from '../../lib/errors.js'
import { User } from '../../lib/user.js'
import { makeXsrfCheck } from '../../hooks/xsrf.js'
import { decodeJws, signJws, type JwsKey } from './jws.js'
import { createKeyRings, KeyRing, type Jwks } from './keys.js'
import { audOf, checkClaims, deepFreeze, LEEWAY_S, nowSeconds, sessionAud, unauthorized } from './claims.js'
import { SessionCache, type CachedSession } from './session-cache.js'
import { revokedError, subjectOf, type Revocations } from './revocation.js'
import { MemoryRefreshCache } from './refresh-cache.js'
import type { Claims, ClaimsInput, ResolvedOptions, Session, TokenPurpose, TokenService } from './types.js'

const rejectedByValidator = (): HttpError => unauthorized('rejected by validator', ErrorCodes.UNAUTHORIZED)

const QUERY = 0
const HEADER = 1
const COOKIE = 2

/** The token service plus what only the core uses. */
export interface CoreTokenService extends TokenService {
  /**
   * `get` without the promise when the session is served from the cache and the validator (if any) answers
   * synchronously: the hot path of the hooks. Throws (or rejects) HttpError as `get` does.
   */
  session (request: FastifyRequest, reply: FastifyReply): Session | null | Promise<Session | null>
  /** Revokes the session a request presents (logout); with `everywhere`, every session of its user too. */
  revokePresented (request: FastifyRequest, everywhere: boolean): Promise<void>
  readonly cache: SessionCache
  /** The public session keys as a JWKS, or null for HMAC sessions. */
  readonly jwks: Jwks | null
}

export function createTokenService (o: ResolvedOptions, revocations: Revocations | null): CoreTokenService {
  const keys = createKeyRings(o.secret, o.sessionKeys, (reason) => unauthorized(reason, ErrorCodes.UNAUTHORIZED))
  const staticSessionKeys = o.sessionKeys !== undefined
  const cache = new SessionCache(o.sessionCacheSize)
  const refreshCache = o.refreshCache ?? new MemoryRefreshCache()
  const inflight = new Map<string, Promise<Claims>>()
  // The default refresh cache hands back the same claims object to every request carrying one expired token,
  // so its token is signed once.
  const refreshedTokens = new WeakMap<Claims, { token: string; key: JwsKey }>()
  const checkXsrf = makeXsrfCheck(o)
  const allowed = o.audiences.length > 0 ? new Set(o.audiences) : null
  const tokenSeconds = Math.max(1, Math.round(o.tokenDurationMs / 1000))
  const cookieSeconds = Math.max(1, Math.round(o.cookieDurationMs / 1000))

  async function ringFor (aud: string, purpose: TokenPurpose): Promise<KeyRing> {
    return await keys.ring(aud, purpose)
  }

  /** Signature (key by `kid` and audience, algorithm pinned per key) and claims; expiry is left to the caller. */
  async function verify (token: string, purpose: TokenPurpose): Promise<{ claims: Claims; key: JwsKey }> {
    const d = decodeJws(token)
    if (d === null) throw unauthorized('malformed token')
    const aud = d.payload.aud
    // The unverified audience only chooses the ring; a session token has exactly one.
    if (!Array.isArray(aud) || aud.length > 1 || (purpose === 'session' && aud.length !== 1)) throw unauthorized('a session token carries exactly one audience')
    const audience = audOf(d.payload)
    if (purpose === 'session' && allowed !== null && !allowed.has(audience)) throw unauthorized('audience not allowed', ErrorCodes.FORBIDDEN)
    const r = keys.ring(audience, purpose)
    const ring = r instanceof KeyRing ? r : await r
    const key = ring.pick(d.header.kid)
    if (key === undefined) throw unauthorized('unknown key id')
    if (d.header.alg !== key.alg) throw unauthorized('algorithm not allowed')
    if (!key.verify(d.input, d.signature)) throw unauthorized('invalid token')
    return { claims: checkClaims(d.payload, purpose, o.issuer, nowSeconds()), key }
  }

  function checkCreationAudience (aud: string): void {
    if (allowed === null || allowed.has(aud)) return
    throw new HttpError(403, 'forbidden', aud === '' ? 'an audience (site) is required' : `audience "${aud}" is not allowed`)
  }

  /** Signs session claims; `base` carries jti and auth_time over a refresh. */
  async function issueClaims (input: ClaimsInput, base?: Claims): Promise<Claims> {
    const { aud: rawAud, user, sess, ...extra } = input
    const aud = sessionAud(rawAud)
    checkCreationAudience(aud)
    const nowMs = Date.now()
    const now = Math.floor(nowMs / 1000)
    // Registered claims are the service's: neither the input nor the claims updater may change them.
    const fixed = {
      iss: o.issuer,
      iat: now,
      nbf: now,
      exp: now + tokenSeconds,
      jti: base?.jti ?? randomBytes(16).toString('base64url'),
      auth_time: base?.auth_time ?? nowMs / 1000,
      purpose: 'session' as const
    }
    let claims: Claims = { ...extra, aud: [aud], ...fixed }
    if (user !== undefined) claims.user = user
    if (sess === true) claims.sess = true
    if (o.claimsUpdater !== undefined) {
      const updated = await o.claimsUpdater(claims)
      if (updated === null || typeof updated !== 'object') throw new OptionsError('claimsUpdater', 'must return claims')
      const a = sessionAud(updated.aud)
      checkCreationAudience(a)
      claims = { ...updated, ...fixed, aud: [a] }
    }
    return claims
  }

  async function signSession (claims: Claims): Promise<{ token: string; key: JwsKey }> {
    const key = (await ringFor(audOf(claims), 'session')).signer
    return { token: signJws(key, claims), key }
  }

  /**
   * A cache entry for a token just verified or signed. Claims that do not come from parsing the token are copied
   * through JSON first: the entry then holds exactly what the token carries, and nothing the caller keeps.
   */
  function remember (token: string, claims: Claims, key: JwsKey, now: number, copy: boolean): CachedSession {
    const own = deepFreeze(copy ? JSON.parse(JSON.stringify(claims)) as Claims : claims)
    const u = own.user
    const entry: CachedSession = {
      token,
      claims: own,
      user: u !== null && typeof u === 'object' ? deepFreeze(new User(u)) : null,
      key,
      aud: audOf(own),
      // Never past `exp`, and never longer than a token lives (revocations are remembered that long).
      expiresAt: Math.min(own.exp * 1000, now + o.tokenDurationMs),
      checkedAt: now,
      subject: subjectOf(own),
      hit: false,
      slot: -1
    }
    cache.set(entry)
    return entry
  }

  /** True when the key that verified a cached token is still in its audience's ring (sync for a sync reader). */
  function keyCurrent (entry: CachedSession): boolean | Promise<boolean> {
    if (staticSessionKeys) return true
    const r = keys.ring(entry.aud, 'session')
    if (r instanceof KeyRing) return r.pick(entry.key.kid) === entry.key
    return r.then((ring) => ring.pick(entry.key.kid) === entry.key)
  }

  /** A cached entry that the fast check did not clear: expired, key gone, revoked, or due for a store lookup. */
  async function recheck (entry: CachedSession, now: number): Promise<CachedSession | undefined> {
    if (entry.expiresAt <= now || !(await keyCurrent(entry))) {
      cache.delete(entry.token)
      return undefined
    }
    if (revocations !== null) {
      const state = revocations.cached(entry.subject, entry.checkedAt, now)
      if (state === 'revoked' || (state === 'lookup' && await revocations.isRevoked(entry.subject))) {
        cache.delete(entry.token)
        throw revokedError()
      }
      entry.checkedAt = now
    }
    return entry
  }

  /**
   * Whether a verified token still authenticates: false while it is live, true when it has expired but its
   * cookie session may be refreshed; throws when it can no longer authenticate (expired in a URL or header, past
   * the cookie session's lifetime, idle too long).
   */
  function mustRefresh (claims: Claims, source: number, now: number): boolean {
    const nowS = Math.floor(now / 1000)
    if (claims.exp > nowS) return false
    // A token read from a URL or a header dies on time: it may have leaked through history, logs or a Referer.
    if (source !== COOKIE) throw unauthorized('token expired', ErrorCodes.TOKEN_EXPIRED)
    if (claims.auth_time! + cookieSeconds <= nowS) throw unauthorized('session expired', ErrorCodes.SESSION_EXPIRED)
    if (o.idleTimeoutMs > 0 && now - claims.iat * 1000 > o.idleTimeoutMs) throw unauthorized('session idle for too long', ErrorCodes.SESSION_EXPIRED)
    return true
  }

  /** A token not in the cache: verify, revocation, then either cache it or refresh it (cookie sessions only). */
  async function fresh (token: string, source: number, request: FastifyRequest, reply: FastifyReply): Promise<Session> {
    const { claims, key } = await verify(token, 'session')
    if (source === COOKIE) checkXsrf(request, claims.jti)
    if (revocations !== null && await revocations.isRevoked(subjectOf(claims))) throw revokedError()
    const now = Date.now()
    if (!mustRefresh(claims, source, now)) return remember(token, claims, key, now, false)
    const refreshed = await refresh(token, claims)
    setCookies(reply, refreshed.token, refreshed.claims)
    return remember(refreshed.token, refreshed.claims, refreshed.key, now, true)
  }

  async function refresh (token: string, claims: Claims): Promise<{ token: string; claims: Claims; key: JwsKey }> {
    // The cache only spares concurrent requests a second refresh; a cached result that has expired in turn is
    // refreshed again rather than handed out as an already-dead token.
    let next = refreshCache.get(token)
    if (next === undefined || next.exp <= nowSeconds()) {
      let pending = inflight.get(token)
      if (pending === undefined) {
        const { iat, nbf, exp, iss, jti, auth_time: at, purpose, ...input } = claims
        pending = issueClaims(input, claims).then((c) => { refreshCache.set(token, c); return c })
          .finally(() => inflight.delete(token))
        inflight.set(token, pending)
      }
      next = await pending
    }
    let signed = refreshedTokens.get(next)
    if (signed === undefined) {
      signed = await signSession(next)
      refreshedTokens.set(next, signed)
    }
    return { token: signed.token, claims: next, key: signed.key }
  }

  function cookieBase (claims?: Claims): CookieSerializeOptions {
    const base: CookieSerializeOptions = { path: '/', sameSite: o.sameSite, secure: o.secureCookies }
    if (claims !== undefined && claims.sess !== true) base.maxAge = cookieSeconds
    return base
  }

  function setCookies (reply: FastifyReply, token: string, claims: Claims): void {
    const base = cookieBase(claims)
    reply.setCookie(o.jwtCookieName, token, { ...base, httpOnly: true })
    reply.setCookie(o.xsrf.cookieName, claims.jti, { ...base, httpOnly: false })
  }

  /** The presented token and where it came from (query, header, cookie: the first one present). */
  function presented (request: FastifyRequest): { token: string; source: number } | null {
    const q = request.query as Record<string, unknown> | null | undefined
    const fromQuery = q !== null && typeof q === 'object' ? q[o.jwtQueryParam] : undefined
    if (typeof fromQuery === 'string' && fromQuery !== '') return { token: fromQuery, source: QUERY }
    const fromHeader = request.headers[o.jwtHeaderKey]
    if (typeof fromHeader === 'string' && fromHeader !== '') return { token: fromHeader, source: HEADER }
    const fromCookie = request.cookies?.[o.jwtCookieName]
    if (typeof fromCookie === 'string' && fromCookie !== '') return { token: fromCookie, source: COOKIE }
    return null
  }

  function session (request: FastifyRequest, reply: FastifyReply): Session | null | Promise<Session | null> {
    // Query, header, cookie: the first one present. Written out so that the hot path allocates nothing.
    let source = QUERY
    const q = request.query as Record<string, unknown> | null | undefined
    let token = q !== null && typeof q === 'object' ? q[o.jwtQueryParam] : undefined
    if (typeof token !== 'string' || token === '') {
      source = HEADER
      token = request.headers[o.jwtHeaderKey]
      if (typeof token !== 'string' || token === '') {
        source = COOKIE
        token = request.cookies?.[o.jwtCookieName]
        if (typeof token !== 'string' || token === '') return null
      }
    }
    const now = Date.now()
    const entry = cache.get(token as string)
    if (entry !== undefined && entry.expiresAt > now && keyCurrent(entry) === true &&
        (revocations === null || revocations.cached(entry.subject, entry.checkedAt, now) === 'ok')) {
      entry.hit = true
      if (source === COOKIE) checkXsrf(request, entry.claims.jti)
      if (allowed !== null && !allowed.has(entry.aud)) throw unauthorized('audience not allowed', ErrorCodes.FORBIDDEN)
      return validated(entry)
    }
    return slowSession(token as string, source, entry, now, request, reply)
  }

  async function slowSession (token: string, source: number, cached: CachedSession | undefined, now: number, request: FastifyRequest, reply: FastifyReply): Promise<Session> {
    const entry = cached === undefined ? undefined : await recheck(cached, now)
    if (entry === undefined) return await validated(await fresh(token, source, request, reply))
    entry.hit = true
    if (source === COOKIE) checkXsrf(request, entry.claims.jti)
    if (allowed !== null && !allowed.has(entry.aud)) throw unauthorized('audience not allowed', ErrorCodes.FORBIDDEN)
    return await validated(entry)
  }

  /** The validator's word on every request; synchronous when the validator is. */
  function validated (s: Session): Session | Promise<Session> {
    if (o.validator === undefined) return s
    const verdict = o.validator(s.token, s.claims)
    if (verdict === true) return s
    if (verdict !== null && typeof verdict === 'object' && typeof verdict.then === 'function') {
      return verdict.then((v) => { if (v !== true) throw rejectedByValidator(); return s })
    }
    throw rejectedByValidator()
  }

  async function issue (input: ClaimsInput): Promise<{ token: string; claims: Claims }> {
    const claims = await issueClaims(input)
    const { token, key } = await signSession(claims)
    remember(token, claims, key, Date.now(), true)
    return { token, claims }
  }

  return {
    cache,
    jwks: keys.jwks,

    create: issue,

    async parse (token, opts = {}) {
      const { claims } = await verify(token, 'session')
      if (revocations !== null && await revocations.isRevoked(subjectOf(claims))) throw revokedError()
      if (opts.allowExpired !== true && claims.exp <= nowSeconds()) throw unauthorized('token expired', ErrorCodes.TOKEN_EXPIRED)
      return claims
    },

    async set (reply, input) {
      const out = await issue(input)
      setCookies(reply, out.token, out.claims)
      return out
    },

    session,

    async get (request, reply) {
      return await session(request, reply)
    },

    reset (reply) {
      const base = cookieBase()
      reply.clearCookie(o.jwtCookieName, { ...base, httpOnly: true })
      reply.clearCookie(o.xsrf.cookieName, base)
    },

    async signPurpose (purpose, payload, ttlMs, aud) {
      const now = nowSeconds()
      const claims: Claims = {
        ...payload,
        aud: aud === undefined || aud === '' ? [] : [aud],
        iss: o.issuer,
        iat: now,
        nbf: now,
        exp: now + Math.max(1, Math.round(ttlMs / 1000)),
        jti: randomBytes(16).toString('base64url'),
        purpose
      }
      return signJws((await ringFor(aud ?? '', purpose)).signer, claims)
    },

    async verifyPurpose (purpose, token) {
      const { claims } = await verify(token, purpose)
      if (claims.exp <= nowSeconds()) throw unauthorized('token expired', ErrorCodes.TOKEN_EXPIRED)
      return claims
    },

    async revokePresented (request, everywhere) {
      if (revocations === null) return
      const found = presented(request)
      let claims: Claims
      try {
        if (found === null) throw unauthorized('not logged in', ErrorCodes.UNAUTHORIZED)
        claims = (await verify(found.token, 'session')).claims
      } catch (err) {
        // Logging out without a valid session only clears the cookies; ending "every session" needs one.
        if (everywhere || !(err instanceof HttpError)) throw err
        return
      }
      const nowS = Date.now() / 1000
      const endsAt = Math.max(claims.exp, claims.auth_time! + cookieSeconds) + LEEWAY_S
      if (everywhere) {
        // Ending every session takes a token that could still authenticate: the expiry checks of a request's
        // (a dead query token, or a cookie session past its lifetime or idle, signs nobody out).
        mustRefresh(claims, found!.source, Date.now())
        if (await revocations.isRevoked(subjectOf(claims))) throw revokedError()
        const id = claims.user?.id
        if (typeof id !== 'string') throw new HttpError(401, 'unauthorized', 'token carries no user')
        await revocations.revokeUser(id)
      }
      if (endsAt > nowS) await revocations.revokeSession(claims.jti, (endsAt - nowS) * 1000)
    }
  }
}
