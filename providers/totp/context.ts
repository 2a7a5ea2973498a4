/**
 * What the TOTP routes share, and the two checks every route goes through: a code (under the lockout, each time
 * step accepted once on every instance sharing the state store) and a recovery code (spent once).
 */
import type { FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError } from '../../lib/errors.js'
import type { StateStore } from '../../lib/state-store/types.js'
import type { GatehouseAuth } from '../../plugins/core/types.js'
import type { ProviderKit } from '../../plugins/core/kit.js'
import type { TotpEntry, TotpStore } from '../../stores/totp/index.js'
import { matchStep, readCode, type OtpAuth } from './codes.js'
import type { ResolvedTotpOptions } from './options.js'
import type { Sealer } from './seal.js'

export type QrCode = typeof import('qrcode')

export interface TotpContext {
  auth: GatehouseAuth
  kit: ProviderKit
  o: ResolvedTotpOptions
  otp: OtpAuth
  /** qrcode, loaded when `qrCode` is on. */
  qrcode: QrCode | undefined
  store: TotpStore
  state: StateStore
  sealer: Sealer
  log(level: 'INFO' | 'WARN', format: string, ...args: unknown[]): void
}

/** The one answer for a wrong code, a code of another user and a user without an authenticator app. */
const wrongCode = (): HttpError => new HttpError(403, 'forbidden', 'incorrect code', ErrorCodes.CREDENTIALS)

/**
 * Checks the code in `body.code` for `userId`'s confirmed enrolment (`confirmed: false`: the enrolment waiting for
 * its first code) under the per-account lockout, and takes its time step so that the code is accepted once.
 */
export async function checkCode (ctx: TotpContext, request: FastifyRequest, userId: string, value: unknown, confirmed = true): Promise<TotpEntry> {
  const code = readCode(value, ctx.o.digits)
  return await ctx.kit.throttle.guard(request, `totp/${ctx.o.name}:${userId}`, async () => {
    const entry = await ctx.store.get(userId)
    if (entry === undefined || entry.confirmed !== confirmed) throw wrongCode()
    const step = matchStep(ctx.otp, ctx.o, openSecret(ctx, userId, entry), code, Date.now())
    if (step === undefined) throw wrongCode()
    // Kept until the step can no longer be accepted (it leaves the drift window), plus a margin for clock skew.
    const keepMs = (2 * ctx.o.window + 2) * ctx.o.period * 1000 + 60_000
    if (!(await ctx.state.setIfAbsent(`totp:${ctx.o.name}:used:${userId}:${step}`, '1', keepMs))) {
      throw new HttpError(403, 'code already used', 'each code is accepted once: wait for the next one', ErrorCodes.ALREADY_USED)
    }
    return entry
  })
}

/** Spends the recovery code in `value`; the number of codes left. Under the lockout, like a code. */
export async function spendRecoveryCode (ctx: TotpContext, request: FastifyRequest, userId: string, code: string): Promise<number> {
  return await ctx.kit.throttle.guard(request, `totp/${ctx.o.name}:${userId}`, async () => {
    const left = await ctx.store.useRecovery(userId, ctx.sealer.recoveryHash(userId, code))
    if (left < 0) throw new HttpError(403, 'forbidden', 'incorrect recovery code', ErrorCodes.CREDENTIALS)
    return left
  })
}

/** The user's secret; a 409 (not counted as a wrong code) when the stored one does not open with this key. */
export function openSecret (ctx: TotpContext, userId: string, entry: TotpEntry): Buffer {
  const secret = ctx.sealer.open(userId, entry.secret)
  if (secret !== undefined) return secret
  ctx.log('WARN', 'the stored secret of user %s does not decrypt with the configured key', userId)
  throw new HttpError(409, 'authenticator secret unreadable', 'the stored secret cannot be read: sign in with a recovery code and add the authenticator app again', ErrorCodes.TOTP)
}
