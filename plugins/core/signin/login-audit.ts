/**
 * The audit of the login routes' decisions the mount makes for every provider: a refused login or callback
 * (`login.failed`, with the stable reason of the error that ended it) and a refused cross-site request
 * (`cross_site.refused`). The providers' own decisions (a session, a second factor, a confirmation sent) are
 * audited where they are made.
 */
import type { FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError } from '../../../lib/errors.js'
import { LockedOutError } from '../../../lib/throttle/lockout.js'
import type { CrossSiteRefusedEvent } from '../../../lib/audit/events.js'
import type { CoreInternals } from './internals.js'

const FAILURES: Record<string, string> = {
  [ErrorCodes.CREDENTIALS]: 'bad_credentials',
  [ErrorCodes.RATE_LIMITED]: 'throttled',
  [ErrorCodes.STATE_MISMATCH]: 'state_mismatch',
  [ErrorCodes.HANDSHAKE]: 'handshake',
  [ErrorCodes.ALREADY_USED]: 'already_used',
  [ErrorCodes.CROSS_SITE]: 'cross_site',
  [ErrorCodes.FORBIDDEN]: 'forbidden',
  [ErrorCodes.BAD_REQUEST]: 'bad_request',
  [ErrorCodes.NOT_FOUND]: 'not_found',
  [ErrorCodes.UNAUTHORIZED]: 'unauthorized',
  [ErrorCodes.TOKEN_INVALID]: 'invalid_token',
  [ErrorCodes.TOKEN_EXPIRED]: 'expired_token',
  [ErrorCodes.PASSKEY]: 'passkey',
  [ErrorCodes.TOTP]: 'totp',
  [ErrorCodes.TOO_LARGE]: 'bad_request',
  [ErrorCodes.CAPTCHA]: 'captcha',
  [ErrorCodes.BREACHED_PASSWORD]: 'breached_password',
  [ErrorCodes.UPSTREAM]: 'upstream_error',
  [ErrorCodes.UPSTREAM_TIMEOUT]: 'upstream_error',
  [ErrorCodes.UNAVAILABLE]: 'unavailable',
  [ErrorCodes.STATE_STORE]: 'state_store_unavailable'
}

/** The reason of a failed login: `locked` for a lockout's 429, else by the error's code; `error` for a crash. */
export function loginFailureReason (err: unknown): string {
  if (err instanceof LockedOutError) return 'locked'
  if (!(err instanceof HttpError)) return 'error'
  return err.reason ?? FAILURES[err.code] ?? 'error'
}

/**
 * `login.failed` for an error that ended a login route (`/login`, its steps, `/callback`). A 404 of a request that
 * does not count as a login (Telegram's browser polling before the user pressed start) is not a failure.
 */
export function auditLoginFailure (core: CoreInternals, request: FastifyRequest, err: unknown, provider: string, counted: boolean): void {
  const audit = core.options.audit
  if (!audit.on) return
  if (!counted && err instanceof HttpError && err.statusCode === 404) return
  const status = err instanceof HttpError ? err.statusCode : 500
  audit.emit(request, 'login.failed', { reason: loginFailureReason(err), status, provider })
}

/** Refuses a cross-site request (403 `GATEHOUSE_CROSS_SITE`), telling the audit first; nothing when it is not one. */
export function checkCrossSite (core: CoreInternals, request: FastifyRequest, route: CrossSiteRefusedEvent['route'], provider?: string): void {
  const guard = core.options.crossSite
  if (guard === false || !guard.isCrossSite(request)) return
  auditCrossSite(core, request, route, provider)
  guard.check(request)
}

/** `cross_site.refused`, with what the browser said of the request's origin. */
export function auditCrossSite (core: CoreInternals, request: FastifyRequest, route: CrossSiteRefusedEvent['route'], provider?: string): void {
  const audit = core.options.audit
  if (!audit.on) return
  const origin = request.headers.origin
  const site = request.headers['sec-fetch-site']
  audit.emit(request, 'cross_site.refused', {
    reason: typeof site === 'string' && site !== '' ? site : 'origin',
    route,
    provider,
    origin: typeof origin === 'string' ? origin.slice(0, 256) : undefined,
    fetchSite: typeof site === 'string' ? site.slice(0, 32) : undefined
  })
}
