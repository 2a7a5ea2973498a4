/**
 * The one rule for whether a verified session token can still authenticate, used by every request (the session
 * reader) and by logout's "sign out everywhere" (revoke-presented.ts): a token that can no longer sign its user in
 * must not sign its user out everywhere either.
 */
import { ErrorCodes } from '../../../lib/errors.js'
import { unauthorized } from '../base/claims.js'
import { FROM_COOKIE, FROM_QUERY, type TokenSource } from './token-reader.js'
import type { Claims } from '../base/types.js'

/**
 * The session's limits: absolute lifetime from login, the idle timeout (0 when off), and whether a token outside a
 * cookie (header, bearer, the app's extractor) may be refreshed too (`tokenSources.headerRefresh`).
 */
export interface SessionLifetime { readonly maxAgeSeconds: number; readonly idleTimeoutMs: number; readonly headerRefresh: boolean }

/**
 * False while the token is live; true when it has expired but, as a cookie session (or a header one under
 * `headerRefresh`) within its lifetime and idle timeout, may be refreshed. Throws HttpError 401 when it can no
 * longer authenticate: expired in a URL or a header, a registered client's access token, past the session's
 * lifetime, or idle for too long.
 */
export function mustRefresh (claims: Claims, source: TokenSource, now: number, limits: SessionLifetime): boolean {
  const nowS = Math.floor(now / 1000)
  if (claims.exp > nowS) return false
  // A client's access token is renewed by its refresh grant only (rotating, with reuse detection, within the
  // family's own lifetimes): never by presenting it expired, whatever `headerRefresh` says.
  if (claims.client_id !== undefined) throw unauthorized('token expired: a client renews its tokens at the token endpoint', ErrorCodes.TOKEN_EXPIRED)
  // A token read from a URL dies on time: it may have leaked through history, logs or a Referer. So does one from a
  // header unless the app asked for header refresh (the new token then goes back in the X-JWT response header).
  if (source !== FROM_COOKIE && (source === FROM_QUERY || !limits.headerRefresh)) throw unauthorized('token expired', ErrorCodes.TOKEN_EXPIRED)
  if (claims.auth_time! + limits.maxAgeSeconds <= nowS) throw unauthorized('session expired', ErrorCodes.SESSION_EXPIRED)
  if (limits.idleTimeoutMs > 0 && now - claims.iat * 1000 > limits.idleTimeoutMs) throw unauthorized('session idle for too long', ErrorCodes.SESSION_EXPIRED)
  return true
}
