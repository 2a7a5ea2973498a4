/**
 * Spans of the package's own steps (a login step, an outbound call, a state-store call), children of whatever
 * span is active (Fastify's request span when @fastify/otel is registered). Attributes follow the OpenTelemetry
 * semantic conventions; none carries a token, a secret, a one-time value or a query value.
 */
import type { Attributes, Span } from '@opentelemetry/api'
import { telemetry } from './api.js'
import { redactedQuery } from './request-hook.js'

/** Span kinds used here (the API's `SpanKind` values, without loading it). */
export const SpanKinds = { INTERNAL: 0, CLIENT: 2 } as const

/**
 * Runs `fn` inside a span `name` when a tracer is registered; else just runs it. A rejection sets `error.type`
 * (see `errorType`) and the error status, and is rethrown; the exception itself is not recorded (a message
 * may quote a peer's answer).
 */
export async function inSpan<T> (name: string, attributes: Attributes, fn: (span: Span | undefined) => Promise<T>, kind: number = SpanKinds.INTERNAL): Promise<T> {
  const tracer = telemetry.state?.tracer
  if (tracer === undefined) return await fn(undefined)
  return await tracer.startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await fn(span)
    } catch (err) {
      failSpan(span, errorType(err))
      throw err
    } finally {
      span.end()
    }
  })
}

/** Marks a span failed with an `error.type` (status ERROR, its message the same low-cardinality type). */
export function failSpan (span: Span, type: string): void {
  span.setAttribute('error.type', type)
  span.setStatus({ code: 2, message: type })
}

/**
 * The `error.type` of an error: the package's error code (`GATEHOUSE_UPSTREAM_TIMEOUT`), an outbound failure's
 * reason (`timeout`), a token endpoint refusal's RFC 6749 code (`invalid_grant`), an error's class name, or `_OTHER`.
 */
export function errorType (err: unknown): string {
  const e = err as { code?: unknown, reason?: unknown, name?: unknown, error?: unknown } | undefined
  if (typeof e?.reason === 'string' && e.name === 'OutboundError') return e.reason
  if (typeof e?.error === 'string' && e.name === 'OAuthError') return e.error
  if (typeof e?.code === 'string' && e.code.startsWith('GATEHOUSE_')) return e.code
  return typeof e?.name === 'string' && e.name !== '' ? e.name : '_OTHER'
}

/**
 * `url.full` without secrets: no user info, every query value replaced by `REDACTED` (the names stay), no
 * fragment; `path` replaces the path when it holds a secret itself (the Bot API's `/bot<token>/method`).
 */
export function traceUrl (url: URL, path?: string): string {
  const query = url.search === '' ? '' : `?${redactedQuery(url.searchParams)}`
  return `${url.protocol}//${url.host}${path ?? url.pathname}${query}`
}

/** The semantic-convention attributes of an outbound HTTP call. */
export function httpClientAttributes (url: URL, method: string, path?: string): Attributes {
  const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80
  return { 'http.request.method': method, 'url.full': traceUrl(url, path), 'server.address': url.hostname.replace(/^\[(.*)\]$/, '$1'), 'server.port': port }
}
