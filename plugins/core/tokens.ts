/**
 * The token service. fast-jwt (the engine under @fastify/jwt) is used directly because the secret differs per
 * audience and per token purpose, which @fastify/jwt's one-secret-per-instance model does not express.
 * HS256 is the only algorithm accepted; expiry and not-before are checked here against Date.now() so that
 * refresh can tell "expired but refreshable" from "bad", and so tests can move the clock.
 */
import { randomBytes } from 'node:crypto'
import { createDecoder, createSigner, createVerifier, TokenError } from 'fast-jwt'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { CookieSerializeOptions } from '@fastify/cookie'
import { ErrorCodes, HttpError } from '../../lib/errors.js'
import { makeXsrfCheck } from '../../hooks/xsrf.js'
import type { ResolvedOptions } from './types.js'
import { MemoryRefreshCache } from './refresh-cache.js'
import type { Claims, ClaimsInput, TokenPurpose, TokenService } from './types.js'

const ALG = 'HS256'
/** Seconds of clock skew tolerated for `nbf`/`iat`. */
const LEEWAY_S = 5
const MAX_TOKEN_LENGTH = 8192

type Sign = (payload: Record<string, unknown>) => string
type Verify = (token: string) => Record<string, unknown>

const unauthorized = (details: string, code: string = ErrorCodes.TOKEN_INVALID): HttpError => new HttpError(401, 'unauthorized', details, code)

export function createTokenService (o: ResolvedOptions): TokenService {
  const decode = createDecoder({ complete: false })
  const signers = new BoundedMap<string, Sign>(64)
  const verifiers = new BoundedMap<string, Verify>(64)
  const refreshCache = o.refreshCache ?? new MemoryRefreshCache()
  const inflight = new Map<string, Promise<Claims>>()
  const checkXsrf = makeXsrfCheck(o)
  const tokenSeconds = Math.max(1, Math.round(o.tokenDurationMs / 1000))
  const cookieSeconds = Math.max(1, Math.round(o.cookieDurationMs / 1000))

  // fast-jwt keeps a given iat (noTimestamp would drop it). Purposes other than session get a derived key, so even a bug in the purpose check could not let one
  // kind of token pass as another.
  async function secretFor (aud: string, purpose: TokenPurpose): Promise<string> {
    const s = o.secret(aud)
    const secret = typeof s === 'string' ? s : await s
    if (typeof secret !== 'string' || secret === '') throw unauthorized('no secret for this audience', ErrorCodes.UNAUTHORIZED)
    return purpose === 'session' ? secret : `${purpose}:${secret}`
  }

  function signerFor (secret: string): Sign {
    let s = signers.get(secret)
    if (s === undefined) {
      s = createSigner({ key: secret, algorithm: ALG }) as Sign
      signers.set(secret, s)
    }
    return s
  }

  function verifierFor (secret: string): Verify {
    let v = verifiers.get(secret)
    if (v === undefined) {
      v = createVerifier({ key: secret, algorithms: [ALG], cache: 1000, ignoreExpiration: true, ignoreNotBefore: true }) as Verify
      verifiers.set(secret, v)
    }
    return v
  }

  /** Signature, algorithm and purpose; expiry is left to the caller. */
  async function verify (token: string, purpose: TokenPurpose): Promise<Claims> {
    if (typeof token !== 'string' || token === '' || token.length > MAX_TOKEN_LENGTH) throw unauthorized('malformed token')
    let payload: Record<string, unknown>
    try { payload = decode(token) } catch { throw unauthorized('malformed token') }
    if (payload === null || typeof payload !== 'object') throw unauthorized('malformed token')
    const secret = await secretFor(firstAud(payload.aud), purpose)
    let claims: Record<string, unknown>
    try {
      claims = verifierFor(secret)(token)
    } catch (err) {
      throw unauthorized(err instanceof TokenError && err.code === TokenError.codes.invalidAlgorithm ? 'algorithm not allowed' : 'invalid token')
    }
    if (claims.purpose !== purpose) throw unauthorized('wrong token purpose')
    if (claims.iss !== o.issuer) throw unauthorized('wrong issuer')
    if (!Array.isArray(claims.aud) || typeof claims.exp !== 'number' || typeof claims.jti !== 'string') throw unauthorized('malformed claims')
    if (typeof claims.nbf === 'number' && claims.nbf > nowSeconds() + LEEWAY_S) throw unauthorized('token not valid yet')
    return claims as Claims
  }

  function checkAudience (aud: string[]): void {
    if (o.audiences.length === 0) return
    if (aud.length === 0) throw new HttpError(403, 'forbidden', 'an audience (site) is required')
    for (const a of aud) if (!o.audiences.includes(a)) throw new HttpError(403, 'forbidden', `audience "${a}" is not allowed`)
  }

  /** Signs session claims; `base` carries jti and auth_time over a refresh. */
  async function issue (input: ClaimsInput, base?: Claims): Promise<{ token: string; claims: Claims }> {
    const { aud: rawAud, user, sess, ...extra } = input
    const aud = normalizeAud(rawAud)
    checkAudience(aud)
    const now = nowSeconds()
    let claims: Claims = {
      ...extra,
      aud,
      iss: o.issuer,
      iat: now,
      nbf: now,
      exp: now + tokenSeconds,
      jti: base?.jti ?? randomBytes(16).toString('base64url'),
      auth_time: base?.auth_time ?? now,
      purpose: 'session'
    }
    if (user !== undefined) claims.user = user
    if (sess === true) claims.sess = true
    if (o.claimsUpdater !== undefined) {
      claims = await o.claimsUpdater(claims)
      if (claims === null || typeof claims !== 'object') throw new Error('claimsUpdater must return claims')
      // The updater may add data; it may not turn a session token into something else.
      claims.purpose = 'session'
      claims.aud = normalizeAud(claims.aud)
      checkAudience(claims.aud)
    }
    return { token: await sign(claims), claims }
  }

  async function sign (claims: Claims): Promise<string> {
    return signerFor(await secretFor(firstAud(claims.aud), claims.purpose))(claims)
  }

  function setCookies (reply: FastifyReply, token: string, claims: Claims): void {
    const base: CookieSerializeOptions = { path: '/', sameSite: o.sameSite, secure: o.secureCookies }
    if (claims.sess !== true) base.maxAge = cookieSeconds
    reply.setCookie(o.jwtCookieName, token, { ...base, httpOnly: true })
    reply.setCookie(o.xsrf.cookieName, claims.jti, { ...base, httpOnly: false })
  }

  function readToken (request: FastifyRequest): { token: string; source: 'query' | 'header' | 'cookie' } | null {
    const q = request.query as Record<string, unknown> | undefined
    const fromQuery = q !== null && typeof q === 'object' ? q[o.jwtQueryParam] : undefined
    if (typeof fromQuery === 'string' && fromQuery !== '') return { token: fromQuery, source: 'query' }
    const fromHeader = request.headers[o.jwtHeaderKey]
    if (typeof fromHeader === 'string' && fromHeader !== '') return { token: fromHeader, source: 'header' }
    const fromCookie = request.cookies?.[o.jwtCookieName]
    if (typeof fromCookie === 'string' && fromCookie !== '') return { token: fromCookie, source: 'cookie' }
    return null
  }

  async function refresh (token: string, claims: Claims): Promise<Claims> {
    // The cache only spares concurrent requests a second refresh; a cached result that has expired in turn is
    // refreshed again rather than handed out as an already-dead token.
    const cached = refreshCache.get(token)
    if (cached !== undefined && cached.exp > nowSeconds()) return cached
    let pending = inflight.get(token)
    if (pending === undefined) {
      const { iat, nbf, exp, iss, jti, auth_time: at, purpose, ...input } = claims
      pending = issue(input, claims).then(({ claims: fresh }) => { refreshCache.set(token, fresh); return fresh })
        .finally(() => inflight.delete(token))
      inflight.set(token, pending)
    }
    return await pending
  }

  return {
    create: issue,

    async parse (token, opts = {}) {
      const claims = await verify(token, 'session')
      if (opts.allowExpired !== true && claims.exp <= nowSeconds()) throw unauthorized('token expired', ErrorCodes.TOKEN_EXPIRED)
      return claims
    },

    async set (reply, input) {
      const out = await issue(input)
      setCookies(reply, out.token, out.claims)
      return out
    },

    async get (request, reply) {
      const found = readToken(request)
      if (found === null) return null
      let claims = await verify(found.token, 'session')
      if (found.source === 'cookie') checkXsrf(request, claims.jti)
      if (o.audiences.length > 0 && !claims.aud.some((a) => o.audiences.includes(a))) throw unauthorized('audience not allowed', ErrorCodes.FORBIDDEN)
      let token = found.token
      const now = nowSeconds()
      if (claims.exp <= now) {
        const loginAt = typeof claims.auth_time === 'number' ? claims.auth_time : claims.iat
        if (loginAt + cookieSeconds <= now) throw unauthorized('session expired', ErrorCodes.SESSION_EXPIRED)
        claims = await refresh(found.token, claims)
        token = await sign(claims)
        if (found.source === 'cookie') setCookies(reply, token, claims)
        else reply.header(o.jwtHeaderKey, token)
      }
      if (o.validator !== undefined && (await o.validator(token, claims)) !== true) throw unauthorized('rejected by validator', ErrorCodes.UNAUTHORIZED)
      return { token, claims }
    },

    reset (reply) {
      const base: CookieSerializeOptions = { path: '/', sameSite: o.sameSite, secure: o.secureCookies }
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
      return await sign(claims)
    },

    async verifyPurpose (purpose, token) {
      const claims = await verify(token, purpose)
      if (claims.exp <= nowSeconds()) throw unauthorized('token expired', ErrorCodes.TOKEN_EXPIRED)
      return claims
    }
  }
}

function nowSeconds (): number { return Math.floor(Date.now() / 1000) }

function firstAud (aud: unknown): string {
  if (typeof aud === 'string') return aud
  return Array.isArray(aud) && typeof aud[0] === 'string' ? aud[0] : ''
}

function normalizeAud (aud: unknown): string[] {
  if (aud === undefined || aud === null || aud === '') return []
  if (typeof aud === 'string') return [aud]
  if (Array.isArray(aud) && aud.every((a) => typeof a === 'string')) return aud.filter((a) => a !== '')
  throw new HttpError(400, 'bad request', 'aud must be a string')
}

/** Map with a size bound; oldest insertion evicted first. */
class BoundedMap<K, V> extends Map<K, V> {
  constructor (private readonly max: number) { super() }
  override set (key: K, value: V): this {
    if (this.size >= this.max && !this.has(key)) {
      const oldest = this.keys().next().value
      if (oldest !== undefined) this.delete(oldest)
    }
    return super.set(key, value)
  }
}
