/**
 * crossOriginProtection: refuses unsafe requests (anything but GET, HEAD and OPTIONS) that a browser sends from
 * another origin, with 403 `{error, details, code: "GATEHOUSE_CROSS_SITE"}`: protection against cross-site request
 * forgery without tokens, by the rule of Go 1.25's `net/http.CrossOriginProtection` (which go-pkgz/rest's CSRF
 * middleware wraps):
 *
 * 1. GET, HEAD and OPTIONS always pass: they must not change state.
 * 2. `Sec-Fetch-Site: same-origin` or `none` (typed URL, bookmark) passes; any other value (`same-site`,
 *    `cross-site`) is refused unless the request is exempt (3).
 * 3. Exempt: an `Origin` equal to one of `trustedOrigins` (exactly: scheme, host and port), or `bypass(request)`.
 * 4. Without `Sec-Fetch-Site` (a browser older than 2023, or not a browser): no `Origin` passes (not a browser's
 *    cross-origin request); an `Origin` whose host and port equal the `Host` header passes; otherwise it is refused
 *    unless exempt (`Origin: null` never equals a host).
 *
 * The `Host` header is compared as sent, never `X-Forwarded-Host`, which a client could choose.
 */
import fp from 'fastify-plugin'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { ErrorCodes, OptionsError, sendError } from '../../lib/errors.js'
import { originOf } from '../../lib/login/cross-site.js'
import type { ToolkitHook } from './hook.js'

export interface CrossOriginProtectionOptions {
  /**
   * Origins (`https://sso.example.com`, `http://localhost:5173`) whose unsafe requests pass whatever
   * `Sec-Fetch-Site` says: the `Origin` header must equal one exactly. Default none.
   */
  trustedOrigins?: readonly string[] | undefined
  /**
   * Requests that skip the check (e.g. a webhook called by another site's server through a browser). Insecure by
   * nature: keep it to routes that change nothing a visitor's session could be abused for. Default none.
   */
  bypass?: ((request: FastifyRequest) => boolean) | undefined
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * Compiles the options into a predicate that is true for a request to refuse. Bad options throw an OptionsError
 * naming `crossOriginProtection.trustedOrigins[i]` or `crossOriginProtection.bypass`.
 */
export function crossOriginCheck (opts: CrossOriginProtectionOptions = {}): (request: FastifyRequest) => boolean {
  if (opts === null || typeof opts !== 'object') throw new OptionsError('crossOriginProtection', 'must be an object')
  const list = opts.trustedOrigins ?? []
  if (!Array.isArray(list)) throw new OptionsError('crossOriginProtection.trustedOrigins', 'must be an array of origins like https://app.example.com')
  const trusted = new Set(list.map((entry: unknown, i) => {
    const option = `crossOriginProtection.trustedOrigins[${i}]`
    if (typeof entry !== 'string') throw new OptionsError(option, 'must be an origin like https://app.example.com')
    return originOf(entry, option)
  }))
  const bypass = opts.bypass
  if (bypass !== undefined && typeof bypass !== 'function') throw new OptionsError('crossOriginProtection.bypass', 'must be a function')

  const exempt = (request: FastifyRequest, origin: string | undefined): boolean =>
    (origin !== undefined && trusted.has(origin)) || (bypass !== undefined && bypass(request) === true)

  return (request) => {
    if (SAFE_METHODS.has(request.method)) return false
    const origin = request.headers.origin
    const site = request.headers['sec-fetch-site']
    if (site === 'same-origin' || site === 'none') return false
    if (site !== undefined && site !== '') return !exempt(request, origin)
    if (origin === undefined || origin === '') return false
    if (sameHost(origin, request)) return false
    return !exempt(request, origin)
  }
}

/** Whether the `Origin` header names the host and port the request was sent to (its `Host` header). */
function sameHost (origin: string, request: FastifyRequest): boolean {
  const host = request.headers.host ?? request.headers[':authority']
  if (typeof host !== 'string' || host === '') return false
  let url: URL
  try { url = new URL(origin) } catch { return false }
  // URL drops a scheme's default port (`https://a:443` → `a`); the Host header of such a request has none either.
  return url.origin === origin.toLowerCase() && url.host === host.toLowerCase()
}

function refuse (reply: FastifyReply): FastifyReply {
  return sendError(reply, 403, 'forbidden', 'cross-origin request refused: unsafe methods only from this origin', ErrorCodes.CROSS_SITE)
}

/** Route-level form: `{ onRequest: crossOriginProtectionHook({ trustedOrigins: [...] }) }`. */
export function crossOriginProtectionHook (opts: CrossOriginProtectionOptions = {}): ToolkitHook {
  const refused = crossOriginCheck(opts)
  return async function crossOriginProtection (request, reply) {
    // Waiting for the answer makes Fastify stop the chain even when an async onSend hook delays it.
    if (refused(request)) await refuse(reply)
  }
}

const crossOriginProtectionPluginImpl: FastifyPluginAsync<CrossOriginProtectionOptions> = async (fastify, opts) => {
  const refused = crossOriginCheck(opts)
  // Callback style: a request that passes costs no promise.
  fastify.addHook('onRequest', (request, reply, done) => {
    if (refused(request)) refuse(reply)
    else done()
  })
}

/** `fastify.register(crossOriginProtectionPlugin, { trustedOrigins })`: every route of the context. */
export const crossOriginProtectionPlugin = fp(crossOriginProtectionPluginImpl, { name: 'gatehouse-cross-origin-protection', fastify: '5.x' })
