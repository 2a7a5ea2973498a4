/**
 * The checks every session passes on every request, whether it comes from the cache or was just verified: the
 * XSRF rule for cookie sessions and the audience allow-list (`admit`, before anything else happens with the
 * session, refresh included), then the validator (`validated`). Synchronous when the validator is.
 */
import type { FastifyRequest } from 'fastify'
import { ErrorCodes, type HttpError } from '../../../lib/errors.js'
import { unauthorized } from '../base/claims.js'
import { makeXsrfCheck, type XsrfCheck } from './xsrf.js'
import { FROM_COOKIE, type TokenSource } from './token-reader.js'
import type { AudienceRule } from '../base/audience.js'
import type { ResolvedOptions, Session } from '../base/types.js'

/** The refusal's details, also how the audit tells the validator's refusal from others of its code. */
export const VALIDATOR_REFUSAL = 'rejected by validator'
const rejectedByValidator = (): HttpError => unauthorized(VALIDATOR_REFUSAL, ErrorCodes.UNAUTHORIZED)

/**
 * What `admit` is told for the cookie session of one of the package's pages (tokens.ts `pageSession`): no XSRF
 * header (a navigation cannot send one); the page's form carries the session's XSRF value and its handler compares it.
 */
export const PAGE_FORM = -1

export class PostCheck {
  private readonly checkXsrf: XsrfCheck
  private readonly validator: ResolvedOptions['validator']

  constructor (o: Pick<ResolvedOptions, 'validator' | 'cookies' | 'xsrf'>, private readonly audiences: AudienceRule) {
    this.checkXsrf = makeXsrfCheck(o)
    this.validator = o.validator
  }

  /**
   * XSRF (cookie sessions only) and the audience allow-list. Throws HttpError 401. `cookieIn`, `start`, `end`: the
   * XSRF cookie as the token reader's walk of this request's Cookie header found it; `jtiCodes`: the `jti`'s
   * character codes, as a cached entry keeps them (see `XsrfCheck`; the hot path).
   */
  admit (request: FastifyRequest, source: TokenSource | typeof PAGE_FORM, jti: string, aud: string, cookieIn?: string, start?: number, end?: number, jtiCodes?: Uint16Array): void {
    if (source === FROM_COOKIE) this.checkXsrf(request, jti, cookieIn, start, end, jtiCodes)
    this.audiences.checkSession(aud)
  }

  /** The validator's word on every request; synchronous when the validator is. */
  validated<S extends Session> (s: S): S | Promise<S> {
    const validator = this.validator
    if (validator === undefined) return s
    const verdict = validator(s.token, s.claims)
    if (verdict === true) return s
    if (verdict !== null && typeof verdict === 'object' && typeof verdict.then === 'function') {
      return verdict.then((v) => { if (v !== true) throw rejectedByValidator(); return s })
    }
    throw rejectedByValidator()
  }
}
