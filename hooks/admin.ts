import type { ResolveUser } from './types.js'
import type { Audit } from '../lib/audit/audit.js'
import type { UserHook } from './authenticate.js'
import { privilegeHook } from './privilege.js'

/** onRequest or preHandler: an admin user is required (401 without a user, 403 for anyone else, audited as `access.denied`). */
export function adminHook (resolve: ResolveUser, audit: Audit): UserHook {
  return privilegeHook(resolve, audit, { reason: 'admin', required: ['admin'], holds: (user) => user.isAdmin(), details: 'admin only' })
}
