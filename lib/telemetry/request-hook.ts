/**
 * A `requestHook` for @fastify/otel: its request span records `url.path` as the whole request URL, query
 * included, and the package's routes carry one-time values there (an OAuth2 callback's `code` and `state`, a
 * confirmation link's token, a `?token=` session). This hook rewrites `url.path` to the path alone and adds
 * `url.query` with every value replaced by `REDACTED` (the OpenTelemetry conventions' redaction), so that the
 * request spans of a traced app carry no secret either. It loads nothing: the span is used through its
 * `setAttribute` only.
 */

/** The part of an OpenTelemetry span the hook uses. */
export interface AttributeSetter {
  setAttribute(key: string, value: string): unknown
}

/**
 * Pass as `new FastifyOtelInstrumentation({ requestHook: otelRequestHook })`: the request span's `url.path`
 * without the query, and `url.query` with its values redacted.
 */
export function otelRequestHook (span: AttributeSetter, request: { url: string }): void {
  const q = request.url.indexOf('?')
  if (q < 0) return
  span.setAttribute('url.path', request.url.slice(0, q))
  span.setAttribute('url.query', redactedQuery(new URLSearchParams(request.url.slice(q + 1))))
}

/** A query with every value replaced by `REDACTED`, the names kept: `code=REDACTED&state=REDACTED`. */
export function redactedQuery (params: URLSearchParams): string {
  return [...params.keys()].map((k) => `${encodeURIComponent(k)}=REDACTED`).join('&')
}
