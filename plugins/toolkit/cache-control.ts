/**
 * cacheControl: `Cache-Control: max-age=<s>, no-cache` and an `ETag` on every answer, and 304 Not Modified to a
 * GET or HEAD whose `If-None-Match` carries that ETag, before the handler runs: go-pkgz/rest's `CacheControl`
 * and `CacheControlDynamic`.
 *
 * The ETag is not a hash of the body: it is the SHA-1 of `<version>:<URL>` (path and query), so it names "this
 * URL as of this version of the content" and can be checked without producing the answer. Bump `version` (a
 * release tag, a data revision, or a function of the request such as the user's last change) whenever what the
 * URL answers changes. `no-cache` makes clients revalidate each time, which is then a cheap 304.
 *
 * `If-None-Match` is compared as RFC 9110 §13.1.2 says for it (weak comparison: `W/"x"` matches `"x"`), over a
 * comma-separated list. `*` is not taken as a match: it asks whether any representation exists, which only the
 * handler knows. Other methods go to the handler untouched, since their preconditions are the handler's to enforce.
 */
import fp from 'fastify-plugin'
import { createHash } from 'node:crypto'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { OptionsError } from '../../lib/errors.js'
import type { ToolkitHook } from './hook.js'

export interface CacheControlOptions {
  /** Seconds a client may keep the answer (`max-age`): a non-negative integer. Required. */
  maxAge: number
  /**
   * What the ETag is made of besides the URL: a fixed string (a release), or a function of the request
   * (returning a string). Required.
   */
  version: string | ((request: FastifyRequest) => string)
}

/** `"<sha1 hex>"` of `<version>:<url>`: the ETag the plugin sends for this request. */
export function cacheEtag (version: string, url: string): string {
  return `"${createHash('sha1').update(`${version}:${url}`).digest('hex')}"`
}

/**
 * Whether an `If-None-Match` header carries `etag` by the weak comparison (the `W/` prefix ignored on both
 * sides); `*` and empty entries match nothing.
 */
export function etagMatches (header: string | undefined, etag: string): boolean {
  if (header === undefined || header === '') return false
  const wanted = etag.startsWith('W/') ? etag.slice(2) : etag
  for (const entry of header.split(',')) {
    const tag = entry.trim()
    if (tag === '' || tag === '*') continue
    if ((tag.startsWith('W/') ? tag.slice(2) : tag) === wanted) return true
  }
  return false
}

type Apply = (request: FastifyRequest, reply: FastifyReply) => boolean

/** The per-request step: sets the headers and tells whether the answer is a 304 (already sent). */
function compile (opts: CacheControlOptions): Apply {
  if (opts === null || typeof opts !== 'object') throw new OptionsError('cacheControl', 'must be an object')
  const { maxAge, version } = opts
  if (typeof maxAge !== 'number' || !Number.isSafeInteger(maxAge) || maxAge < 0) throw new OptionsError('cacheControl.maxAge', 'must be a non-negative integer of seconds')
  if (typeof version !== 'string' && typeof version !== 'function') throw new OptionsError('cacheControl.version', 'must be a string or a function of the request returning one')
  const versionOf = typeof version === 'string' ? () => version : version
  const cacheControl = `max-age=${maxAge}, no-cache`
  return (request, reply) => {
    const v = versionOf(request)
    // A version function that returns no string is a bug of the application: fail loud (500), do not cache.
    if (typeof v !== 'string') throw new TypeError('cacheControl.version returned no string')
    const etag = cacheEtag(v, request.url)
    reply.header('etag', etag).header('cache-control', cacheControl)
    if ((request.method === 'GET' || request.method === 'HEAD') && etagMatches(request.headers['if-none-match'], etag)) {
      reply.code(304).send()
      return true
    }
    return false
  }
}

/** Route-level form: `{ onRequest: cacheControlHook({ maxAge: 60, version: 'v1' }) }`. */
export function cacheControlHook (opts: CacheControlOptions): ToolkitHook {
  const apply = compile(opts)
  return async function cacheControl (request, reply) {
    if (apply(request, reply)) await reply
  }
}

const cacheControlPluginImpl: FastifyPluginAsync<CacheControlOptions> = async (fastify, opts) => {
  const apply = compile(opts)
  fastify.addHook('onRequest', (request, reply, done) => {
    // A 304 was sent: Fastify's rule for a hook that answers is not to call done.
    if (!apply(request, reply)) done()
  })
}

/** `fastify.register(cacheControlPlugin, { maxAge: 3600, version: '1.4.2' })`: every route of the context. */
export const cacheControlPlugin = fp(cacheControlPluginImpl, { name: 'gatehouse-cache-control', fastify: '5.x' })
