/**
 * What the TOTP routes share, and the two checks every route goes through: a code (under the lockout and the
 * provider's own cap of wrong codes, each time step accepted once and never after a later one, on every instance
 * sharing the state store) and a recovery code (spent once).
 */
import type { FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError, RateLimitedError } from '../../lib/errors.js'
import type { Audit } from '../../lib/audit/audit.js'
import type { StateStore } from '../../lib/state-store.js'
import type { GatehouseAuth, ProviderKit } from '../../plugins/core/kit.js'
import type { TotpEntry, TotpStore } from '../../stores/totp/index.js'
import { matchStep, readCode, type OtpAuth } from './codes.js'
import type { ResolvedTotpOptions } from './options.js'
import type { Sealer } from './seal.js'

export type QrCode = typeof import('qrcode')

/** A state store that counts: the cap of wrong codes lives in it. */
export type CountingStateStore = StateStore & Required<Pick<StateStore, 'increment'>>

export interface TotpContext {
  auth: GatehouseAuth
  kit: ProviderKit
  audit: Audit
  o: ResolvedTotpOptions
  otp: OtpAuth
  /** qrcode, loaded when `qrCode` is on. */
  qrcode: QrCode | undefined
  store: TotpStore
  state: CountingStateStore
  sealer: Sealer
  log(level: 'INFO' | 'WARN', format: string, ...args: unknown[]): void
}

/**
 * Wrong codes in a row one account may send before its codes are refused (NIST SP 800-63B 5.2.2: at most 100),
 * whatever `rateLimit` says; a right code or a recovery code starts the count again.
 */
export const MAX_WRONG_CODES = 100
/** How long wrong codes are remembered after the last one. */
const WRONG_CODES_KEEP_MS = 30 * 86_400_000

/** The one answer for a wrong code, a code of another user and a user without an authenticator app. */
const wrongCode = (): HttpError => new HttpError(403, 'forbidden', 'incorrect code', ErrorCodes.CREDENTIALS, { reason: 'totp' })

/**
 * Checks the code in `value` for `userId`'s confirmed enrolment (`confirmed: false`: the enrolment waiting for its
 * first code) under the per-account lockout and the cap of wrong codes, and takes its time step so that neither it
 * nor an earlier one is accepted again.
 */
export async function checkCode (ctx: TotpContext, request: FastifyRequest, userId: string, value: unknown, confirmed = true): Promise<TotpEntry> {
  const code = readCode(value, ctx.o.digits)
  return await ctx.kit.throttle.guard(request, `totp/${ctx.o.name}:${userId}`, async () => {
    await countCode(ctx, request, userId)
    const entry = await ctx.store.get(userId)
    if (entry === undefined || entry.confirmed !== confirmed) throw wrongCode()
    const step = matchStep(ctx.otp, ctx.o, openSecret(ctx, userId, entry), code, Date.now())
    if (step === undefined) throw wrongCode()
    await takeStep(ctx, userId, step)
    await ctx.state.delete(wrongCodesKey(ctx, userId))
    return entry
  })
}

/**
 * Counts a code of `userId` before it is checked (one atomic increment: a burst in parallel gets no more checks
 * than a sequence); past `MAX_WRONG_CODES` since the last right one, 429 and no check.
 */
async function countCode (ctx: TotpContext, request: FastifyRequest, userId: string): Promise<void> {
  const counted = await ctx.state.increment(wrongCodesKey(ctx, userId), WRONG_CODES_KEEP_MS, { sliding: true })
  if (counted.count <= MAX_WRONG_CODES) return
  throw new RateLimitedError(`${MAX_WRONG_CODES} wrong codes in a row: codes of this account are refused; use a recovery code`, counted.ttlMs)
}

const wrongCodesKey = (ctx: TotpContext, userId: string): string => `totp:${ctx.o.name}:wrong:${userId}`

/**
 * Takes time step `step` of `userId`, once on every instance: a replay is 403 `GATEHOUSE_ALREADY_USED`. The steps
 * before it that are still in the window are taken first (their outcome does not matter), so no older code is
 * accepted after a newer one: a high-water mark per user. Steps before the window are never accepted anyway.
 */
async function takeStep (ctx: TotpContext, userId: string, step: number): Promise<void> {
  // Kept until the step can no longer be accepted (it leaves the window), plus a margin for clock skew.
  const keepMs = (ctx.o.window + 2) * ctx.o.period * 1000 + 60_000
  const key = (s: number): string => `totp:${ctx.o.name}:used:${userId}:${s}`
  for (let older = step - ctx.o.window; older < step; older++) await ctx.state.setIfAbsent(key(older), '1', keepMs)
  if (!(await ctx.state.setIfAbsent(key(step), '1', keepMs))) {
    throw new HttpError(403, 'code already used', 'each code is accepted once, and none older than the last: wait for the next one', ErrorCodes.ALREADY_USED, { reason: 'totp' })
  }
}

/**
 * Spends the recovery code in `code`; the number of codes left. Under the lockout, like a code; a recovery code
 * (120 bits, 60 for a code of an earlier release: not guessable) is the way out of the cap of wrong codes, so a right
 * one clears it.
 */
export async function spendRecoveryCode (ctx: TotpContext, request: FastifyRequest, userId: string, code: string): Promise<number> {
  return await ctx.kit.throttle.guard(request, `totp/${ctx.o.name}:${userId}`, async () => {
    const left = await ctx.store.useRecovery(userId, ctx.sealer.recoveryHash(userId, code))
    if (left < 0) throw new HttpError(403, 'forbidden', 'incorrect recovery code', ErrorCodes.CREDENTIALS, { reason: 'recovery_code' })
    await ctx.state.delete(wrongCodesKey(ctx, userId))
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
