/**
 * Step-up: `fastify.auth.stepUp({ within: '5m', factor })`, a hook (`onRequest` or `preHandler`) for routes that need a second factor
 * confirmed recently (changing the password, removing a passkey). It resolves the user like `authenticate` (401
 * without one), then answers 401 `GATEHOUSE_STEP_UP` unless this session confirmed the factor (any factor when none is
 * named: `totp` for an authenticator code, `recovery` for a recovery code, `passkey` for a passkey) within
 * `within`; the page confirms one (`POST {authPrefix}/totp/verify`) and retries. The confirmation belongs to the
 * session that made it (ASVS 5.0 7.5.3): another device's, or another copy's of an older session, opens nothing.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError, OptionsError, refuse } from '../lib/errors.js'
import { checkKeys, optionDuration, optionName } from '../lib/options.js'
import type { StateStore } from '../lib/state-store.js'
import type { Audit } from '../lib/audit/audit.js'
import { lastFactorAt, STEP_UP_KEEP_MS, type StepUpOptions } from '../lib/login/step-up.js'
import { challenged, guardedHook, realmChallenge, requireUser } from './authenticate.js'
import type { ResolveUser, SessionIdOf } from './types.js'

/** The hook; `called` is the name its options are checked under (`stepUp`, or the deprecated `recent`). */
export function stepUpHook (resolve: ResolveUser, sessionIdOf: SessionIdOf, store: StateStore, audit: Audit, opts: StepUpOptions, called = 'stepUp') {
  const o = checkKeys(opts, ['within', 'factor'], called)
  if (o.within === undefined) throw new OptionsError(`${called}.within`, 'is required, e.g. \'5m\'')
  const withinMs = optionDuration(`${called}.within`, o.within, 0)
  if (withinMs <= 0 || withinMs > STEP_UP_KEEP_MS) throw new OptionsError(`${called}.within`, 'must be above 0 and at most 24 hours')
  const factor = o.factor === undefined ? undefined : optionName(`${called}.factor`, o.factor)
  const signedIn = guardedHook(resolve, requireUser)
  const realm = realmChallenge(resolve)
  return async function gatehouseStepUp (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const denied = await signedIn(request, reply)
    if (denied !== undefined) return denied
    // Basic auth has no session, so nothing to have confirmed a factor in.
    const sessionId = await sessionIdOf(request, reply)
    const at = sessionId === undefined ? undefined : await lastFactorAt(store, sessionId, factor)
    if (at !== undefined && Date.now() - at <= withinMs) return undefined
    if (audit.on) audit.emit(request, 'step_up.refused', { reason: 'not_recent', userId: request.user!.id })
    const refusal = new HttpError(401, 'second factor required', `confirm ${factor === undefined ? 'a second factor' : `the ${factor} factor`} again, then retry`, ErrorCodes.STEP_UP)
    return refuse(request, challenged(request, reply.header('cache-control', 'no-store'), refusal, realm), refusal)
  }
}
