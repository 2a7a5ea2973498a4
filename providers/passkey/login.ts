/**
 * Signing in with a passkey: `POST …/login/options` (JSON or form `{user?, aud?, from?, session?}`), then
 * `POST …/login` with the browser's answer. Three kinds of ceremony:
 * - discoverable: no user name; the browser offers every passkey it holds for this site;
 * - with a user name: the options are those of a discoverable sign-in (no credential list), and only a passkey of
 *   the user that name gives may answer. Listing the user's passkeys would tell who holds passkeys (and how many,
 *   and their transports) to anyone typing a name; every passkey is discoverable (registration requires a
 *   resident key), so the browser finds it without the list;
 * - second factor: the browser carries a pending password login; only that user's passkeys are asked for and the
 *   session keeps what the password login asked (`aud`, `from`, `session`).
 * In every kind the passkey must be registered, belong to the expected user, verify (origin, RP id, challenge,
 * signature) and show a signature counter above the stored one (when the authenticator keeps one).
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { LoginHandler } from '../../plugins/core/kit.js'
import { ErrorCodes, HttpError } from '../../lib/errors.js'
import { queryText, requestFields, trustDeviceFlag } from '../../lib/login/login-request.js'
import type { UserData } from '../../lib/user.js'
import type { PasskeyCredential } from '../../stores/passkey/index.js'
import type { CeremonyRecord } from './ceremony.js'
import { expectations, reasonOf, userHandleOf, type PasskeyContext } from './context.js'
import { readAuthentication, type AuthenticationJSON } from './response.js'

const MAX_USER = 256

/**
 * `POST …/login/options`, a step of the login mounted behind the login prelude: counted as a login request of
 * this address (rateLimit.login) like a password post or an OAuth2 start, cross-site guarded, `aud`, `from`
 * and `session` read and checked into `login`.
 */
export function loginOptions (ctx: PasskeyContext): LoginHandler {
  const { o, webauthn, passkeys, ceremonies, pending } = ctx

  return async (request, reply, login) => {
    const fields = requestFields(request)
    const waiting = await pending.read(request)
    let record: Omit<CeremonyRecord, 'challenge'>
    let allow: Array<{ id: string; transports?: string[] | undefined }> | undefined
    let userVerification: 'required' | 'preferred' = o.userVerification
    if (waiting !== undefined) {
      record = { userId: waiting.user.id, pending: waiting }
      allow = (await passkeys.list(waiting.user.id)).map((c) => ({ id: c.id, transports: c.transports }))
      // The password was the knowledge factor: the passkey has to be present, not verified again.
      userVerification = 'preferred'
    } else {
      record = { aud: login.aud, from: login.from, sess: login.sessionOnly }
      const name = queryText(fields, 'user', MAX_USER, false)
      if (name !== undefined) {
        // The passkey store is not asked: the answer (and its timing) must not depend on the name's passkeys.
        const userId = await o.findUser(name)
        record.userId = typeof userId === 'string' && userId !== '' ? userId : null
      }
    }
    const options = await webauthn.generateAuthenticationOptions({ rpID: o.rpID, timeout: o.challengeTtlMs, userVerification, ...(allow !== undefined ? { allowCredentials: allow } : {}) })
    await ceremonies.begin(request, reply, 'login', { ...record, challenge: options.challenge })
    return options
  }
}

/** The provider's `login` (`POST …/login`): verifies the browser's answer and completes the login. */
export function verifyLogin (ctx: PasskeyContext) {
  const { o, kit, passkeys, ceremonies, pending, log } = ctx
  return async function login (request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    if (request.method !== 'POST') throw new HttpError(400, 'bad request', 'POST the passkey response; ask for options at …/login/options first')
    const response = readAuthentication(request.body)
    const trustDevice = trustDeviceFlag(requestFields(request))
    const record = await ceremonies.finish(request, reply, 'login')
    const credential = await passkeys.get(response.id)
    if (credential === undefined) throw new HttpError(401, 'unknown passkey', 'no account has this passkey', ErrorCodes.CREDENTIALS)
    checkOwner(ctx, record.userId, credential, response.response.userHandle)
    const second = record.pending !== undefined
    const newCounter = await checkAssertion(ctx, credential, response, record.challenge, !second && o.userVerification === 'required')
    if (record.pending !== undefined) await pending.spend(reply, record.pending)
    await usePasskey(ctx, credential, newCounter)
    const user = record.pending?.user ?? await currentUser(ctx, credential.user)
    log('INFO', 'user %s signed in with a passkey%s', user.id, second ? ' (second factor)' : '')
    return await kit.completeLogin(request, reply, {
      user,
      aud: record.pending?.aud ?? record.aud,
      from: record.pending?.from ?? record.from,
      sessionOnly: record.pending?.sess ?? record.sess,
      // A passkey is a second factor confirmed now, for routes behind `fastify.auth.recent` (step-up) in this session.
      secondFactor: 'passkey',
      // Only a passkey confirming a password is a second factor a browser can be trusted to skip.
      trustDevice: second && trustDevice,
      // A passkey confirming a password: the user chose the password's provider.
      method: record.pending?.first
    })
  }
}

/**
 * Verifies an assertion of `credential` against `challenge` (origin, RP id, signature, a counter above the stored
 * one, user verification when `requireUV`); the new counter. 401 `GATEHOUSE_PASSKEY` otherwise.
 */
export async function checkAssertion (ctx: PasskeyContext, credential: PasskeyCredential, response: AuthenticationJSON, challenge: string, requireUV: boolean): Promise<number> {
  const verified = await ctx.webauthn.verifyAuthenticationResponse({
    response,
    ...expectations(ctx.o, challenge),
    credential: { id: credential.id, publicKey: new Uint8Array(credential.publicKey), counter: credential.counter, transports: credential.transports },
    requireUserVerification: requireUV
  }).catch((err: unknown) => {
    const reason = reasonOf(err)
    // A counter at or below the stored one means a copy of the authenticator may exist.
    const cloned = /counter/i.test(reason)
    ctx.log('WARN', 'a passkey of user %s refused: %s', credential.userId, reason)
    throw new HttpError(401, 'passkey refused', cloned
      ? 'the signature counter did not increase: this authenticator may have been copied'
      : 'the passkey response does not verify (origin, RP id, challenge or signature)', ErrorCodes.PASSKEY)
  })
  if (!verified.verified) throw new HttpError(401, 'passkey refused', 'the signature does not verify', ErrorCodes.PASSKEY)
  return verified.authenticationInfo.newCounter
}

/** Moves the stored counter (and the last use): of two uses racing with one authenticator, only one wins (401). */
export async function usePasskey (ctx: PasskeyContext, credential: PasskeyCredential, newCounter: number): Promise<void> {
  if (!(await ctx.passkeys.use(credential.id, credential.counter, newCounter, Date.now()))) {
    throw new HttpError(401, 'passkey refused', 'the passkey was used by another sign-in at the same time', ErrorCodes.PASSKEY)
  }
}

/**
 * The passkey must belong to the user the ceremony was for (`expected`: undefined for a discoverable sign-in, null
 * for a typed name that is nobody's), and a user handle in the answer must be its owner's.
 */
function checkOwner (ctx: PasskeyContext, expected: string | null | undefined, credential: PasskeyCredential, userHandle: string | undefined): void {
  const handleOk = userHandle === undefined || userHandle === Buffer.from(userHandleOf(credential.userId)).toString('base64url')
  if ((expected === undefined || credential.userId === expected) && handleOk) return
  ctx.log('WARN', 'sign-in refused: a passkey of user %s answered for another user', credential.userId)
  throw new HttpError(403, 'forbidden', 'this passkey belongs to another user', ErrorCodes.CREDENTIALS)
}

async function currentUser (ctx: PasskeyContext, stored: UserData): Promise<UserData> {
  if (ctx.o.loadUser === undefined) return stored
  const user = await ctx.o.loadUser(stored)
  if (user === null || user === undefined) throw new HttpError(403, 'forbidden', 'this account may not sign in', ErrorCodes.CREDENTIALS)
  return user
}

