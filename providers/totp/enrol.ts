/**
 * Adding an authenticator app: `POST …/enrol` (a new secret: URI and QR code) and `POST …/enrol/confirm` `{code}`
 * (the first code makes it count; answers the recovery codes, shown once).
 *
 * Adding a factor is a change of factors (ASVS 5.0 7.5.1): `/enrol` needs a cookie session signed in within
 * `reauthentication.within`, or the password (or a passkey assertion) in the body. The enrolment belongs to the
 * session that began it for `ENROL_TTL_MS`: only that session confirms it, and no other session begins one
 * meanwhile (409). Confirming proves the new app works, not who the user is: it is not a step-up.
 */
import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { ErrorCodes, HttpError } from '../../lib/errors.js'
import { bodyFields } from '../../lib/login/login-request.js'
import { base32Of, newRecoveryCodes, otpauthUri } from './codes.js'
import { checkCode, type TotpContext } from './context.js'
import { auditCodesCreated, recoveryHashes } from './recovery.js'

/** 160 bits, the size RFC 4226 recommends for SHA-1. */
const SECRET_BYTES = 20
/** How long a begun enrolment waits for its first code (and keeps other sessions from beginning one). */
export const ENROL_TTL_MS = 10 * 60_000

export function enrolmentRoutes (scope: FastifyInstance, ctx: TotpContext): void {
  const { auth, kit, store, o } = ctx
  const signedIn = { preHandler: auth.authenticate }

  scope.post('/enrol', signedIn, async (request, reply) => {
    const { user, sessionId } = await kit.sessions.fresh(request, reply, bodyFields(request))
    if ((await store.get(user.id))?.confirmed === true) throw alreadyAdded()
    await claimEnrolment(ctx, user.id, sessionId)
    const secret = randomBytes(SECRET_BYTES)
    if (!(await store.enrol(user.id, { secret: ctx.sealer.seal(user.id, secret), confirmed: false, created: Date.now() }))) {
      await ctx.state.delete(enrollingKey(ctx, user.id))
      throw alreadyAdded()
    }
    const uri = otpauthUri(ctx.otp, o, user.name, secret)
    const answer: Record<string, unknown> = { uri, secret: base32Of(ctx.otp, secret), digits: o.digits, period: o.period }
    if (ctx.qrcode !== undefined) answer.qr = await ctx.qrcode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 })
    ctx.log('INFO', 'user %s began adding an authenticator app', user.id)
    return await reply.code(201).send(answer)
  })

  scope.post('/enrol/confirm', signedIn, async (request, reply) => {
    const { user, sessionId } = await kit.sessions.cookie(request, reply)
    const entry = await store.get(user.id)
    if (entry === undefined || entry.confirmed || await ctx.state.get(enrollingKey(ctx, user.id)) !== sessionId) {
      throw new HttpError(409, 'no enrolment to confirm', `POST …/enrol first, in this session (an enrolment waits ${ENROL_TTL_MS / 60_000} minutes)`, ErrorCodes.TOTP)
    }
    await checkCode(ctx, request, user.id, bodyFields(request).code, false)
    const codes = newRecoveryCodes()
    if (!(await store.confirm(user.id, entry.secret, recoveryHashes(ctx, user.id, codes)))) {
      throw new HttpError(409, 'enrolment changed', 'another enrolment began meanwhile: scan the new QR code', ErrorCodes.TOTP)
    }
    await ctx.state.delete(enrollingKey(ctx, user.id))
    ctx.log('INFO', 'user %s added an authenticator app', user.id)
    if (ctx.audit.on) ctx.audit.emit(request, 'second_factor.added', { reason: 'totp', provider: o.name, userId: user.id })
    auditCodesCreated(ctx, request, user.id, 'enrolment', codes.length)
    return { status: 'enabled', recoveryCodes: codes }
  })
}

/** Who is adding an app: the id of the session that began the enrolment, while it waits for its first code. */
export const enrollingKey = (ctx: TotpContext, userId: string): string => `totp:${ctx.o.name}:enrolling:${userId}`

/**
 * Makes the enrolment this session's (again, when it began it already: a new secret replaces its own); 409 while
 * another session's waits for its code.
 */
async function claimEnrolment (ctx: TotpContext, userId: string, sessionId: string): Promise<void> {
  const key = enrollingKey(ctx, userId)
  if (await ctx.state.setIfAbsent(key, sessionId, ENROL_TTL_MS)) return
  if (await ctx.state.get(key) !== sessionId) {
    throw new HttpError(409, 'enrolment in progress', `an authenticator app is being added in another session: finish it there, or begin again in ${ENROL_TTL_MS / 60_000} minutes`, ErrorCodes.TOTP)
  }
  await ctx.state.set(key, sessionId, ENROL_TTL_MS)
}

function alreadyAdded (): HttpError {
  return new HttpError(409, 'authenticator app already added', 'remove it first to add another', ErrorCodes.TOTP)
}
