/**
 * `POST {authPrefix}/<name>/login` `{code}` or `{recoveryCode}`: the second step of a password login. Each try is
 * counted on the pending login first (a few per password sign-in); the code is checked (and its time step or the
 * recovery code taken) before the pending login is spent, so a wrong code consumes nothing else. A sign-in by
 * recovery code is logged and answers how many codes are left (header `Gatehouse-Recovery-Codes-Left`). The new
 * session starts with its factor confirmed, for `fastify.auth.recent()`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { HttpError } from '../../lib/errors.js'
import { requestFields, trustDeviceFlag } from '../../lib/login/login-request.js'
import { readCode, readRecoveryCode } from './codes.js'
import { checkCode, spendRecoveryCode, type TotpContext } from './context.js'
import type { PendingLogins } from './pending.js'

export const RECOVERY_LEFT_HEADER = 'gatehouse-recovery-codes-left'

export function totpLogin (ctx: TotpContext, pending: PendingLogins) {
  return async function login (request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const body = request.body
    if (request.method !== 'POST' || body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new HttpError(400, 'bad request', 'POST {code} or {recoveryCode} after the password')
    }
    const fields = requestFields(request)
    const waiting = await pending.read(request)
    const user = waiting.user
    // Read (400 for a malformed one, which counts for nothing) before the try is counted.
    const recoveryCode = fields.recoveryCode === undefined ? undefined : readRecoveryCode(fields.recoveryCode)
    const trustDevice = trustDeviceFlag(fields)
    if (recoveryCode === undefined) readCode(fields.code, ctx.o.digits)
    await pending.attempt(reply, waiting)
    let factor = 'totp'
    if (recoveryCode !== undefined) {
      const left = await spendRecoveryCode(ctx, request, user.id, recoveryCode)
      ctx.log('WARN', 'audit: user %s signed in with a recovery code, %d left', user.id, left)
      reply.header(RECOVERY_LEFT_HEADER, String(left))
      factor = 'recovery'
    } else {
      await checkCode(ctx, request, user.id, fields.code)
    }
    await pending.spend(reply, waiting)
    ctx.log('INFO', 'user %s signed in with %s (second factor)', user.id, factor === 'totp' ? 'a code' : 'a recovery code')
    return await ctx.kit.completeLogin(request, reply, { user, aud: waiting.aud, from: waiting.from, sessionOnly: waiting.sess, secondFactor: factor, trustDevice, method: waiting.first })
  }
}
