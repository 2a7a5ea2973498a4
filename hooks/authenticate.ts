import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ResolveUser } from './types.js'
import type { User } from '../lib/user.js'
import { ErrorCodes, HttpError, refuse } from '../lib/errors.js'

/** Outcome of a guard: the user to attach, or the error to answer with. */
export type Guard = (user: User | null) => HttpError | null

/** Fastify's (and @fastify/auth's) `done` of a callback-style hook. */
type HookDone = (err?: Error) => void

/** A user hook's two forms: awaited by the app's code, or called back by Fastify. */
export interface UserHook {
  (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined>
  (request: FastifyRequest, reply: FastifyReply, done: HookDone): void
}

/**
 * What a user hook decides for a request: undefined to go on (the user attached), or the refusal to answer with.
 * `resolved` is the user the request carries, or the HttpError its credentials earned.
 */
export type Decide = (request: FastifyRequest, resolved: User | null | HttpError) => HttpError | undefined

/**
 * A hook (for `onRequest`, or `preHandler`) that resolves the user, lets `decide` judge it, and either goes on or
 * refuses the request (see `refuse`: thrown to the app's error handler when it has one, else answered
 * `{error, details?, code}`). authenticate, admin, rbac and trace are this with different decisions.
 *
 * It has both of Fastify's hook forms in one function. Called with `done` (by Fastify, or @fastify/auth), it is a
 * callback hook: a session served from the verified-session cache is decided and `done()` called at once, with no
 * promise made; only a session that must be verified waits. A refusal answered by the hook itself does not call
 * `done`, so that Fastify stops the chain even when an async `onSend` hook delays the answer (the handler's side
 * effects never happen). Called without `done` (awaited by code of the app's), it answers a promise of the reply
 * it refused with, or of undefined.
 */
export function userHook (resolve: ResolveUser, decide: Decide): UserHook {
  const realm = realmChallenge(resolve)
  /** The decision, synchronous when the user is. Errors other than HttpError are thrown (or rejected) as they are. */
  function decision (request: FastifyRequest, reply: FastifyReply): HttpError | undefined | Promise<HttpError | undefined> {
    let resolved: User | null | Promise<User | null>
    try {
      resolved = resolve(request, reply)
    } catch (err) {
      return decide(request, httpErrorOrThrow(err))
    }
    if (!(resolved instanceof Promise)) return decide(request, resolved)
    return resolved.then((user) => decide(request, user), (err: unknown) => decide(request, httpErrorOrThrow(err)))
  }

  return function gatehouseUserHook (request: FastifyRequest, reply: FastifyReply, done?: HookDone): Promise<FastifyReply | undefined> | undefined {
    if (done === undefined) return awaited(request, reply, decision(request, reply), realm)
    let decided: HttpError | undefined | Promise<HttpError | undefined>
    try {
      decided = decision(request, reply)
    } catch (err) {
      done(err as Error)
      return undefined
    }
    if (decided instanceof Promise) decided.then((d) => { settle(request, reply, d, done, realm) }, done)
    else settle(request, reply, decided, done, realm)
    return undefined
  } as UserHook
}

function httpErrorOrThrow (err: unknown): HttpError {
  if (err instanceof HttpError) return err
  throw err
}

/** Ends a callback-form hook: `done()` to go on, `done(err)` to the app's error handler, or nothing once answered. */
function settle (request: FastifyRequest, reply: FastifyReply, refusal: HttpError | undefined, done: HookDone, realm: string): void {
  if (refusal === undefined) {
    done()
    return
  }
  try {
    refuse(request, challenged(request, reply.header('cache-control', 'no-store'), refusal, realm), refusal)
  } catch (err) {
    done(err as Error)
  }
}

/** The promise form: the refused reply (so that Fastify stops the chain), or undefined to go on. */
async function awaited (request: FastifyRequest, reply: FastifyReply, decided: HttpError | undefined | Promise<HttpError | undefined>, realm: string): Promise<FastifyReply | undefined> {
  const refusal = await decided
  return refusal === undefined ? undefined : refuse(request, challenged(request, reply.header('cache-control', 'no-store'), refusal, realm), refusal)
}

const BEARER_SCHEME = /^bearer /i
const BASIC_SCHEME = /^basic /i

/** The challenge part naming the realm (`realm="…"`, a quoted-string) of a resolver's hooks. */
export function realmChallenge (resolve: ResolveUser): string {
  const realm = typeof resolve.realm === 'string' && resolve.realm !== '' ? resolve.realm : 'fastify-gatehouse'
  // A quoted-string of printable ASCII: anything else in the issuer would make the header unsendable.
  return `realm="${realm.replace(/[^\x20-\x7e]/g, '?').replace(/[\\"]/g, '\\$&')}"`
}

/**
 * Every 401 carries a challenge (RFC 9110 §11.6.1), in the scheme the request tried: `Bearer realm="…"` without
 * credentials (RFC 6750 §3: no error code then) or with a cookie, `Basic realm="…"` to basic credentials the hooks
 * checked (`basicAuth`) and refused.
 * A request that came with `Authorization: Bearer` is told why it was refused (RFC 6750 §3.1): `invalid_token` with
 * 401 (bad, expired or revoked), `insufficient_scope` with 403 (admin, rbac), and with a 401 of step-up (`recent`)
 * `insufficient_user_authentication` (RFC 9470 §3).
 */
export function challenged (request: FastifyRequest, reply: FastifyReply, refusal: HttpError, realm: string): FastifyReply {
  const credentials = request.headers.authorization
  const bearer = typeof credentials === 'string' && BEARER_SCHEME.test(credentials)
  if (refusal.statusCode === 401) {
    // Basic only to basic credentials the hooks checked and refused: a browser answers a Basic challenge with a prompt.
    const basic = refusal.code === ErrorCodes.CREDENTIALS && typeof credentials === 'string' && BASIC_SCHEME.test(credentials)
    if (!bearer) return reply.header('www-authenticate', `${basic ? 'Basic' : 'Bearer'} ${realm}`)
    return reply.header('www-authenticate', refusal.code === ErrorCodes.STEP_UP ? `Bearer ${realm}, error="insufficient_user_authentication"` : 'Bearer error="invalid_token"')
  }
  if (refusal.statusCode === 403 && bearer) return reply.header('www-authenticate', 'Bearer error="insufficient_scope"')
  return reply
}

/** A guard's hook: a refused credential or guard answers; otherwise the user is attached. */
export function guardedHook (resolve: ResolveUser, guard: Guard): UserHook {
  return userHook(resolve, (request, resolved) => {
    if (resolved instanceof HttpError) return resolved
    const denied = guard(resolved)
    if (denied !== null) return denied
    request.user = resolved
    return undefined
  })
}

export const requireUser: Guard = (user) => user === null ? new HttpError(401, 'unauthorized', 'not logged in') : null

/** onRequest or preHandler: a signed-in user is required. */
export function authenticateHook (resolve: ResolveUser): UserHook {
  return guardedHook(resolve, requireUser)
}
