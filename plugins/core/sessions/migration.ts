/**
 * Moving the sessions of a go-pkgz/auth v2 service over (the `migration.goPkgz` option): a session token of the Go
 * service, from its cookie (with its XSRF rule: the XSRF cookie and header equal the token's `jti`) or from the
 * token header, is verified as strictly as go-pkgz does or more (go-pkgz-token.ts), taken once, and answered with
 * a new session of this package for the same user, audience and session-only flag: in new cookies for a cookie
 * token, in the token header of the answer for a header token. Every signed-in user of the Go service thus stays
 * signed in and moves to this package's tokens on their next request.
 *
 * "Once": a Go token is marked in the state store when it is exchanged, so that it makes one session, never two
 * (a copy of it taken from the browser cannot open a second one). Requests of the same browser that raced with
 * the exchange on this instance (an app firing several calls at once) are handed that same new session.
 */
import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { OptionsError } from '../../../lib/errors.js'
import { adaptFunction, checkKeys, keyList, optionString } from '../../../lib/options.js'
import type { StateStore } from '../../../lib/state-store.js'
import type { Audit } from '../../../lib/audit/audit.js'
import { clearReplyCookie, requestCookie } from '../base/cookie-jar.js'
import { unauthorized } from '../base/claims.js'
import { makeXsrfCheck } from './xsrf.js'
import { FROM_COOKIE, FROM_HEADER, type PresentedToken } from './token-reader.js'
import { readGoPkgzToken, type GoPkgzSecret, type GoPkgzSession } from '../keys/go-pkgz-token.js'
import { revokedError, subjectOf, type Revocations } from './revocation.js'
import type { AudienceRule } from '../base/audience.js'
import type { Issuer } from '../keys/issue.js'
import type { SessionCookies } from './cookies.js'
import type { VerifiedSessions } from './verified-sessions.js'
import type { CachedSession } from './session-cache.js'
import type { SessionList } from './sessions.js'
import type { MaybePromise, ResolvedGoPkgz, ResolvedOptions } from '../base/types.js'

/** Sessions of another service accepted during a move (`migration` group). */
export interface MigrationOptions {
  /**
   * Accept the session tokens of a go-pkgz/auth v2 service and exchange each, once, for a session of this package
   * (same user, audience and session-only flag). Set the root `issuer` to the Go service's `Issuer`. Keep it on
   * until the Go service's longest cookie lifetime (`CookieDuration`, 31 days by default) has passed since it
   * stopped issuing tokens. Default off: such tokens are refused.
   */
  goPkgz?: GoPkgzMigrationOptions | undefined
}

/** The Go service's token settings (`migration.goPkgz` group). */
export interface GoPkgzMigrationOptions {
  /**
   * The Go service's signing secret, whatever its length (its `SecretReader`): a string, or `(aud) => secret`
   * for a service that signed per audience (`AudSecrets`), sync or async. Required.
   */
  secret: string | ((aud: string) => MaybePromise<string>)
  /** The Go service's token cookie (`JWTCookieName`), read when it differs from `cookies.sessionName`. Default `JWT`. */
  cookieName?: string | undefined
  /** The Go service's XSRF cookie (`XSRFCookieName`), which a Go cookie token's `jti` must equal. Default `XSRF-TOKEN`. */
  xsrfCookieName?: string | undefined
}

export const MIGRATION_KEYS = keyList<MigrationOptions>({ goPkgz: true })
const GO_PKGZ_KEYS = keyList<GoPkgzMigrationOptions>({ secret: true, cookieName: true, xsrfCookieName: true })

/** Validates the `migration` group. Throws OptionsError naming the option. */
export function resolveMigration (value: unknown): { goPkgz: ResolvedGoPkgz | null } {
  if (value === undefined) return { goPkgz: null }
  const m = checkKeys(value, MIGRATION_KEYS, 'migration') as MigrationOptions
  if (m.goPkgz === undefined) return { goPkgz: null }
  const g = checkKeys(m.goPkgz, GO_PKGZ_KEYS, 'migration.goPkgz') as unknown as GoPkgzMigrationOptions
  let secret: GoPkgzSecret
  if (typeof g.secret === 'string') {
    // Any length: it is the Go service's, whatever it was; it only verifies, never signs.
    if (g.secret === '') throw new OptionsError('migration.goPkgz.secret', 'is an empty string (is the environment variable that holds it set?)')
    const s = g.secret
    secret = () => s
  } else {
    secret = adaptFunction<GoPkgzSecret>('migration.goPkgz.secret', g.secret, 'get', true)!
  }
  return {
    goPkgz: {
      secret,
      cookieName: optionString('migration.goPkgz.cookieName', g.cookieName) ?? 'JWT',
      xsrfCookieName: optionString('migration.goPkgz.xsrfCookieName', g.xsrfCookieName) ?? 'XSRF-TOKEN'
    }
  }
}

/** What an exchange needs of the token service. */
export interface MigrationParts {
  issuer: Issuer
  verified: VerifiedSessions
  cookies: SessionCookies
  revocations: Revocations | null
  list: SessionList | null
  audiences: AudienceRule
  store: StateStore
}

/** How long requests that raced with an exchange on this instance get its session, and how many are kept. */
const RACE_WINDOW_MS = 30_000
const RACE_ENTRIES = 1000

export class GoPkgzMigration {
  private readonly audit: Audit
  private readonly checkXsrf: (request: FastifyRequest, jti: string) => void
  /** Exchanges under way or just done, by the Go token: requests that raced with one get its session. */
  private readonly exchanged = new Map<string, { session: Promise<CachedSession>; jti: string; until: number }>()

  constructor (private readonly o: Pick<ResolvedOptions, 'audit' | 'cookies' | 'issuer' | 'tokenSources' | 'xsrf'>, private readonly s: ResolvedGoPkgz, private readonly p: MigrationParts) {
    this.audit = o.audit
    this.checkXsrf = makeXsrfCheck({ xsrf: o.xsrf, cookies: { ...o.cookies, xsrfName: s.xsrfCookieName } })
  }

  /** The Go service's token cookie, when it has another name than this package's and the request carries it. */
  goCookie (request: FastifyRequest): PresentedToken | undefined {
    if (this.s.cookieName === this.o.cookies.sessionName) return undefined
    const token = requestCookie(request, this.s.cookieName)
    return typeof token === 'string' && token !== '' ? { token, source: FROM_COOKIE } : undefined
  }

  /** Exchanges a presented go-pkgz token for a new session (set on the reply). HttpError 401 when it is refused. */
  async exchange ({ token, source }: PresentedToken, request: FastifyRequest, reply: FastifyReply): Promise<CachedSession> {
    // A token in a link ends up in logs and histories: the Go service's tokens move from cookies and headers only.
    if (source !== FROM_COOKIE && source !== FROM_HEADER) throw unauthorized('a go-pkgz token is taken from a cookie or the token header only')
    const now = Date.now()
    const raced = this.exchanged.get(token)
    if (raced !== undefined && raced.until > now) {
      if (source === FROM_COOKIE) this.checkXsrf(request, raced.jti)
      const entry = await raced.session
      this.deliver(reply, source, entry)
      return entry
    }
    const go = await readGoPkgzToken(token, this.s.secret, this.o.issuer, this.p.audiences)
    if (source === FROM_COOKIE) this.checkXsrf(request, go.jti)
    const session = this.issue(token, go, request, now)
    this.remember(token, go.jti, session, now)
    const entry = await session
    this.deliver(reply, source, entry)
    if (this.audit.on) {
      this.audit.emit(request, 'session.migrated', { reason: 'go_pkgz', userId: go.user.id, aud: go.aud, sessionOnly: go.sessionOnly, source: source === FROM_COOKIE ? 'cookie' : 'header' })
    }
    return entry
  }

  /** Marks the Go token taken (once, on every instance sharing the store), then signs the new session. */
  private async issue (token: string, go: GoPkgzSession, request: FastifyRequest, now: number): Promise<CachedSession> {
    const p = this.p
    const claims = await p.issuer.claims(
      { user: go.user, aud: go.aud, sess: go.sessionOnly },
      // A session of its own (new jti, and `started_at` now: the store's revocation epoch counts from it); its login
      // time is the Go token's, so `session.maxAge` and `revokeUser` count from it.
      { auth_time: go.issuedAt }
    )
    if (p.revocations !== null && await p.revocations.revoked(subjectOf(claims))) throw revokedError()
    const ttlMs = Math.max(1000, go.exp * 1000 - now)
    const key = 'gopkgz:' + createHash('sha256').update(token).digest('base64url')
    if (!await p.store.setIfAbsent(key, '1', ttlMs)) throw unauthorized('this go-pkgz token was exchanged already')
    const signed = await p.issuer.sign(claims)
    const entry = p.verified.remember(signed.token, claims, signed.key, now, true)
    p.list?.sighted(entry, request, now)
    return entry
  }

  private remember (token: string, jti: string, session: Promise<CachedSession>, now: number): void {
    // A refused exchange is not remembered: the next request is judged afresh.
    session.catch(() => { this.exchanged.delete(token) })
    if (this.exchanged.size >= RACE_ENTRIES) {
      for (const [k, v] of this.exchanged) if (v.until <= now || this.exchanged.size >= RACE_ENTRIES) this.exchanged.delete(k)
    }
    this.exchanged.set(token, { session, jti, until: now + RACE_WINDOW_MS })
  }

  /** The new token where the client will look: cookies for a cookie session, the token header otherwise. */
  private deliver (reply: FastifyReply, source: PresentedToken['source'], entry: CachedSession): void {
    if (source === FROM_COOKIE) {
      this.p.cookies.set(reply, entry.token, entry.claims)
      this.clearGoCookies(reply)
    } else if (this.o.tokenSources.header !== null) {
      reply.header(this.o.tokenSources.header, entry.token)
    }
  }

  /** The Go service's cookies, when they have other names than this package's: gone once their session moved. */
  private clearGoCookies (reply: FastifyReply): void {
    const names = [this.s.cookieName, this.s.xsrfCookieName].filter((n) => n !== this.o.cookies.sessionName && n !== this.o.cookies.xsrfName)
    const domain = this.o.cookies.domain
    for (const name of names) clearReplyCookie(reply, name, domain === undefined ? { path: '/' } : { path: '/', domain })
  }
}
