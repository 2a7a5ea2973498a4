import type { FastifyReply, FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError } from '../../../lib/errors.js'
import { safeEqual } from '../../../lib/compare.js'
import { parseBasicCredentials } from '../../../lib/basic-credentials.js'
import type { ResolvedOptions, Session } from '../base/types.js'
import type { CoreTokenService } from '../sessions/tokens.js'
import type { Throttle } from '../../../lib/throttle/throttle.js'
import { User } from '../../../lib/user.js'

/**
 * Reads the user of a request from basic auth (when enabled) or a session token. Synchronous for a session served
 * from the verified-session cache (the hooks then answer without waiting on anything).
 */
export interface UserResolver {
  (request: FastifyRequest, reply: FastifyReply): User | null | Promise<User | null>
  /** The realm of the hooks' 401 challenges: the `issuer`. */
  readonly realm: string
}

const ADMIN: User = new User({ name: 'admin', id: 'admin', attrs: { admin: true } })

export function createUserResolver (o: Pick<ResolvedOptions, 'basicAuth' | 'issuer'>, tokens: CoreTokenService, throttle: Throttle): UserResolver {
  const { checker, adminPasswd } = o.basicAuth
  const basicEnabled = checker !== undefined || adminPasswd !== undefined

  async function fromBasic (creds: { user: string; passwd: string }): Promise<User> {
    if (checker !== undefined) {
      const res = await checker(creds.user, creds.passwd)
      if (res?.ok !== true) throw new HttpError(401, 'unauthorized', 'basic auth credentials rejected', ErrorCodes.CREDENTIALS)
      return new User(res.user ?? { name: creds.user, id: creds.user })
    }
    // Both comparisons always run, so timing does not tell a wrong user from a wrong password.
    const userOk = safeEqual(creds.user, 'admin')
    const passOk = safeEqual(creds.passwd, adminPasswd!)
    if (!userOk || !passOk) throw new HttpError(401, 'unauthorized', 'basic auth credentials rejected', ErrorCodes.CREDENTIALS)
    return new User(ADMIN.toJSON())
  }

  const userOf = (session: Session | null): User | null => {
    if (session === null) return null
    // Frozen and shared by every request of this session (see updateUser for changing it for one request).
    if (session.user === null) throw new HttpError(401, 'unauthorized', 'token carries no user')
    return session.user
  }

  const resolve = (request: FastifyRequest, reply: FastifyReply): User | null | Promise<User | null> => {
    if (basicEnabled) {
      const creds = parseBasicCredentials(request.headers.authorization)
      if (creds.status === 'malformed') throw new HttpError(401, 'unauthorized', creds.reason)
      // Lockout after failed checks (rateLimit.failures): 429 while this user name or address is locked.
      if (creds.status === 'ok') return throttle.guard(request, `basic:${creds.user}`, async () => await fromBasic(creds))
    }
    const session = tokens.session(request, reply)
    return session instanceof Promise ? session.then(userOf) : userOf(session)
  }
  return Object.assign(resolve, { realm: o.issuer })
}
