/**
 * Outbound HTTP to an OAuth2 provider (token endpoint, userinfo, discovery, JWKS), over the package's one
 * outbound call (lib/http): a deadline of its own that destroys the socket when it fires, covering connecting,
 * the status line and the whole body, and a byte cap on the wire and after decompression. A provider that
 * hangs, trickles or floods becomes a 504 (no answer in time) or 502 (bad answer) JSON error. Client-facing
 * details are our own words (the endpoint, a status code, a registered OAuth2 error code), never the
 * provider's address or text; the underlying cause travels as the error's `cause` for the one log line.
 */
import { ErrorCodes, HttpError } from '../../lib/errors.js'
import { Deadline, outboundRequest, OutboundError } from '../../lib/http/request.js'

/** Default deadline of one call to a provider. */
export const DEFAULT_TIMEOUT_MS = 10_000
/** Largest provider answer read (wire and decompressed); token, userinfo, discovery and JWKS answers are a few kilobytes. */
export const MAX_BODY_BYTES = 1 << 20

/** A provider answered something unusable, or could not be reached: 502 `GATEHOUSE_UPSTREAM`. */
export function upstreamError (error: string, details?: string, cause?: unknown): HttpError {
  return new HttpError(502, error, details, ErrorCodes.UPSTREAM, cause === undefined ? undefined : { cause })
}

/** A provider did not answer in time: 504 `GATEHOUSE_UPSTREAM_TIMEOUT`. */
export function upstreamTimeout (error: string, details?: string, cause?: unknown): HttpError {
  return new HttpError(504, error, details, ErrorCodes.UPSTREAM_TIMEOUT, cause === undefined ? undefined : { cause })
}

/** The span each endpoint's call is traced as (see docs/guide/observability.md). */
const SPAN_OF: Record<string, string> = {
  'token endpoint': 'gatehouse.oauth2.token',
  'userinfo endpoint': 'gatehouse.oauth2.userinfo',
  'provider keys': 'gatehouse.oauth2.jwks',
  'discovery endpoint': 'gatehouse.oauth2.discovery'
}

export interface UpstreamAnswer {
  status: number
  contentType: string
  body: Buffer
}

export interface ProviderRequest {
  method?: 'GET' | 'POST' | undefined
  headers?: Record<string, string> | undefined
  body?: string | undefined
}

/**
 * Calls a provider endpoint. `what` names the endpoint in error messages ("token endpoint", "userinfo
 * endpoint"). Throws HttpError 504 (`GATEHOUSE_UPSTREAM_TIMEOUT`) when there is no complete answer within
 * `timeoutMs`, 502 (`GATEHOUSE_UPSTREAM`) when the provider cannot be reached or answers too much or
 * something that cannot be decoded. Redirects are not followed (a 3xx is an answer like any other).
 */
export async function callProvider (url: string, req: ProviderRequest, what: string, timeoutMs: number): Promise<UpstreamAnswer> {
  const deadline = new Deadline(timeoutMs)
  try {
    const span = SPAN_OF[what] ?? 'gatehouse.oauth2.call'
    const ans = await outboundRequest(new URL(url), { ...req, deadline, maxBytes: MAX_BODY_BYTES, span })
    return { status: ans.status, contentType: String(ans.headers['content-type'] ?? ''), body: ans.body }
  } catch (err) {
    throw providerFailure(err, what, timeoutMs)
  } finally {
    deadline.clear()
  }
}

function providerFailure (err: unknown, what: string, timeoutMs: number): HttpError {
  const reason = err instanceof OutboundError ? err.reason : 'unreachable'
  switch (reason) {
    case 'timeout': return upstreamTimeout(`${what} did not answer in time`, `no answer within ${timeoutMs} ms`, err)
    case 'too-large': return upstreamError(`${what} answer too large`, `more than ${MAX_BODY_BYTES} bytes`, err)
    case 'malformed': return upstreamError(`${what} answered garbage`, 'the answer could not be decoded', err)
    default: return upstreamError(`${what} unreachable`, 'the provider could not be reached', err)
  }
}

/** Parses a JSON object answer; anything else (HTML error page, array, truncated JSON) is undefined. */
export function jsonObject (body: Buffer): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(body.toString('utf8'))
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
}

/** A short, printable excerpt of a browser-supplied value for `details` (never a token: only error fields use it). */
export function excerpt (value: unknown, max = 120): string {
  return String(value).replace(/[^\x20-\x7e]/g, '?').slice(0, max)
}

/**
 * The error codes of RFC 6749 §5.2 and §4.1.2.1 (and GitHub's one extra), the only provider error text that
 * reaches a client: anything else a provider puts in `error` is reported as `unrecognised error`.
 */
const OAUTH2_ERROR_CODES = new Set([
  'invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope',
  'access_denied', 'unsupported_response_type', 'server_error', 'temporarily_unavailable', 'bad_verification_code'
])

/** A provider's `error` field as client-facing text: a registered code as is, anything else generic. */
export function oauth2ErrorCode (value: unknown): string {
  return typeof value === 'string' && OAUTH2_ERROR_CODES.has(value) ? value : 'unrecognised error'
}

/** The cause of an error, for the one log line that records a failure (a message, never a stack). */
export function causeOf (err: unknown): string {
  const cause = (err as { cause?: unknown } | undefined)?.cause
  if (cause === undefined) return ''
  return cause instanceof Error ? cause.message : String(cause)
}
