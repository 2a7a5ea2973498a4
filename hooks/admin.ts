import type { ResolveUser } from './types.js'
import { HttpError } from '../lib/errors.js'
import { guardedHook, requireUser } from './authenticate.js'

/** onRequest or preHandler: an admin user is required (401 without a user, 403 for anyone else). */
export function adminHook (resolve: ResolveUser) {
  return guardedHook(resolve, (user) => requireUser(user) ?? (user!.isAdmin() ? null : new HttpError(403, 'forbidden', 'admin only')))
}
