/**
 * A passkey that re-authenticates a signed-in user (ASVS 5.0 7.5.1): `POST …/reauth/options` gives a challenge
 * for one of the user's passkeys, kept under this session's id (no cookie: it is bound to the session that asked,
 * and answered once); the browser's answer then travels as `passkey` in the body of the request that changes
 * factors (adding an authenticator app, a passkey, new recovery codes, ending other sessions) and is checked
 * here, through the re-authentication registry (lib/login/reauth.ts). User verification is required: the passkey then
 * stands for the primary factor. A passkey verified this way is also a second factor confirmed in this session
 * (`recent()`, `step_up.succeeded` with reason `passkey`).
 */
import type { FastifyInstance } from 'fastify'
import { ErrorCodes, HttpError } from '../../lib/errors.js'
import type { ReauthCheck, ReauthSubject } from '../../lib/login/reauth.js'
import { recordFactor } from '../../lib/login/step-up.js'
import type { PasskeyContext } from './context.js'
import { checkAssertion, usePasskey } from './login.js'
import { readAuthentication, type AuthenticationJSON } from './response.js'

const challengeKey = (ctx: PasskeyContext, sessionId: string): string => `passkey:${ctx.o.name}:reauth:${sessionId}`

export function reauthRoutes (scope: FastifyInstance, ctx: PasskeyContext): void {
  const { auth, kit, o, webauthn, passkeys } = ctx
  scope.post('/reauth/options', { preHandler: auth.authenticate }, async (request, reply) => {
    const { user, sessionId } = await kit.sessions.cookie(request, reply)
    const allow = (await passkeys.list(user.id)).map((c) => ({ id: c.id, transports: c.transports }))
    if (allow.length === 0) throw new HttpError(409, 'no passkey', 'this account has no passkey to confirm with: send the password, or sign in again', ErrorCodes.CONFLICT)
    const options = await webauthn.generateAuthenticationOptions({ rpID: o.rpID, timeout: o.challengeTtlMs, userVerification: 'required', allowCredentials: allow })
    await ctx.state.set(challengeKey(ctx, sessionId), options.challenge, o.challengeTtlMs, { client: ctx.kit.throttle.clientKey(request) })
    return options
  })
}

/** The registry's passkey check: false when no challenge was asked for this session here. */
export function passkeyAgain (ctx: PasskeyContext): ReauthCheck {
  return async (request, subject, value) => {
    const response = readAuthentication(value)
    const challenge = await ctx.state.take(challengeKey(ctx, subject.sessionId))
    if (challenge === undefined) return false
    try {
      await confirm(ctx, subject, response, challenge)
    } catch (err) {
      if (ctx.audit.on) ctx.audit.emit(request, 'step_up.refused', { reason: 'passkey', provider: ctx.o.name, userId: subject.user.id })
      throw err
    }
    await recordFactor(ctx.kit.stateStore, subject.sessionId, 'passkey')
    if (ctx.audit.on) ctx.audit.emit(request, 'step_up.succeeded', { reason: 'passkey', provider: ctx.o.name, userId: subject.user.id })
    ctx.log('INFO', 'user %s confirmed a change with a passkey', subject.user.id)
    return true
  }
}

async function confirm (ctx: PasskeyContext, subject: ReauthSubject, response: AuthenticationJSON, challenge: string): Promise<void> {
  const credential = await ctx.passkeys.get(response.id)
  // Another user's passkey answers exactly as an unknown one.
  if (credential === undefined || credential.userId !== subject.user.id) {
    throw new HttpError(403, 'forbidden', 'not a passkey of this account', ErrorCodes.CREDENTIALS, { reason: 'passkey' })
  }
  await usePasskey(ctx, credential, await checkAssertion(ctx, credential, response, challenge, true))
}
