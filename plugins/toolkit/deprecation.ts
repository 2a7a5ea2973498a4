/**
 * deprecation: marks the responses of deprecated routes with the `Deprecation` header of
 * draft-ietf-httpapi-deprecation-header-02: `true` when the resource is deprecated now, or an HTTP date
 * (IMF-fixdate) when it is or will be deprecated at that time. `format: 'rfc9745'` writes the later
 * Structured-Field date form (`@<unix seconds>`) of RFC 9745 instead. Optionally a
 * `Link: <…>; rel="deprecation"` to documentation and a `Sunset` date (RFC 8594).
 */
import fp from 'fastify-plugin'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { OptionsError } from '../../lib/errors.js'
import type { ToolkitHook } from './hook.js'

export interface DeprecationOptions {
  /** When the resource was or will be deprecated. Default: deprecated now (`Deprecation: true`). */
  date?: Date | string | number | undefined
  /** Header syntax: the draft-02 form (default) or RFC 9745's `@seconds` (which requires `date`). */
  format?: 'draft-02' | 'rfc9745' | undefined
  /** Documentation of the deprecation, sent as `Link: <link>; rel="deprecation"`. Absolute http(s) URL. */
  link?: string | undefined
  /** When the resource goes away, sent as `Sunset` (HTTP date). Must not precede `date`. */
  sunset?: Date | string | number | undefined
}

/** Validates the options once and returns the header pairs. */
export function deprecationHeaders (opts: DeprecationOptions = {}): Array<[string, string]> {
  const format = opts.format ?? 'draft-02'
  if (format !== 'draft-02' && format !== 'rfc9745') throw new OptionsError('deprecation.format', 'must be "draft-02" or "rfc9745"')
  const date = opts.date === undefined ? undefined : toDate('deprecation.date', opts.date)
  if (format === 'rfc9745' && date === undefined) throw new OptionsError('deprecation.date', 'is required by the rfc9745 format')
  const pairs: Array<[string, string]> = []
  if (date === undefined) pairs.push(['Deprecation', 'true'])
  else if (format === 'rfc9745') pairs.push(['Deprecation', `@${Math.floor(date.getTime() / 1000)}`])
  else pairs.push(['Deprecation', date.toUTCString()])
  if (opts.link !== undefined) pairs.push(['Link', `<${checkLink(opts.link)}>; rel="deprecation"; type="text/html"`])
  if (opts.sunset !== undefined) {
    const sunset = toDate('deprecation.sunset', opts.sunset)
    if (date !== undefined && sunset.getTime() < date.getTime()) throw new OptionsError('deprecation.sunset', 'must not be earlier than date')
    pairs.push(['Sunset', sunset.toUTCString()])
  }
  return pairs
}

/**
 * Route-level form: `onRequest: deprecationHook({ date, link })`. It runs before the handler, so a Link the
 * handler sets afterwards replaces the deprecation link; the plugin form merges them.
 */
export function deprecationHook (opts: DeprecationOptions = {}): ToolkitHook {
  const pairs = deprecationHeaders(opts)
  return async function deprecationHook (_request, reply) { setAll(reply, pairs) }
}

/**
 * fastify-plugin: it marks the context it is registered in, so register it inside the scope (a plugin or a
 * prefix) that holds the deprecated routes, or use `deprecationHook` on single routes.
 */
const deprecationPluginImpl: FastifyPluginAsync<DeprecationOptions> = async (fastify, opts) => {
  const pairs = deprecationHeaders(opts)
  // onSend, after the handler: a Link header the handler set is extended rather than overwritten.
  fastify.addHook('onSend', (_request: FastifyRequest, reply: FastifyReply, payload: unknown, next: (err: null, payload: unknown) => void) => {
    setAll(reply, pairs)
    next(null, payload)
  })
}

export const deprecationPlugin = fp(deprecationPluginImpl, { name: 'gatehouse-deprecation', fastify: '5.x' })

function setAll (reply: FastifyReply, pairs: Array<[string, string]>): void {
  for (const [k, v] of pairs) {
    // A Link set by the application is kept: Link is a list, so append.
    if (k === 'Link' && reply.hasHeader('link')) reply.header('Link', `${String(reply.getHeader('link'))}, ${v}`)
    else reply.header(k, v)
  }
}

function toDate (name: string, value: unknown): Date {
  const d = value instanceof Date ? value : (typeof value === 'string' || typeof value === 'number') ? new Date(value) : null
  if (d === null || Number.isNaN(d.getTime())) throw new OptionsError(name, 'must be a valid date (Date, ISO string or epoch milliseconds)')
  return d
}

function checkLink (link: unknown): string {
  let url: URL | null = null
  try { url = typeof link === 'string' ? new URL(link) : null } catch { url = null }
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new OptionsError('deprecation.link', 'must be an absolute http(s) URL')
  }
  return url.href
}
