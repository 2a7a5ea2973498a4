import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ResolveUser } from './types.js'
import type { User } from '../lib/user.js'
import { HttpError, refuse } from '../lib/errors.js'

/** Outcome of a guard: the user to attach, or the error to answer with. */
export type Guard = (user: User | null) => HttpError | null

/**
 * Builds a hook (for `onRequest`, where cookies are parsed already, or `preHandler`) that resolves the user,
 * applies `guard`, and either attaches the user or refuses the request (see `refuse`: thrown to the app's error
 * handler when it has one, else answered `{error, details?, code}`). authenticate, admin and rbac are this with
 * different guards.
 */
export function guardedHook (resolve: ResolveUser, guard: Guard) {
  // Answering hooks return the reply: without it, Fastify carries on to the handler whenever an async onSend
  // hook delays the send (the client would get the 401, but the handler's side effects would happen).
  return async function gatehouseGuard (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    let user: User | null
    try {
      // A session served from the cache resolves synchronously: nothing is awaited on the hot path.
      const resolved = resolve(request, reply)
      user = resolved instanceof Promise ? await resolved : resolved
    } catch (err) {
      if (err instanceof HttpError) return refuse(request, reply.header('cache-control', 'no-store'), err)
      throw err
    }
    const denied = guard(user)
    if (denied !== null) return refuse(request, reply.header('cache-control', 'no-store'), denied)
    request.user = user
    return undefined
  }
}

export const requireUser: Guard = (user) => user === null ? new HttpError(401, 'unauthorized', 'not logged in') : null

/** onRequest or preHandler: a signed-in user is required. */
export function authenticateHook (resolve: ResolveUser) {
  return guardedHook(resolve, requireUser)
}
