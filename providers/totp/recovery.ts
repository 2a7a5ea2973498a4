/**
 * What the management routes share once the app is added: recovery codes as stored (HMACs), their audit, and the
 * confirmation of a factor in the requesting session (step-up, ASVS 5.0 7.5.3): a code or a recovery code typed
 * now, recorded for this session only, or one this session confirmed within `recentWithin`.
 */
import type { FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError } from '../../lib/errors.js'
import { lastFactorAt, recordFactor } from '../../lib/login/step-up.js'
import type { SignedInSession } from '../../plugins/core/kit.js'
import { canonicalRecoveryCode, readRecoveryCode } from './codes.js'
import { checkCode, spendRecoveryCode, type TotpContext } from './context.js'

export function recoveryHashes (ctx: TotpContext, userId: string, codes: string[]): string[] {
  return codes.map((c) => ctx.sealer.recoveryHash(userId, canonicalRecoveryCode(c)))
}

/** `recovery_codes.created` (reason `enrolment` or `replaced`): how many, never which. */
export function auditCodesCreated (ctx: TotpContext, request: FastifyRequest, userId: string, reason: 'enrolment' | 'replaced', count: number): void {
  if (ctx.audit.on) ctx.audit.emit(request, 'recovery_codes.created', { reason, provider: ctx.o.name, userId, count })
}

/**
 * Confirms `{code}` or `{recoveryCode}` of `fields` for the session's user and records the factor for this
 * session: `totp` or `recovery`. Without either, `orRecent` accepts a factor this session confirmed within
 * `recentWithin` (undefined then); 401 `GATEHOUSE_STEP_UP` otherwise. Audited as `step_up.succeeded` or
 * `step_up.refused` (reason `totp` or `recovery_code`).
 */
export async function confirmInSession (ctx: TotpContext, request: FastifyRequest, session: SignedInSession, fields: Record<string, unknown>, orRecent: boolean): Promise<string | undefined> {
  const userId = session.user.id
  const kind = fields.code !== undefined ? 'totp' : fields.recoveryCode !== undefined ? 'recovery' : undefined
  if (kind === undefined) {
    const at = await lastFactorAt(ctx.kit.stateStore, session.sessionId)
    if (orRecent && at !== undefined && Date.now() - at <= ctx.o.recentWithinMs) return undefined
    if (ctx.audit.on) ctx.audit.emit(request, 'step_up.refused', { reason: 'not_recent', provider: ctx.o.name, userId })
    throw new HttpError(401, 'code required', `confirm with a code from the authenticator app (send {code} or {recoveryCode}, or POST ${ctx.kit.authPrefix}/${ctx.o.name}/verify first)`, ErrorCodes.STEP_UP)
  }
  const reason = kind === 'totp' ? 'totp' : 'recovery_code'
  try {
    if (kind === 'totp') await checkCode(ctx, request, userId, fields.code)
    else await spendRecoveryCode(ctx, request, userId, readRecoveryCode(fields.recoveryCode))
  } catch (err) {
    if (ctx.audit.on && err instanceof HttpError && err.statusCode === 403) ctx.audit.emit(request, 'step_up.refused', { reason, provider: ctx.o.name, userId })
    throw err
  }
  await recordFactor(ctx.kit.stateStore, session.sessionId, kind)
  if (ctx.audit.on) ctx.audit.emit(request, 'step_up.succeeded', { reason, provider: ctx.o.name, userId })
  return kind
}
