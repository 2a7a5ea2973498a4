/**
 * noCache: answers that neither a proxy nor the client may store or reuse.
 *
 * The plugin sets the headers in `onSend`, so they win over anything a handler or a static-file server set,
 * and drops the response validators (`ETag`, `Last-Modified`) there: with no validator the client has nothing
 * to revalidate with. It also removes `If-None-Match` / `If-Modified-Since` from the request, so a handler
 * cannot answer 304 to a client still holding an older cached copy. `If-Match` / `If-Unmodified-Since` are
 * kept: they guard writes (optimistic concurrency), not caching.
 *
 * The hook form (`noCacheHook`, for `maybe`/`wrap`/route options) sets the headers and strips the request
 * validators when it runs; it cannot see validators a handler adds later, which only the plugin removes.
 */
import fp from 'fastify-plugin'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'

/** The headers set on every answer (the `Expires` date is the epoch). */
export const NO_CACHE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'cache-control': 'no-cache, no-store, no-transform, must-revalidate, private, max-age=0',
  pragma: 'no-cache',
  expires: 'Thu, 01 Jan 1970 00:00:00 GMT',
  // nginx's proxy cache honours its own header before Cache-Control.
  'x-accel-expires': '0'
})

const RESPONSE_VALIDATORS = ['etag', 'last-modified']

function stripRequestValidators (request: FastifyRequest): void {
  const h = request.headers
  if (h['if-none-match'] !== undefined) delete h['if-none-match']
  if (h['if-modified-since'] !== undefined) delete h['if-modified-since']
}

/** Hook form: sets the no-cache headers and strips the request's cache validators. */
export async function noCacheHook (request: FastifyRequest, reply: FastifyReply): Promise<void> {
  stripRequestValidators(request)
  reply.headers(NO_CACHE_HEADERS)
}

// Callback-style hooks: on every request of the context, they spare Fastify a promise per hook.
const noCachePluginImpl: FastifyPluginAsync = async (fastify) => {
  fastify.addHook('onRequest', (request, _reply, done) => { stripRequestValidators(request); done() })
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    for (const name of RESPONSE_VALIDATORS) if (reply.hasHeader(name)) reply.removeHeader(name)
    reply.headers(NO_CACHE_HEADERS)
    done(null, payload)
  })
}

/** `fastify.register(noCachePlugin)`: every answer of the encapsulation context is uncacheable. */
export const noCachePlugin = fp(noCachePluginImpl, { name: 'gatehouse-no-cache', fastify: '5.x' })
