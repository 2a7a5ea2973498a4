import type { FastifyReply, FastifyRequest } from 'fastify'
import type { UpdateUser } from './types.js'
import { User } from '../lib/user.js'
import { optionalUserHook } from './optional-user.js'
import type { ResolveUser } from './types.js'

/**
 * onRequest or preHandler: replaces `request.user` through the updater on every request. Resolves the user itself when
 * no earlier hook did; a request without a user passes through untouched. The updater gets a copy it may change.
 */
export function updateUserHook (resolve: ResolveUser, updater: UpdateUser) {
  const attach = optionalUserHook(resolve)
  return async function gatehouseUpdateUser (request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (request.user == null) await attach(request, reply)
    if (request.user == null) return
    // A copy: the user of a session is shared (and frozen), this request's changes are its own.
    const updated = await updater(new User(request.user))
    request.user = updated instanceof User ? updated : new User(updated)
  }
}
