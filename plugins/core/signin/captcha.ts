/**
 * The captcha check of the login prelude (`captcha` option): one place for every provider, built-in or
 * self-implemented. It runs on a request that starts a login (counted, not continuing one begun earlier: a
 * confirmation link, a passkey's answer, a second factor are not asked again), after the login count and before
 * the provider sees the request, so no credential checker, mail or redirect runs for a request without a solved
 * captcha. A refused token counts as a failed attempt of the client under the lockout (`rateLimit.failures`), so a
 * bot that grinds tokens locks its own address like one that guesses passwords.
 */
import type { FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError } from '../../../lib/errors.js'
import { MAX_CAPTCHA_TOKEN, type CaptchaVerdict, type ResolvedCaptcha } from '../../../lib/captcha/verifier.js'
import { requestFields } from '../../../lib/login/login-request.js'
import type { CoreInternals } from './internals.js'

/** Checks the captcha of a login request of `provider`: 400 without a token, 403 refused, 503 when it cannot tell. */
export async function checkCaptcha (core: CoreInternals, captcha: ResolvedCaptcha, request: FastifyRequest, provider: string): Promise<void> {
  if (!captcha.guards(provider)) return
  const token = tokenOf(requestFields(request)[captcha.field], captcha.field)
  const hostname = new URL(core.options.url).hostname
  // The lockout's account for a captcha is the client itself: its failures lock the address, never a user.
  await core.throttle.guard(request, `captcha/${provider}:${core.throttle.clientKey(request)}`, async () => {
    let verdict: CaptchaVerdict
    try {
      verdict = await captcha.verify({ token, remoteIp: request.ip, provider, hostname })
    } catch (err) {
      if (err instanceof HttpError) throw err
      throw new HttpError(503, 'service unavailable', 'the captcha could not be checked; try again', ErrorCodes.UNAVAILABLE, { cause: err })
    }
    const ok = typeof verdict === 'boolean' ? verdict : verdict?.ok === true
    if (ok) return
    const reason = typeof verdict === 'object' && typeof verdict?.reason === 'string' ? verdict.reason.slice(0, 64) : 'invalid'
    throw new HttpError(403, 'forbidden', `captcha refused: ${reason}`, ErrorCodes.CAPTCHA, { reason: 'captcha' })
  })
}

function tokenOf (value: unknown, field: string): string {
  if (value === undefined || value === '') throw new HttpError(400, 'bad request', `a solved captcha is required (field ${field})`, ErrorCodes.CAPTCHA, { reason: 'captcha' })
  if (typeof value !== 'string' || value.length > MAX_CAPTCHA_TOKEN) throw new HttpError(400, 'bad request', `${field} must be one captcha token`, ErrorCodes.CAPTCHA, { reason: 'captcha' })
  return value
}
