/**
 * secureHeaders: the security response headers of helmet (the Express/Node project that keeps the list current,
 * and what @fastify/helmet wraps), the set go-pkgz/rest's `Secure` sends: `Content-Security-Policy`,
 * `Strict-Transport-Security`, `X-Frame-Options`, `X-Content-Type-Options: nosniff`, `Referrer-Policy`,
 * `Cross-Origin-Opener-Policy`, `Cross-Origin-Resource-Policy`, `Origin-Agent-Cluster`,
 * `X-DNS-Prefetch-Control`, `X-Download-Options`, `X-Permitted-Cross-Domain-Policies`, `X-XSS-Protection: 0`.
 *
 * Why helmet itself and not @fastify/helmet: @fastify/helmet builds helmet's middleware anew on every request
 * (and so reports a bad policy only when the first request throws). Here helmet runs once, at registration,
 * against a recording response: a bad option is an OptionsError then, and each request costs one
 * `reply.headers()` of the recorded set, set in `onRequest` so error answers carry them too and a handler may
 * still override one for its own answer.
 *
 * helmet is an optional peer dependency (`npm i helmet@8`): loaded when the plugin is registered.
 */
import fp from 'fastify-plugin'
import type { FastifyPluginAsync } from 'fastify'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { OptionsError } from '../../lib/errors.js'
import { importDriver } from '../../lib/optional-driver.js'

export interface SecureHeadersOptions {
  /** `X-Frame-Options`: `'DENY'` (default: an API is never framed), `'SAMEORIGIN'`, or false for none. */
  frameOptions?: 'DENY' | 'SAMEORIGIN' | false | undefined
  /** `Referrer-Policy` value (`'no-referrer'` default, `'strict-origin-when-cross-origin'`, …) or false for none. */
  referrerPolicy?: string | false | undefined
  /**
   * `Strict-Transport-Security`: `maxAge` in seconds (default 31536000), `includeSubDomains` (default true),
   * `preload` (default false); false for none (e.g. a server reached only over plain HTTP).
   */
  hsts?: { maxAge?: number | undefined; includeSubDomains?: boolean | undefined; preload?: boolean | undefined } | false | undefined
  /**
   * `Content-Security-Policy` directives by name (`{ 'default-src': ["'self'"], 'img-src': ["'self'", 'data:'] }`),
   * replacing helmet's default policy; false for none. Default helmet's policy (`default-src 'self'`, …).
   */
  contentSecurityPolicy?: Readonly<Record<string, readonly string[]>> | false | undefined
}

type HelmetModule = typeof import('helmet')

/** Runs helmet's middleware once against a recording response and returns the headers it set. */
function recordHeaders (helmet: HelmetModule['default'], config: Record<string, unknown>): Record<string, string> {
  const headers: Record<string, string> = {}
  const res = {
    setHeader (name: string, value: string | number | readonly string[]) { headers[name.toLowerCase()] = String(value) },
    removeHeader (name: string) { delete headers[name.toLowerCase()] }
  }
  try {
    helmet(config)({} as IncomingMessage, res as unknown as ServerResponse, (err?: unknown) => { if (err !== undefined) throw err })
  } catch (err) {
    throw new OptionsError('secureHeaders', `is not accepted by helmet: ${(err as Error).message}`, { cause: err })
  }
  return headers
}

/** The helmet configuration the options describe; throws an OptionsError naming `secureHeaders.<option>`. */
export function helmetConfig (opts: SecureHeadersOptions = {}): Record<string, unknown> {
  if (opts === null || typeof opts !== 'object') throw new OptionsError('secureHeaders', 'must be an object')
  const frame = opts.frameOptions ?? 'DENY'
  if (frame !== false && frame !== 'DENY' && frame !== 'SAMEORIGIN') throw new OptionsError('secureHeaders.frameOptions', 'must be "DENY", "SAMEORIGIN" or false')
  const referrer = opts.referrerPolicy ?? 'no-referrer'
  if (referrer !== false && (typeof referrer !== 'string' || !/^[a-z-]+(,\s*[a-z-]+)*$/.test(referrer))) {
    throw new OptionsError('secureHeaders.referrerPolicy', 'must be a Referrer-Policy value such as "no-referrer", or false')
  }
  return {
    frameguard: frame === false ? false : { action: frame.toLowerCase() },
    referrerPolicy: referrer === false ? false : { policy: referrer.split(',').map((p) => p.trim()) },
    hsts: hstsConfig(opts.hsts),
    contentSecurityPolicy: cspConfig(opts.contentSecurityPolicy)
  }
}

function hstsConfig (hsts: SecureHeadersOptions['hsts']): unknown {
  if (hsts === false) return false
  if (hsts === undefined) return { maxAge: 31536000, includeSubDomains: true }
  if (hsts === null || typeof hsts !== 'object') throw new OptionsError('secureHeaders.hsts', 'must be { maxAge, includeSubDomains, preload } or false')
  const maxAge = hsts.maxAge ?? 31536000
  if (!Number.isSafeInteger(maxAge) || maxAge < 0) throw new OptionsError('secureHeaders.hsts.maxAge', 'must be a non-negative integer of seconds')
  for (const key of ['includeSubDomains', 'preload'] as const) {
    if (hsts[key] !== undefined && typeof hsts[key] !== 'boolean') throw new OptionsError(`secureHeaders.hsts.${key}`, 'must be a boolean')
  }
  return { maxAge, includeSubDomains: hsts.includeSubDomains ?? true, preload: hsts.preload ?? false }
}

function cspConfig (csp: SecureHeadersOptions['contentSecurityPolicy']): unknown {
  if (csp === undefined) return true
  if (csp === false) return false
  if (csp === null || typeof csp !== 'object' || Array.isArray(csp)) throw new OptionsError('secureHeaders.contentSecurityPolicy', 'must map directive names to lists of sources, or be false')
  for (const [name, sources] of Object.entries(csp)) {
    if (!Array.isArray(sources) || sources.some((s) => typeof s !== 'string')) {
      throw new OptionsError(`secureHeaders.contentSecurityPolicy.${name}`, 'must be an array of strings')
    }
  }
  return { useDefaults: false, directives: csp }
}

const secureHeadersPluginImpl: FastifyPluginAsync<SecureHeadersOptions> = async (fastify, opts) => {
  const config = helmetConfig(opts)
  const helmet = await importDriver<HelmetModule>('helmet', { option: 'secureHeaders', feature: 'secure headers' })
  const headers = recordHeaders(helmet.default, config)
  // Callback style: no promise per request for a hook that only sets headers.
  fastify.addHook('onRequest', (_request, reply, done) => { reply.headers(headers); done() })
}

/** `fastify.register(secureHeadersPlugin, { hsts: { maxAge: 63072000, preload: true } })`: every route of the context. */
export const secureHeadersPlugin = fp(secureHeadersPluginImpl, { name: 'gatehouse-secure-headers', fastify: '5.x' })
