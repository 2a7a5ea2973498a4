/**
 * The two ends of every login, whatever the provider: the prelude the mount runs before a provider's `/login`
 * sees the request (throttling, the cross-site guard, the common fields), and `completeLogin`, which turns the
 * user a provider found into a session.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { HttpError } from '../../../lib/errors.js'
import { readLoginRequest, requestFields, type LoginRequest } from '../../../lib/login/login-request.js'
import { User, type UserData } from '../../../lib/user.js'
import { requestLogger } from '../../../lib/logging/logger.js'
import type { CoreInternals } from './internals.js'
import type { Claims, LoginResult } from '../base/types.js'
import { requestCookie } from '../base/cookie-jar.js'
import { providerOfRoute } from '../sessions/sessions.js'
import { checkArrivalOrigin } from './url-check.js'
import { audOf } from '../base/claims.js'
import { userIdOf } from '../sessions/session-audit.js'
import { recordFactor } from '../../../lib/login/step-up.js'
import { checkCaptcha } from './captcha.js'
import { setLastLoginMethod } from '../base/last-login.js'

/**
 * Throws HttpError 403 when `audiences` is set and `aud` is not in it, or is absent where `required` (checked
 * before anything is sent or stored).
 */
export function checkAudience (core: CoreInternals, aud: string | undefined, required = true): void {
  if (aud === undefined && !required) return
  core.audiences.checkLogin(aud)
}

/** How the prelude treats one request (see `MountOptions`). */
export interface PreludeRules {
  /** Counted against `rateLimit.login`. */
  counted: boolean
  /** The request continues a login begun earlier, whose audience that step kept: an audience is not required. */
  continues: boolean
  /** The provider whose login it is (the `captcha` option may guard only some). */
  provider: string
}

/**
 * The common part of a login request, checked: counted as a login request of the client (`rateLimit.login`,
 * 429), `aud`/`site`, `from` and `session`/`sess` read (400 when malformed), the audience allowed (403), and
 * `from` kept only when it may be followed. The cross-site guard runs before this, in the mount.
 */
export async function loginPrelude (core: CoreInternals, request: FastifyRequest, rules: PreludeRules): Promise<LoginRequest> {
  if (rules.counted) await core.throttle.loginRequest(request)
  checkArrivalOrigin(core, request)
  // The route's query schema (mount.ts) ran first; its verdict is given here, once the request is counted. The
  // fields' own reading comes first so that a refusal says what it always said (`from must be given once`).
  const login = readLoginRequest(requestFields(request))
  const invalid = request.validationError
  if (invalid !== undefined && invalid !== null) throw new HttpError(400, 'bad request', invalid.message)
  checkAudience(core, login.aud, !rules.continues)
  // A request that starts a login shows its solved captcha before the provider sees it (plugins/core/signin/captcha.ts).
  const captcha = core.options.captcha
  if (captcha !== undefined && rules.counted && !rules.continues) await checkCaptcha(core, captcha, request, rules.provider)
  // A `from` that may not be followed is dropped here, so that no provider carries it anywhere.
  return { ...login, from: followable(core, request, login.from) }
}

/**
 * `from` when the redirect policy allows it; a refused one is dropped (the login ends with the user as JSON)
 * and logged with the reason, since it is most often a missing `allowedRedirectHosts` entry.
 */
function followable (core: CoreInternals, request: FastifyRequest, from: string | undefined): string | undefined {
  if (from === undefined) return undefined
  const verdict = core.judgeRedirect(from)
  if (verdict.refused !== undefined) {
    requestLogger(core.logger, request).logf('[WARN] login: from=%s is not followed: %s', from, verdict.refused)
  }
  return verdict.to
}

/**
 * Finishes any login: avatar through the proxy, session cookies, then a redirect to `from` when it is allowed,
 * else the user as JSON.
 */
export async function completeLogin (core: CoreInternals, request: FastifyRequest, reply: FastifyReply, result: LoginResult): Promise<FastifyReply> {
  const user: UserData = { ...result.user }
  const picture = await savedPicture(core, request, user.id, result.avatar)
  if (picture !== undefined) user.picture = picture
  else delete user.picture
  await endPriorSession(core, request)
  const { claims } = await core.tokens.set(reply, { user, aud: result.aud, sess: result.sessionOnly === true })
  if (result.secondFactor !== undefined) {
    // A session whose factor could not be recorded is not handed out: the cookies just set are taken back.
    await recordFactor(core.stateStore, claims.jti, result.secondFactor, confirmedAt(result.secondFactorAt)).catch((err: unknown) => { core.tokens.reset(reply); throw err })
    // Trust is a convenience: a store that cannot record it costs the user the shortcut, never the login.
    if (result.trustDevice === true) {
      await core.trustedDevices?.remember(request, reply, userIdOf(claims) ?? user.id, result.secondFactor).catch((err: unknown) => {
        requestLogger(core.logger, request).logf('[WARN] login: this browser was not trusted: %s', err instanceof Error ? err.message : String(err))
      })
    }
  }
  const provider = providerOfRoute(request, core.options, core.providers)
  await core.sessions?.login(request, claims, provider)
  // The method the user chose: after a second factor, the first factor's provider, not the second factor's route.
  const method = result.method ?? provider
  if (method !== null) setLastLoginMethod(core.options.lastLoginMethod, reply, method)
  const audit = core.options.audit
  if (audit.on) {
    audit.emit(request, 'login.succeeded', {
      reason: 'session_issued', provider: provider ?? undefined, userId: userIdOf(claims), aud: audOf(claims), sessionOnly: claims.sess === true
    })
  }
  const to = core.safeRedirect(result.from)
  // 303: the browser follows with a GET whatever the callback's method was (Apple's form_post is a POST; a 307 would replay it).
  if (to !== undefined) return reply.redirect(to, 303)
  // The claims updater may have shaped the user (role, attrs): answer with what the session carries.
  return reply.send(new User(claims.user ?? user))
}

/** When a login's second factor was confirmed: the time it gives, never ahead of now; now when it gives none. */
function confirmedAt (at: number | undefined): number {
  const now = Date.now()
  return typeof at === 'number' && Number.isFinite(at) ? Math.min(at, now) : now
}

/**
 * Ends, server-side, the session the browser held before this sign-in (its session cookie; ASVS 5.0 7.2.4): the new
 * session replaces it in the browser, and a copy of the old token taken earlier (another user's session on a shared
 * computer, a session copied out of this browser) does not live on beside it. The old token is verified first, an
 * expired one included (it could still be refreshed); a token that does not verify, or is ended already, ends
 * nothing. Without server-side revocation (`revocation: false`) there is nothing to end it in.
 */
async function endPriorSession (core: CoreInternals, request: FastifyRequest): Promise<void> {
  const revocations = core.revocations
  if (revocations === null) return
  const token = requestCookie(request, core.options.cookies.sessionName)
  if (token === undefined || token === '') return
  let prior: Claims
  try {
    prior = await core.tokens.parse(token, { allowExpired: true })
  } catch (err) {
    // A cookie that is no session of ours (forged, of another key, ended already) has nothing to end; a store that
    // cannot answer fails the sign-in (503) as it would a moment later.
    if (err instanceof HttpError && err.statusCode < 500) return
    throw err
  }
  await revocations.revokeSession(prior.jti)
  const audit = core.options.audit
  if (audit.on) audit.emit(request, 'session.revoked', { reason: 'sign_in', by: 'sign_in', scope: 'session', userId: userIdOf(prior), aud: audOf(prior) })
}

/**
 * The user's picture link through the avatar proxy. Without a proxy a provider's picture link would point the
 * browser at a third party: none then. A failing proxy costs the user a picture, never the login.
 */
async function savedPicture (core: CoreInternals, request: FastifyRequest, userId: string, source: LoginResult['avatar']): Promise<string | undefined> {
  if (core.avatar === null) return undefined
  try {
    return await core.avatar.save(userId, source ?? {})
  } catch (err) {
    requestLogger(core.logger, request).logf('[WARN] avatar for %s not saved: %s', userId, err instanceof Error ? err.message : String(err))
    return undefined
  }
}
