/**
 * Reading a session token of a go-pkgz/auth v2 service (the `migration.goPkgz` option), before anything is done
 * with it: its layout (HS256, no `kid`, `aud` a string or a list of one, `user`, `sess_only`, no `purpose`) and
 * every check go-pkgz makes or a stricter one. go-pkgz pins no algorithm but HMAC, checks `exp` only outside
 * cookies, compares audiences ignoring case and never reads `iss`; here the algorithm is HS256 exactly, `exp` is
 * required and must be ahead, the audience is compared exactly, `iss` must be the root `issuer`, and a token that
 * carries a login handshake (go-pkgz's OAuth2 state) is no session.
 */
import { ErrorCodes } from '../../../lib/errors.js'
import { decodeJws, hmacKey, type DecodedJws } from '../base/jws.js'
import { isDate, LEEWAY_S, MAX_JTI_LENGTH, nowSeconds, unauthorized } from '../base/claims.js'
import type { AudienceRule } from '../base/audience.js'
import type { ResolvedGoPkgz } from '../base/types.js'
import type { UserData } from '../../../lib/user.js'

/** The Go service's secret per audience (`SecretReader`), as the `migration.goPkgz.secret` option resolves it. */
export type GoPkgzSecret = ResolvedGoPkgz['secret']

/** What a go-pkgz session token says, once it passed every check. */
export interface GoPkgzSession {
  user: UserData
  aud: string
  /** `sess_only`: the Go service's cookies were session-only. */
  sessionOnly: boolean
  /** The Go token's `jti` (its XSRF value). */
  jti: string
  exp: number
  /** When the Go token was made (`iat`, else `nbf`, else now): stands for the login time of the new session. */
  issuedAt: number
}

const MAX_FIELD_LENGTH = 2048
const USER_TEXT_FIELDS = ['picture', 'ip', 'email', 'role'] as const

/** True when `token` has go-pkgz's layout rather than this package's: no `purpose` claim (every token here has one). */
export function looksLikeGoPkgz (token: string): boolean {
  const d = decodeJws(token)
  return d !== null && d.payload.purpose === undefined
}

/** Verifies a go-pkgz session token; HttpError 401 `GATEHOUSE_TOKEN_INVALID` (or `GATEHOUSE_FORBIDDEN` for the audience). */
export async function readGoPkgzToken (token: string, secret: GoPkgzSecret, issuer: string, audiences: AudienceRule): Promise<GoPkgzSession> {
  const d = decodeJws(token)
  if (d === null) throw unauthorized('malformed token')
  // go-pkgz signs with HS256 and no key id; anything else did not come from it (alg none, RS256 with the secret).
  if (d.header.alg !== 'HS256' || d.header.kid !== undefined) throw unauthorized('algorithm not allowed')
  const aud = oneAudience(d.payload.aud)
  audiences.checkSession(aud)
  const key = await secret(aud)
  if (typeof key !== 'string' || key === '') throw unauthorized('no go-pkgz secret for this audience')
  if (!hmacKey('go-pkgz', key).verify(d.input, d.signature)) throw unauthorized('invalid token')
  return sessionOf(d, aud, issuer, nowSeconds())
}

/** go-pkgz writes a single audience as a string (`MarshalSingleStringAsArray = false`); a list of one is taken too. */
function oneAudience (aud: unknown): string {
  const one = Array.isArray(aud) && aud.length === 1 ? aud[0] : aud
  if (typeof one !== 'string' || one.trim() === '') throw unauthorized('a session token carries exactly one audience')
  return one
}

/** The claims of a token whose signature verified. */
function sessionOf (d: DecodedJws, aud: string, issuer: string, now: number): GoPkgzSession {
  const p = d.payload
  if (p.iss !== issuer) throw unauthorized('wrong issuer')
  if (!isDate(p.exp)) throw unauthorized('exp must be a numeric date')
  if (p.exp <= now) throw unauthorized('token expired', ErrorCodes.TOKEN_EXPIRED)
  for (const date of [p.nbf, p.iat]) {
    if (date !== undefined && !isDate(date)) throw unauthorized('iat and nbf must be numeric dates')
    if (isDate(date) && date > now + LEEWAY_S) throw unauthorized('token not valid yet')
  }
  if (typeof p.jti !== 'string' || p.jti === '' || p.jti.length > MAX_JTI_LENGTH) throw unauthorized('malformed claims')
  if (p.handshake !== undefined) throw unauthorized('a login handshake is not a session')
  if (p.sess_only !== undefined && typeof p.sess_only !== 'boolean') throw unauthorized('malformed claims')
  return {
    user: userOf(p.user),
    aud,
    sessionOnly: p.sess_only === true,
    jti: p.jti,
    exp: p.exp,
    issuedAt: isDate(p.iat) ? p.iat : isDate(p.nbf) ? p.nbf : now
  }
}

/** go-pkgz's `User`: name and id required (its middleware refuses a token without one), the rest typed or absent. */
function userOf (u: unknown): UserData {
  if (u === null || typeof u !== 'object' || Array.isArray(u)) throw unauthorized('the token carries no user')
  const v = u as Record<string, unknown>
  const text = (x: unknown): x is string => typeof x === 'string' && x.length <= MAX_FIELD_LENGTH
  if (!text(v.id) || v.id === '' || !text(v.name)) throw unauthorized('the token\'s user needs an id and a name')
  const user: UserData = { name: v.name, id: v.id }
  for (const k of USER_TEXT_FIELDS) {
    if (v[k] === undefined || v[k] === '') continue
    if (!text(v[k])) throw unauthorized('malformed user')
    user[k] = v[k]
  }
  if (v.attrs !== undefined && v.attrs !== null) {
    if (typeof v.attrs !== 'object' || Array.isArray(v.attrs)) throw unauthorized('malformed user')
    user.attrs = { ...(v.attrs as Record<string, unknown>) }
  }
  return user
}
