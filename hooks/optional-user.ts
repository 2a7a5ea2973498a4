import type { ResolveUser } from './types.js'
import { HttpError } from '../lib/errors.js'
import { userHook, type UserHook } from './authenticate.js'

/**
 * `fastify.auth.optionalUser` (go-pkgz's `Trace`): onRequest or preHandler; attaches the user when the request carries a valid session (null otherwise); never
 * refuses. Both hook forms, as the guards (hooks/authenticate.ts).
 */
export function optionalUserHook (resolve: ResolveUser): UserHook {
  return userHook(resolve, (request, resolved) => {
    request.user = resolved instanceof HttpError ? null : resolved
    return undefined
  })
}
