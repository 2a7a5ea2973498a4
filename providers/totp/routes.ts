/**
 * A signed-in user's authenticator app: `GET …/status`, adding one (enrol.ts), `POST …/verify` `{code}` or
 * `{recoveryCode}` (step-up: this session confirms a factor now), `POST …/recovery-codes` (new codes replace all)
 * and `DELETE …/` (removal).
 *
 * New recovery codes and removal change factors (ASVS 5.0 7.5.1): a cookie session signed in within
 * `reauthentication.within` or the password (or a passkey assertion) in the body, and a factor confirmed in this
 * session (a code or recovery code in the body, or one confirmed within `recentWithin`).
 */
import type { FastifyInstance } from 'fastify'
import { ErrorCodes, HttpError } from '../../lib/errors.js'
import { bodyFields } from '../../lib/login/login-request.js'
import { newRecoveryCodes } from './codes.js'
import type { TotpContext } from './context.js'
import { enrollingKey, enrolmentRoutes } from './enrol.js'
import { auditCodesCreated, confirmInSession, recoveryHashes } from './recovery.js'

export function managementRoutes (scope: FastifyInstance, ctx: TotpContext): void {
  const { auth, kit, store, o } = ctx
  const signedIn = { preHandler: auth.authenticate }

  scope.get('/status', signedIn, async (request) => {
    const user = auth.mustGetUser(request)
    const entry = await store.get(user.id)
    return { enabled: entry?.confirmed === true, pending: entry?.confirmed === false, recoveryCodesLeft: entry?.confirmed === true ? await store.recoveryLeft(user.id) : 0 }
  })

  enrolmentRoutes(scope, ctx)

  scope.post('/verify', signedIn, async (request, reply) => {
    const session = await kit.sessions.signedIn(request, reply)
    const fields = bodyFields(request)
    if (fields.code === undefined && fields.recoveryCode === undefined) throw new HttpError(400, 'bad request', 'send {code} or {recoveryCode}')
    const factor = await confirmInSession(ctx, request, session, fields, false)
    return { status: 'confirmed', factor }
  })

  scope.post('/recovery-codes', signedIn, async (request, reply) => {
    const fields = bodyFields(request)
    const session = await kit.sessions.fresh(request, reply, fields)
    const userId = session.user.id
    if ((await store.get(userId))?.confirmed !== true) throw new HttpError(409, 'no authenticator app', 'add one first', ErrorCodes.TOTP)
    await confirmInSession(ctx, request, session, fields, true)
    const codes = newRecoveryCodes()
    await store.setRecovery(userId, recoveryHashes(ctx, userId, codes))
    ctx.log('INFO', 'user %s replaced their recovery codes', userId)
    auditCodesCreated(ctx, request, userId, 'replaced', codes.length)
    return { recoveryCodes: codes }
  })

  scope.delete('/', signedIn, async (request, reply) => {
    const fields = bodyFields(request)
    const session = await kit.sessions.fresh(request, reply, fields)
    const userId = session.user.id
    const entry = await store.get(userId)
    if (entry === undefined) throw new HttpError(404, 'not found', 'no authenticator app to remove')
    // An enrolment that never counted is dropped without a code (it has none that works yet).
    if (entry.confirmed) await confirmInSession(ctx, request, session, fields, true)
    if (!(await store.remove(userId))) throw new HttpError(404, 'not found', 'no authenticator app to remove')
    await ctx.state.delete(enrollingKey(ctx, userId))
    ctx.log('INFO', 'user %s removed their authenticator app', userId)
    if (entry.confirmed && ctx.audit.on) ctx.audit.emit(request, 'second_factor.removed', { reason: 'totp', provider: o.name, userId })
    return { status: 'removed' }
  })
}
