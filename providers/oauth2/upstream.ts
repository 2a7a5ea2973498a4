/**
 * Outbound HTTP to an OAuth2 provider (token endpoint, userinfo, discovery). Every call has one deadline that
 * covers connecting, the status line and the whole body, and a size cap, so a provider that hangs, trickles or
 * floods never holds a login request open: it becomes a 504 (no answer in time) or 502 (bad answer) JSON error.
 */
import { ErrorCodes, HttpError } from '../../lib/errors.js'

/** Default deadline of one call to a provider. */
export const DEFAULT_TIMEOUT_MS = 10_000
const USER_AGENT = 'fastify-gatehouse'
/** Largest provider answer read; token and userinfo answers are a few kilobytes. */
const MAX_BODY_BYTES = 1 << 20

/** A provider answered something unusable, or could not be reached: 502 `GATEHOUSE_UPSTREAM`. */
export function upstreamError (error: string, details?: string): HttpError {
  return new HttpError(502, error, details, ErrorCodes.UPSTREAM)
}

/** A provider did not answer in time: 504 `GATEHOUSE_UPSTREAM_TIMEOUT`. */
export function upstreamTimeout (error: string, details?: string): HttpError {
  return new HttpError(504, error, details, ErrorCodes.UPSTREAM_TIMEOUT)
}

export interface UpstreamAnswer {
  status: number
  contentType: string
  body: Buffer
}

/**
 * Calls a provider endpoint. `what` names the endpoint in error messages ("token endpoint", "userinfo").
 * Throws HttpError 504 (`GATEHOUSE_UPSTREAM_TIMEOUT`) on timeout, 502 (`GATEHOUSE_UPSTREAM`) when the provider
 * cannot be reached or answers too much.
 */
export async function callProvider (url: string, init: RequestInit, what: string, timeoutMs: number): Promise<UpstreamAnswer> {
  const signal = AbortSignal.timeout(timeoutMs)
  // Some APIs (GitHub) refuse requests without a User-Agent.
  const headers = new Headers(init.headers)
  if (!headers.has('user-agent')) headers.set('user-agent', USER_AGENT)
  try {
    const res = await fetch(url, { ...init, headers, signal, redirect: 'error' })
    const body = await readCapped(res, what)
    return { status: res.status, contentType: res.headers.get('content-type') ?? '', body }
  } catch (err) {
    if (err instanceof HttpError) throw err
    if (signal.aborted) throw upstreamTimeout(`${what} did not answer in time`, `no answer within ${timeoutMs} ms`)
    throw upstreamError(`${what} unreachable`, (err as Error).message)
  }
}

async function readCapped (res: Response, what: string): Promise<Buffer> {
  if (res.body === null) return Buffer.alloc(0)
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength
    if (size > MAX_BODY_BYTES) throw upstreamError(`${what} answer too large`, `more than ${MAX_BODY_BYTES} bytes`)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
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

/** A short, printable excerpt of a provider's text for `details` (never a token: only error fields use it). */
export function excerpt (value: unknown, max = 120): string {
  return String(value).replace(/[^\x20-\x7e]/g, '?').slice(0, max)
}
