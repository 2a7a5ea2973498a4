/**
 * A signed-in user's passkeys: add one (`POST …/register/options`, then `POST …/register`), list them
 * (`GET …/credentials`), delete one (`DELETE …/credentials/:id`). Every route needs a session (with the XSRF
 * header for cookie sessions), so nobody can add a passkey to an account they are not signed in to.
 *
 * Adding and deleting change factors (ASVS 5.0 7.5.1): the options and the deletion need a cookie session signed
 * in within `reauthentication.within`, or the password (or another passkey's assertion) in the body; the
 * registration is finished by the session that asked for its options, and no other.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError } from '../../lib/errors.js'
import { bodyFields } from '../../lib/login/login-request.js'
import type { UserData } from '../../lib/user.js'
import type { PasskeyCredential } from '../../stores/passkey/index.js'
import { expectations, passkeyInfo, reasonOf, userHandleOf, type PasskeyContext } from './context.js'
import { isCredentialId, readLabel, readRegistration } from './response.js'

type RegistrationInfo = NonNullable<Awaited<ReturnType<PasskeyContext['webauthn']['verifyRegistrationResponse']>>['registrationInfo']>

/** The stored record of a verified registration. */
function credentialOf (info: RegistrationInfo, transports: PasskeyCredential['transports'], user: Parameters<typeof storedUser>[0] & { id: string }, label: PasskeyCredential['label']): PasskeyCredential {
  return {
    id: info.credential.id,
    userId: user.id,
    user: storedUser(user),
    publicKey: info.credential.publicKey,
    counter: info.credential.counter,
    transports,
    created: Date.now(),
    deviceType: info.credentialDeviceType,
    backedUp: info.credentialBackedUp,
    label
  }
}

export function registrationRoutes (scope: FastifyInstance, ctx: PasskeyContext): void {
  const { auth, kit, o, webauthn, passkeys, ceremonies, log } = ctx
  const signedIn = { preHandler: auth.authenticate }

  scope.post('/register/options', signedIn, async (request, reply) => {
    const { user, sessionId } = await kit.sessions.fresh(request, reply, bodyFields(request))
    const existing = await passkeys.list(user.id)
    if (existing.length >= o.maxPerUser) throw tooMany(o.maxPerUser)
    const options = await webauthn.generateRegistrationOptions({
      rpName: o.rpName,
      rpID: o.rpID,
      userName: user.name,
      userDisplayName: user.name,
      userID: userHandleOf(user.id),
      timeout: o.challengeTtlMs,
      attestationType: 'none',
      // The browser refuses an authenticator that already holds one of this user's passkeys.
      excludeCredentials: existing.map((c) => ({ id: c.id, transports: c.transports })),
      // Discoverable, so that the passkey alone can sign in later (no user name typed).
      authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: o.userVerification }
    })
    await ceremonies.begin(request, reply, 'register', { challenge: options.challenge, userId: user.id, sessionId })
    return options
  })

  scope.post('/register', signedIn, async (request, reply) => {
    const { user, sessionId } = await kit.sessions.cookie(request, reply)
    const response = readRegistration(request.body)
    const label = readLabel(request.body)
    const record = await ceremonies.finish(request, reply, 'register')
    // Options asked while signed in as someone else, or in another session, add nothing here.
    if (record.userId !== user.id) throw new HttpError(403, 'forbidden', 'the passkey challenge was issued to another user', ErrorCodes.FORBIDDEN)
    if (record.sessionId !== sessionId) throw new HttpError(403, 'forbidden', 'the passkey challenge was issued to another session', ErrorCodes.FORBIDDEN)
    const verified = await webauthn.verifyRegistrationResponse({
      response,
      ...expectations(o, record.challenge),
      requireUserVerification: o.userVerification === 'required'
    }).catch((err: unknown) => {
      log('WARN', 'registration for user %s refused: %s', user.id, reasonOf(err))
      throw refused('the passkey response does not verify (origin, RP id, challenge or format)')
    })
    if (!verified.verified) throw refused('the passkey response does not verify')
    const info = verified.registrationInfo
    // The id the authenticator put in its signed data is the one that counts; the browser's must agree with it.
    if (info.credential.id !== response.id) throw refused('the credential id does not match the authenticator data')
    const credential = credentialOf(info, response.response.transports ?? [], user, label)
    const added = await passkeys.add(credential, o.maxPerUser)
    if (added === 'exists') throw new HttpError(409, 'passkey already registered', 'this authenticator\'s passkey is registered already', ErrorCodes.CONFLICT)
    if (added === 'full') throw tooMany(o.maxPerUser)
    log('INFO', 'passkey added for user %s', user.id)
    auditPasskey(ctx, request, 'passkey.added', user.id)
    return await reply.code(201).send(passkeyInfo(credential))
  })

  scope.get('/credentials', signedIn, async (request) => {
    const user = auth.mustGetUser(request)
    return (await passkeys.list(user.id)).map(passkeyInfo)
  })

  scope.delete<{ Params: { id: string } }>('/credentials/:id', signedIn, async (request, reply) => {
    const id = request.params.id
    if (!isCredentialId(id)) throw new HttpError(400, 'bad request', 'malformed passkey id')
    const { user } = await kit.sessions.fresh(request, reply, bodyFields(request))
    // Another user's passkey answers exactly as an unknown one.
    if (!(await passkeys.remove(user.id, id))) throw new HttpError(404, 'not found', 'no such passkey')
    log('INFO', 'passkey removed for user %s', user.id)
    auditPasskey(ctx, request, 'passkey.removed', user.id)
    return await reply.send({ status: 'deleted', id })
  })
}

/** `passkey.added` / `passkey.removed` for the signed-in user (no credential data: the user id says whose). */
function auditPasskey (ctx: PasskeyContext, request: FastifyRequest, type: 'passkey.added' | 'passkey.removed', userId: string): void {
  const audit = ctx.kit.audit
  if (audit.on) audit.emit(request, type, { reason: type === 'passkey.added' ? 'registered' : 'removed_by_user', provider: ctx.o.name, userId })
}

/** What is kept of the user with the passkey: who they are, not what a session added (roles come from the claims updater). */
function storedUser (user: UserData): UserData {
  const u: UserData = { name: user.name, id: user.id }
  if (typeof user.email === 'string') u.email = user.email
  return u
}

function refused (details: string): HttpError {
  return new HttpError(400, 'passkey refused', details, ErrorCodes.PASSKEY)
}

function tooMany (max: number): HttpError {
  return new HttpError(409, 'too many passkeys', `a user may hold at most ${max} passkeys: delete one first`, ErrorCodes.CONFLICT)
}
