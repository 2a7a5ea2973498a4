/**
 * The login handshake: what the browser carries between `/login` and `/callback`.
 *
 * `/login` signs `{state, PKCE verifier, nonce, from, site, session}` as a short-lived token of purpose
 * `handshake` (it can never pass for a session token) and sets it in an HttpOnly cookie whose Path is the
 * provider's own routes, so it is sent only back to this provider's callback. The `state` parameter must equal
 * the one inside the cookie (binding the callback to the browser that started the login), and each state is
 * accepted once (remembered in the state store, shared between instances when it is Redis): a replayed
 * callback fails even when the attacker kept the cookie.
 *
 * A state is remembered only once the callback is otherwise usable (its cookie verifies, the state matches it,
 * the caller's own checks pass, e.g. a code is present), and counted for the client that sent it, so callbacks
 * that are not logins store nothing and one client cannot fill the store.
 */
import { randomBytes } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type {} from '@fastify/cookie'
import type { ProviderKit } from '../../plugins/core/kit.js'
import { ErrorCodes, HttpError } from '../../lib/errors.js'
import { safeEqual } from '../../lib/compare.js'
import type { StateStore } from '../../lib/state-store.js'

/** Default lifetime of a handshake: time the user may spend on the provider's pages. */
export const DEFAULT_HANDSHAKE_TTL_MS = 10 * 60_000

/** What a handshake token carries (was `p`, `st`, `cv`, `n`, `sess` in 0.x tokens). */
export interface Handshake {
  /** Provider name: a handshake of one provider is refused by another. */
  provider: string
  /** Value sent as `state`. */
  state: string
  /** PKCE code verifier, when the provider takes PKCE. */
  codeVerifier?: string | undefined
  /** OIDC nonce, when the provider is OIDC. */
  nonce?: string | undefined
  /** Where the browser goes after the login (already checked against the redirect policy). */
  from?: string | undefined
  /** Audience (site id) of the session. */
  site?: string | undefined
  /** Session-only cookies. */
  sessionOnly?: boolean | undefined
}

/** 32 random bytes, base64url: for state, nonce and a PKCE verifier (43 chars, within RFC 7636's 43..128). */
export function randomToken (): string {
  return randomBytes(32).toString('base64url')
}

export interface HandshakeCookie {
  name: string
  path: string
  /**
   * `lax` for redirect callbacks. A `form_post` callback (Apple) is a cross-site POST, which carries no Lax
   * cookie, so there it is `none` (browsers take that only with Secure). Without Secure (plain-http
   * development) the attribute is left out, which Chromium treats as Lax but still sends on a top-level POST
   * within two minutes of the cookie being set.
   */
  sameSite: 'lax' | 'none' | undefined
}

/** Cookie name and path of a provider's handshake. */
export function handshakeCookie (kit: ProviderKit, provider: string, formPost: boolean): HandshakeCookie {
  return {
    name: `gatehouse-oauth2-${provider}`,
    path: `${kit.authPrefix}/${provider}`,
    sameSite: !formPost ? 'lax' : kit.cookies.secure ? 'none' : undefined
  }
}

export async function setHandshake (kit: ProviderKit, reply: FastifyReply, cookie: HandshakeCookie, hs: Handshake, ttlMs: number): Promise<void> {
  const token = await kit.loginState.sign({ ...hs }, ttlMs)
  reply.setCookie(cookie.name, token, {
    path: cookie.path,
    httpOnly: true,
    secure: kit.cookies.secure,
    sameSite: cookie.sameSite,
    maxAge: Math.ceil(ttlMs / 1000)
  })
}

/** Removes the cookie: every callback, good or bad, ends the handshake. */
export function clearHandshake (kit: ProviderKit, reply: FastifyReply, cookie: HandshakeCookie): void {
  reply.clearCookie(cookie.name, { path: cookie.path, httpOnly: true, secure: kit.cookies.secure, sameSite: cookie.sameSite })
}

/**
 * Checks the callback's `state` against the browser's handshake cookie, runs `usable` (the caller's own checks,
 * which throw to refuse), and only then consumes the state. A missing `state` is a 400
 * (`GATEHOUSE_BAD_REQUEST`); a missing cookie a 400 and an expired, forged or foreign one a 403
 * (`GATEHOUSE_HANDSHAKE`); a `state` other than the cookie's a 403 (`GATEHOUSE_STATE_MISMATCH`); a state
 * already used a 403 (`GATEHOUSE_ALREADY_USED`).
 */
export async function takeHandshake (
  kit: ProviderKit, request: FastifyRequest, cookie: HandshakeCookie, provider: string, state: string | undefined, used: StateStore,
  usable: () => void = () => {}
): Promise<Handshake> {
  if (state === undefined || state === '') throw new HttpError(400, 'missing state', 'the provider did not return the state parameter')
  // Where the user starts this provider's login again.
  const again = `start again at ${kit.authPrefix}/${provider}/login`
  const token = request.cookies?.[cookie.name]
  if (token === undefined || token === '') throw new HttpError(400, 'no login in progress', `the login handshake cookie is missing; ${again}`, ErrorCodes.HANDSHAKE)
  let claims: Record<string, unknown>
  try {
    claims = await kit.loginState.verify(token)
  } catch {
    throw new HttpError(403, 'login handshake expired or invalid', again, ErrorCodes.HANDSHAKE)
  }
  if (claims.provider !== provider || typeof claims.state !== 'string') throw new HttpError(403, 'login handshake expired or invalid', 'the handshake belongs to another provider', ErrorCodes.HANDSHAKE)
  if (!safeEqual(state, claims.state)) throw new HttpError(403, 'state mismatch', 'the callback does not belong to the login this browser started', ErrorCodes.STATE_MISMATCH)
  usable()
  // Remembered until the handshake would have expired anyway; after that the signature check refuses it.
  const ttlMs = Math.max(1000, (typeof claims.exp === 'number' ? claims.exp * 1000 : Date.now() + DEFAULT_HANDSHAKE_TTL_MS) - Date.now())
  if (!await used.setIfAbsent(`oauth2-state:${provider}:${claims.state}`, '1', ttlMs, { client: kit.throttle.clientKey(request) })) throw new HttpError(403, 'state already used', 'this login callback was already processed', ErrorCodes.ALREADY_USED)
  return claims as unknown as Handshake
}
