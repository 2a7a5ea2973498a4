import type { ResolveUser } from './types.js'
import type { Audit } from '../lib/audit/audit.js'
import type { UserHook } from './authenticate.js'
import { privilegeHook } from './privilege.js'

/** onRequest or preHandler: a user holding one of `roles` is required (401 without a user, 403 otherwise, audited as `access.denied`). */
export function rbacHook (resolve: ResolveUser, roles: readonly string[], audit: Audit): UserHook {
  if (!Array.isArray(roles) || roles.length === 0 || !roles.every((r) => typeof r === 'string' && r !== '')) {
    throw new TypeError('fastify-gatehouse: rbac(roles) needs a non-empty list of role names')
  }
  const allowed = [...roles]
  return privilegeHook(resolve, audit, { reason: 'role', required: allowed, holds: (user) => user.hasRole(allowed), details: `requires role: ${allowed.join(', ')}` })
}
