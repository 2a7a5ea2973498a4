/**
 * cors: Cross-Origin Resource Sharing over @fastify/cors (the Fastify team's plugin: preflight answered in
 * `onRequest`, before any auth hook, `Vary` kept right), with go-pkgz/rest's `CORS` defaults and its one hard
 * rule (upstream #52): **`credentials: true` with the origin `*` is refused at registration**. Such a setting would
 * let any site read answers made with the visitor's cookies; list the origins instead.
 *
 * An allowed `Origin` is echoed in `Access-Control-Allow-Origin` (with `Vary: Origin`); any other gets no CORS
 * headers, so the browser keeps the answer from the page. A preflight (`OPTIONS` with `Origin`) is answered 204
 * with the allowed methods and headers. Origins are compared exactly (scheme, host, port), lower-cased.
 *
 * @fastify/cors is an optional peer dependency (`npm i @fastify/cors@11`): loaded when the plugin is registered.
 */
import fp from 'fastify-plugin'
import type { FastifyPluginAsync } from 'fastify'
import { OptionsError } from '../../lib/errors.js'
import { importDriver } from '../../lib/optional-driver.js'
import { originOf } from '../../lib/login/cross-site.js'

export interface CorsOptions {
  /**
   * Origins whose pages may read the answers (`https://app.example.com`, `http://localhost:5173`), or `['*']` for
   * any site (not with `credentials`). Required.
   */
  origins: readonly string[]
  /** Methods a preflight allows. Default `GET, POST, PUT, PATCH, DELETE, OPTIONS, HEAD`. */
  methods?: readonly string[] | undefined
  /** Request headers a preflight allows. Default `Accept, Content-Type, Authorization, X-Requested-With`. */
  allowedHeaders?: readonly string[] | undefined
  /** Answer headers the page may read besides the CORS-safelisted ones. Default none. */
  exposedHeaders?: readonly string[] | undefined
  /** Send `Access-Control-Allow-Credentials: true` (cookies, HTTP auth). Default false; never with `*`. */
  credentials?: boolean | undefined
  /** Seconds a browser may cache a preflight's answer (`Access-Control-Max-Age`). Default none (not sent). */
  maxAge?: number | undefined
}

const DEFAULT_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD']
const DEFAULT_HEADERS = ['Accept', 'Content-Type', 'Authorization', 'X-Requested-With']
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/** The @fastify/cors options the gatehouse options describe; throws an OptionsError naming `cors.<option>`. */
export function corsSettings (opts: CorsOptions): Record<string, unknown> {
  if (opts === null || typeof opts !== 'object') throw new OptionsError('cors', 'must be an object')
  const credentials = opts.credentials ?? false
  if (typeof credentials !== 'boolean') throw new OptionsError('cors.credentials', 'must be a boolean')
  const origins = opts.origins
  if (!Array.isArray(origins) || origins.length === 0) throw new OptionsError('cors.origins', 'must list the allowed origins (or be [\'*\'])')
  const any = origins.includes('*')
  if (any && credentials) {
    throw new OptionsError('cors.origins', 'may not allow "*" with credentials: any site could read answers made with the visitor\'s cookies; list the origins')
  }
  if (any && origins.length > 1) throw new OptionsError('cors.origins', '"*" allows every origin: give it alone')
  const list = any ? [] : origins.map((o: unknown, i) => {
    if (typeof o !== 'string') throw new OptionsError(`cors.origins[${i}]`, 'must be an origin like https://app.example.com')
    return originOf(o, `cors.origins[${i}]`)
  })
  const maxAge = opts.maxAge
  if (maxAge !== undefined && (!Number.isSafeInteger(maxAge) || maxAge < 0)) throw new OptionsError('cors.maxAge', 'must be a non-negative integer of seconds')
  return {
    origin: any ? '*' : list,
    credentials,
    methods: tokens('cors.methods', opts.methods ?? DEFAULT_METHODS).map((m) => m.toUpperCase()),
    allowedHeaders: tokens('cors.allowedHeaders', opts.allowedHeaders ?? DEFAULT_HEADERS),
    ...(opts.exposedHeaders === undefined ? {} : { exposedHeaders: tokens('cors.exposedHeaders', opts.exposedHeaders) }),
    ...(maxAge === undefined ? {} : { maxAge }),
    // An OPTIONS without the preflight headers gets 204 too rather than @fastify/cors's plain-text 400.
    strictPreflight: false
  }
}

function tokens (option: string, list: unknown): string[] {
  if (!Array.isArray(list) || list.some((v) => typeof v !== 'string' || !TOKEN.test(v))) {
    throw new OptionsError(option, 'must be an array of header or method names')
  }
  return list as string[]
}

const corsPluginImpl: FastifyPluginAsync<CorsOptions> = async (fastify, opts) => {
  const settings = corsSettings(opts)
  const cors = await importDriver<typeof import('@fastify/cors')>('@fastify/cors', { option: 'cors', feature: 'CORS' })
  await fastify.register(cors.default, settings)
}

/** `fastify.register(corsPlugin, { origins: ['https://app.example.com'], credentials: true })`. */
export const corsPlugin = fp(corsPluginImpl, { name: 'gatehouse-cors', fastify: '5.x' })
