/**
 * cacheControl: `Cache-Control: max-age=<s>, no-cache` and an `ETag` on every answer, and 304 Not Modified to a
 * GET or HEAD whose `If-None-Match` carries that ETag, without running the handler: go-pkgz/rest's `CacheControl`
 * and `CacheControlDynamic`.
 *
 * The ETag is not a hash of the body: it is the SHA-1 of `<version>:<URL>` (path and query), so it names "this
 * URL as of this version of the content" and can be checked without producing the answer. Bump `version` (a
 * release tag, a data revision, or a function of the request such as the user's last change) whenever what the
 * URL answers changes. `no-cache` makes clients revalidate each time, which is then a cheap 304.
 *
 * An answer that may depend on who asks is never given a validator another user can reuse: when an auth hook
 * attached a user (`request.user` with an `id`) or the request carries credentials (`Authorization`, `Cookie`,
 * `X-JWT`), the answer is `private` and its ETag also hashes that user (or those credentials), so Bob's request
 * never revalidates what Alice's browser keeps, and nobody's revalidates it at all. The plugin decides after
 * every hook of the route (its step is the route's last `preHandler`), so a 304 is never sent before the auth
 * hooks have accepted the request, and a refused request gets no ETag. The route-level hook cannot know what runs
 * after it: it answers 304 to a request with credentials only once an auth hook has attached its user (put it
 * after them, in `preHandler`).
 *
 * `If-None-Match` is compared as RFC 9110 §13.1.2 says for it (weak comparison: `W/"x"` matches `"x"`), over a
 * comma-separated list. `*` is not taken as a match: it asks whether any representation exists, which only the
 * handler knows. Other methods go to the handler untouched, since their preconditions are the handler's to enforce.
 */
import fp from 'fastify-plugin'
import { createHash } from 'node:crypto'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest, preHandlerHookHandler, RouteOptions } from 'fastify'
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

/** The request headers that carry credentials: an answer to a request with any of them is private. */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'x-jwt'] as const

/**
 * `"<sha1 hex>"` of `<version>:<url>`: the ETag the plugin sends for this request. With `identity` (who asks: see
 * `cacheIdentity`), the ETag of a private answer, bound to that user or those credentials.
 */
export function cacheEtag (version: string, url: string, identity = ''): string {
  const hash = createHash('sha1').update(`${version}:${url}`)
  if (identity !== '') hash.update(`\n${identity}`)
  return `"${hash.digest('hex')}"`
}

/**
 * Who an answer is for, as the ETag binds it: `user:<id>` when an auth hook attached a user, else the request's
 * credential headers (`Authorization`, `Cookie`, `X-JWT`), else `''` (anyone: a shared answer).
 */
export function cacheIdentity (request: FastifyRequest): string {
  const user = (request as { user?: unknown }).user
  if (user !== null && typeof user === 'object' && typeof (user as { id?: unknown }).id === 'string') return `user:${(user as { id: string }).id}`
  let credentials = ''
  for (const name of CREDENTIAL_HEADERS) {
    const value = request.headers[name]
    if (typeof value === 'string' && value !== '') credentials += `${name}:${value}\n`
  }
  return credentials === '' ? '' : `credentials:${credentials}`
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

/**
 * The per-request step: sets the headers and tells whether the answer is a 304 (already sent). `afterHooks`: every
 * hook of the route has run (the plugin's step), so credentials nothing vouched for may still have their 304.
 */
type Apply = (request: FastifyRequest, reply: FastifyReply, afterHooks: boolean) => boolean

function compile (opts: CacheControlOptions): Apply {
  if (opts === null || typeof opts !== 'object') throw new OptionsError('cacheControl', 'must be an object')
  const { maxAge, version } = opts
  if (typeof maxAge !== 'number' || !Number.isSafeInteger(maxAge) || maxAge < 0) throw new OptionsError('cacheControl.maxAge', 'must be a non-negative integer of seconds')
  if (typeof version !== 'string' && typeof version !== 'function') throw new OptionsError('cacheControl.version', 'must be a string or a function of the request returning one')
  const versionOf = typeof version === 'string' ? () => version : version
  const shared = `max-age=${maxAge}, no-cache`
  const personal = `private, ${shared}`
  return (request, reply, afterHooks) => {
    const v = versionOf(request)
    // A version function that returns no string is a bug of the application: fail loud (500), do not cache.
    if (typeof v !== 'string') throw new TypeError('cacheControl.version returned no string')
    const identity = cacheIdentity(request)
    const etag = cacheEtag(v, request.url, identity)
    reply.header('etag', etag).header('cache-control', identity === '' ? shared : personal)
    // Credentials no auth hook has vouched for yet (the route hook may run before them) get no 304 from the hook.
    if (!afterHooks && identity.startsWith('credentials:')) return false
    if ((request.method === 'GET' || request.method === 'HEAD') && etagMatches(request.headers['if-none-match'], etag)) {
      reply.code(304).send()
      return true
    }
    return false
  }
}

/**
 * Route-level form: `{ preHandler: [fastify.auth.authenticate, cacheControlHook({ maxAge: 60, version: 'v1' })] }`,
 * after the route's auth hooks.
 */
export function cacheControlHook (opts: CacheControlOptions): ToolkitHook {
  const apply = compile(opts)
  return async function cacheControl (request, reply) {
    if (apply(request, reply, false)) await reply
  }
}

/** Marks a route whose own `preHandler` list ends with the plugin's step (routes declared after the plugin). */
const LAST_STEP = Symbol('gatehouse.cacheControl')

const cacheControlPluginImpl: FastifyPluginAsync<CacheControlOptions> = async (fastify, opts) => {
  const apply = compile(opts)
  const step: preHandlerHookHandler = function cacheControl (request, reply, done) {
    // A 304 was sent: Fastify's rule for a hook that answers is not to call done.
    if (!apply(request, reply, true)) done()
  }
  // The step runs after every hook of the route: appended to the route's own preHandlers (which run after the
  // context's), so that authenticate, rbac and the like have accepted the request before a 304 can be sent.
  fastify.addHook('onRoute', (route: RouteOptions) => {
    const own = route.preHandler
    route.preHandler = own === undefined ? [step] : [...(Array.isArray(own) ? own : [own]), step]
    route.config = { ...(route.config as object | undefined), [LAST_STEP]: true } as unknown as typeof route.config
  })
  // Routes declared before the plugin have no such step: the context's preHandler serves them, after their
  // onRequest and preValidation hooks but before a preHandler of their own, so as the route hook does: no 304 to
  // credentials no auth hook has vouched for.
  fastify.addHook('preHandler', (request, reply, done) => {
    if ((request.routeOptions.config as unknown as Record<symbol, unknown> | undefined)?.[LAST_STEP] === true) return done()
    if (!apply(request, reply, false)) done()
  })
}

/** `fastify.register(cacheControlPlugin, { maxAge: 3600, version: '1.4.2' })`: every route of the context. */
export const cacheControlPlugin = fp(cacheControlPluginImpl, { name: 'gatehouse-cache-control', fastify: '5.x' })
