import type { ResolveUser } from './types.js'
import { HttpError } from '../lib/errors.js'
import { guardedHook, requireUser } from './authenticate.js'

/** onRequest or preHandler: a user holding one of `roles` is required (401 without a user, 403 otherwise). */
export function rbacHook (resolve: ResolveUser, roles: readonly string[]) {
  if (!Array.isArray(roles) || roles.length === 0 || !roles.every((r) => typeof r === 'string' && r !== '')) {
    throw new TypeError('fastify-gatehouse: rbac(roles) needs a non-empty list of role names')
  }
  const allowed = [...roles]
  return guardedHook(resolve, (user) => requireUser(user) ?? (user!.hasRole(allowed) ? null : new HttpError(403, 'forbidden', `requires role: ${allowed.join(', ')}`)))
}
