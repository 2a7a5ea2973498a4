/**
 * A signed-in user's authenticator app: `GET …/status`, `POST …/enrol` (a new secret: URI and QR code),
 * `POST …/enrol/confirm` `{code}` (the first code makes it count; answers the recovery codes, shown once),
 * `POST …/verify` `{code}` (step-up: confirms a factor now), `POST …/recovery-codes` (new codes replace all) and
 * `DELETE …/` (removal); the last two need a code in the body or a code confirmed within `recentWithin`.
 */
import { randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError } from '../../lib/errors.js'
import { lastFactorAt, recordFactor } from '../../lib/step-up.js'
import type { UserData } from '../../lib/user.js'
import { base32Of, canonicalRecoveryCode, newRecoveryCodes, otpauthUri } from './codes.js'
import { checkCode, type TotpContext } from './context.js'

/** 160 bits, the size RFC 4226 recommends for SHA-1. */
const SECRET_BYTES = 20

export function managementRoutes (scope: FastifyInstance, ctx: TotpContext): void {
  const { auth, store, o } = ctx
  const signedIn = { preHandler: auth.authenticate }

  scope.get('/status', signedIn, async (request) => {
    const user = auth.mustGetUser(request)
    const entry = await store.get(user.id)
    return { enabled: entry?.confirmed === true, pending: entry?.confirmed === false, recoveryCodesLeft: entry?.confirmed === true ? await store.recoveryLeft(user.id) : 0 }
  })

  scope.post('/enrol', signedIn, async (request, reply) => {
    const user = auth.mustGetUser(request)
    const secret = randomBytes(SECRET_BYTES)
    if (!(await store.enrol(user.id, { secret: ctx.sealer.seal(user.id, secret), confirmed: false, created: Date.now() }))) {
      throw new HttpError(409, 'authenticator app already added', 'remove it first to add another', ErrorCodes.TOTP)
    }
    const uri = otpauthUri(ctx.otp, o, user.name, secret)
    const answer: Record<string, unknown> = { uri, secret: base32Of(ctx.otp, secret), digits: o.digits, period: o.period }
    if (ctx.qrcode !== undefined) answer.qr = await ctx.qrcode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 })
    ctx.log('INFO', 'user %s began adding an authenticator app', user.id)
    return await reply.code(201).send(answer)
  })

  scope.post('/enrol/confirm', signedIn, async (request) => {
    const user = auth.mustGetUser(request)
    const entry = await store.get(user.id)
    if (entry === undefined || entry.confirmed) throw new HttpError(409, 'no enrolment to confirm', 'POST …/enrol first', ErrorCodes.TOTP)
    await checkCode(ctx, request, user.id, bodyOf(request).code, false)
    const codes = newRecoveryCodes()
    if (!(await store.confirm(user.id, entry.secret, hashes(ctx, user, codes)))) {
      throw new HttpError(409, 'enrolment changed', 'another enrolment began meanwhile: scan the new QR code', ErrorCodes.TOTP)
    }
    await recordFactor(ctx.kit.stateStore, user.id, 'totp')
    ctx.log('INFO', 'user %s added an authenticator app', user.id)
    return { status: 'enabled', recoveryCodes: codes }
  })

  scope.post('/verify', signedIn, async (request) => {
    const user = auth.mustGetUser(request)
    await checkCode(ctx, request, user.id, bodyOf(request).code)
    await recordFactor(ctx.kit.stateStore, user.id, 'totp')
    return { status: 'confirmed', factor: 'totp' }
  })

  scope.post('/recovery-codes', signedIn, async (request) => {
    const user = auth.mustGetUser(request)
    await codeOrRecent(ctx, request, user)
    if ((await store.get(user.id))?.confirmed !== true) throw new HttpError(409, 'no authenticator app', 'add one first', ErrorCodes.TOTP)
    const codes = newRecoveryCodes()
    await store.setRecovery(user.id, hashes(ctx, user, codes))
    ctx.log('INFO', 'user %s replaced their recovery codes', user.id)
    return { recoveryCodes: codes }
  })

  scope.delete('/', signedIn, async (request) => {
    const user = auth.mustGetUser(request)
    await codeOrRecent(ctx, request, user)
    if (!(await store.remove(user.id))) throw new HttpError(404, 'not found', 'no authenticator app to remove')
    ctx.log('INFO', 'user %s removed their authenticator app', user.id)
    return { status: 'removed' }
  })
}

function bodyOf (request: FastifyRequest): Record<string, unknown> {
  const body = request.body
  return body !== null && typeof body === 'object' && !Array.isArray(body) ? body as Record<string, unknown> : {}
}

function hashes (ctx: TotpContext, user: UserData, codes: string[]): string[] {
  return codes.map((c) => ctx.sealer.recoveryHash(user.id, canonicalRecoveryCode(c)))
}

/** A code in the body, or one confirmed within `recentWithin` (a sign-in with it counts); 401 STEP_UP otherwise. */
async function codeOrRecent (ctx: TotpContext, request: FastifyRequest, user: UserData): Promise<void> {
  const code = bodyOf(request).code
  if (code !== undefined) {
    await checkCode(ctx, request, user.id, code)
    return
  }
  const at = await lastFactorAt(ctx.kit.stateStore, user.id)
  if (at !== undefined && Date.now() - at <= ctx.o.recentWithinMs) return
  throw new HttpError(401, 'code required', `confirm with a code from the authenticator app (send {code}, or POST ${ctx.kit.authPrefix}/${ctx.o.name}/verify first)`, ErrorCodes.STEP_UP)
}
