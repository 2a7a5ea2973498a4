/**
 * The audience rule (`audiences`): when the list is non-empty, only its audiences get sessions, pass the hooks
 * and start logins. One rule, three answers, depending on where an audience is refused.
 */
import { ErrorCodes, HttpError } from '../../../lib/errors.js'
import { unauthorized } from './claims.js'

export class AudienceRule {
  /** null when every audience is allowed. */
  private readonly allowed: ReadonlySet<string> | null
  constructor (audiences: readonly string[]) {
    this.allowed = audiences.length > 0 ? new Set(audiences) : null
  }

  /** True when the rule lets `aud` through. One Set lookup, none without a list. */
  allows (aud: string): boolean {
    return this.allowed === null || this.allowed.has(aud)
  }

  /** A presented session token of another audience: 401 `GATEHOUSE_FORBIDDEN`. */
  checkSession (aud: string): void {
    if (!this.allows(aud)) throw unauthorized('audience not allowed', ErrorCodes.FORBIDDEN)
  }

  /** A session being created for another audience (`''`: none given): 403. */
  checkCreation (aud: string): void {
    if (this.allows(aud)) return
    throw new HttpError(403, 'forbidden', aud === '' ? 'an audience (site) is required' : `audience "${aud}" is not allowed`)
  }

  /** A login asking for another audience, or for none while a list is set: 403, before anything is sent or stored. */
  checkLogin (aud: string | undefined): void {
    if (this.allowed === null) return
    if (aud === undefined) throw new HttpError(403, 'forbidden', 'an audience (site) is required')
    if (!this.allowed.has(aud)) throw new HttpError(403, 'forbidden', `audience "${aud}" is not allowed`)
  }
}
