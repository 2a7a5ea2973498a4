/**
 * The guard of `admin` and `rbac(roles)`: a signed-in user who must also hold something (the admin flag, one of the
 * roles). 401 without a user (as `authenticate`), 403 without the privilege, and that 403 is an audit event,
 * `access.denied` (ASVS 5.0 16.3.2: a failed authorization is logged), naming the route, the method and what was
 * required, so that a user probing the admin routes shows in the log without the app logging it itself.
 */
import type { FastifyRequest } from 'fastify'
import type { ResolveUser } from './types.js'
import type { User } from '../lib/user.js'
import type { Audit } from '../lib/audit/audit.js'
import { HttpError } from '../lib/errors.js'
import { requireUser, userHook, type UserHook } from './authenticate.js'

/** What a privileged route requires, as its refusal and its audit event name it. */
export interface Privilege {
  /** The event's reason: `admin` (the admin hook) or `role` (rbac). */
  reason: 'admin' | 'role'
  /** The roles that would have let the user in (`['admin']` for the admin hook). */
  required: readonly string[]
  holds: (user: User) => boolean
  /** The 403's details. */
  details: string
}

export function privilegeHook (resolve: ResolveUser, audit: Audit, privilege: Privilege): UserHook {
  return userHook(resolve, (request, resolved) => {
    if (resolved instanceof HttpError) return resolved
    const missing = requireUser(resolved)
    if (missing !== null) return missing
    const user = resolved!
    if (!privilege.holds(user)) {
      if (audit.on) denied(request, audit, privilege, user)
      return new HttpError(403, 'forbidden', privilege.details)
    }
    request.user = user
    return undefined
  })
}

function denied (request: FastifyRequest, audit: Audit, privilege: Privilege, user: User): void {
  audit.emit(request, 'access.denied', {
    reason: privilege.reason,
    userId: user.id,
    method: request.method,
    // The route's pattern (`/api/users/:id`), not the URL: no ids or query values of the request in the log.
    route: request.routeOptions.url ?? '',
    required: [...privilege.required]
  })
}
