/**
 * The token endpoint's answer (RFC 6749 §5.1, §5.2), checked before anything of it is used: only a usable
 * Bearer access token leaves here. A token is later put in an `Authorization` header, so one with a control
 * character, a non-ASCII character or a space (`"abc\r\nX-Injected: 1"`) is refused here, as a provider
 * failure, before any header is built and without the token appearing in the error or the log. A token of
 * another type (`mac`, `DPoP`, …) must not be used as a Bearer token (RFC 6749 §7.1).
 */
import { HttpError } from '../../lib/errors.js'
import { jsonObject, oauth2ErrorCode, upstreamError, type UpstreamAnswer } from './upstream.js'

/** RFC 6749 Appendix A.12 allows printable ASCII (VSCHAR); the space is left out too: it would split the header. */
const ACCESS_TOKEN = /^[\x21-\x7e]+$/
/** Longer than any provider's token (JWT access tokens included) by far; a longer one is garbage. */
const MAX_ACCESS_TOKEN = 8192

/** A token answer that passed the checks: the parsed fields and the access token. */
export interface TokenAnswer {
  fields: Record<string, unknown>
  accessToken: string
}

/** How one provider's token answers are read. */
export interface TokenAnswerRules {
  /**
   * The provider is documented to answer without `token_type` (Figma): a missing one is taken as Bearer. A
   * `token_type` that is present must still be Bearer.
   */
  tokenTypeOptional?: boolean | undefined
}

/**
 * Checks a token answer. Throws 400 `authorization code rejected` for an expired, reused or forged code
 * (`invalid_grant`: the caller's problem), else 502 `GATEHOUSE_UPSTREAM` for anything unusable.
 */
export function checkTokenAnswer (ans: UpstreamAnswer, rules: TokenAnswerRules = {}): TokenAnswer {
  if (ans.status >= 500) throw upstreamError('token endpoint failed', `status ${ans.status}`)
  const fields = tokenFields(ans)
  if (fields === undefined) throw upstreamError('token endpoint answered garbage', `status ${ans.status}, ${contentTypeName(ans.contentType)}`)
  if (fields.error !== undefined) {
    const code = oauth2ErrorCode(fields.error)
    if (code === 'invalid_grant' || code === 'bad_verification_code') throw new HttpError(400, 'authorization code rejected', code)
    throw upstreamError('token endpoint refused the exchange', code)
  }
  if (ans.status < 200 || ans.status > 299) throw upstreamError('token endpoint failed', `status ${ans.status}`)
  const token = fields.access_token
  if (typeof token !== 'string' || token === '') throw upstreamError('token endpoint answered garbage', 'no access_token')
  if (token.length > MAX_ACCESS_TOKEN || !ACCESS_TOKEN.test(token)) {
    throw upstreamError('token endpoint answered garbage', 'the access_token holds characters an access token cannot have')
  }
  const type = fields.token_type
  if (type === undefined && rules.tokenTypeOptional === true) return { fields, accessToken: token }
  if (typeof type !== 'string' || type.toLowerCase() !== 'bearer') {
    throw upstreamError('token endpoint answered garbage', typeof type === 'string' ? 'token_type is not Bearer' : 'no token_type')
  }
  return { fields, accessToken: token }
}

/** Token answers are JSON; GitHub answers form-encoded when a client forgets `Accept`, so take both. */
function tokenFields (ans: UpstreamAnswer): Record<string, unknown> | undefined {
  if (ans.contentType.includes('application/x-www-form-urlencoded')) {
    const out = Object.fromEntries(new URLSearchParams(ans.body.toString('utf8')))
    return Object.keys(out).length > 0 ? out : undefined
  }
  return jsonObject(ans.body)
}

/** The media type alone, when it looks like one: a provider's header never reaches a client otherwise. */
function contentTypeName (contentType: string): string {
  const type = contentType.split(';')[0]!.trim().toLowerCase()
  return /^[a-z0-9!#$&^_.+-]{1,40}\/[a-z0-9!#$&^_.+-]{1,60}$/.test(type) ? type : 'no content type'
}
