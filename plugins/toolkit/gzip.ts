/**
 * gzip: compresses answers with gzip (only gzip: every client that compresses accepts it) over @fastify/compress.
 *
 * What @fastify/compress already does right and this keeps: `Accept-Encoding` negotiation with q-values
 * (`gzip;q=0` means "not gzip", so the answer goes out as is), `Vary: Accept-Encoding`, no second encoding of
 * an answer that already has a `Content-Encoding`, no compression of 206/`Content-Range` answers or of types
 * that do not compress (images, archives), and streams compressed on the fly. Request-body decompression is
 * turned off: this plugin is about answers, and decoding uploads is a separate decision.
 *
 * One correction: @fastify/compress reads `*` as `gzip` before weighing q-values, so `gzip;q=0, *` would
 * still be gzipped although RFC 9110 §12.5.3 says the explicit `gzip;q=0` wins over `*`. An `onRequest` hook
 * catches that case and sets @fastify/compress's documented opt-out request header `x-no-compression`.
 *
 * Like every `onRoute`-based plugin it covers routes added after it in its encapsulation context; a route can
 * opt out with the route option `compress: false`.
 */
import fp from 'fastify-plugin'
import type { FastifyPluginAsync } from 'fastify'
import { OptionsError } from '../../lib/errors.js'

export interface GzipOptions {
  /** Bodies smaller than this many bytes go out uncompressed (streams are always compressed). Default 1024. */
  threshold?: number | undefined
  /**
   * More content types to compress besides those mime-db marks compressible: exact types
   * (`application/x-ndjson`) or prefixes ending in `/` (`text/`).
   */
  contentTypes?: readonly string[] | undefined
  /** zlib level 1..9 (default zlib's 6). */
  level?: number | undefined
  /**
   * Compress only answers of these content types, replacing mime-db's list (go-pkgz/rest's `Gzip(types...)`,
   * upstream #51): exact types or prefixes ending in `/`, matched on the answer's `Content-Type` once the handler
   * has set it. Not with `contentTypes`. Default: every type mime-db marks compressible, plus `contentTypes`.
   */
  onlyContentTypes?: readonly string[] | undefined
}

/** A content-type test from exact types and `prefix/` entries; throws an OptionsError naming `option`. */
function typeMatcher (option: string, list: unknown): (type: string) => boolean {
  if (!Array.isArray(list) || list.some((c) => typeof c !== 'string' || c === '')) {
    throw new OptionsError(option, 'must be an array of non-empty content types')
  }
  const exact = new Set(list.filter((c) => !c.endsWith('/')).map((c) => c.toLowerCase()))
  const prefixes = list.filter((c) => c.endsWith('/')).map((c) => c.toLowerCase())
  return (type) => {
    const mime = type.split(';', 1)[0]!.trim().toLowerCase()
    return exact.has(mime) || prefixes.some((p) => mime.startsWith(p))
  }
}

const gzipPluginImpl: FastifyPluginAsync<GzipOptions> = async (fastify, opts = {}) => {
  const threshold = opts.threshold ?? 1024
  if (!Number.isInteger(threshold) || threshold < 0) throw new OptionsError('gzip.threshold', 'must be a non-negative integer of bytes')
  if (opts.level !== undefined && (!Number.isInteger(opts.level) || opts.level < 1 || opts.level > 9)) {
    throw new OptionsError('gzip.level', 'must be an integer from 1 to 9')
  }
  if (opts.contentTypes !== undefined && opts.onlyContentTypes !== undefined) {
    throw new OptionsError('gzip.onlyContentTypes', 'replaces the list: give it or contentTypes, not both')
  }
  const only = opts.onlyContentTypes === undefined ? undefined : typeMatcher('gzip.onlyContentTypes', opts.onlyContentTypes)
  const extra = opts.contentTypes ?? []
  const listed = only ?? (extra.length === 0 ? undefined : typeMatcher('gzip.contentTypes', extra))
  // Loaded when gzip is registered, not when the toolkit is imported.
  await fastify.register((await import('@fastify/compress')).default, {
    encodings: ['gzip'],
    threshold,
    globalDecompression: false,
    ...(opts.level !== undefined ? { zlibOptions: { level: opts.level } } : {}),
    // Asked for every answer before mime-db: without extra types it answers at once (no string work).
    customTypes: listed ?? (() => false)
  })
  if (only !== undefined) {
    // Runs before @fastify/compress's own onSend (a route-level hook, so after the context's): an answer of
    // another type is marked with its documented opt-out header, so mime-db's list cannot add it.
    fastify.addHook('onSend', (request, reply, payload, done) => {
      const type = reply.getHeader('content-type')
      if (typeof type !== 'string' || !only(type)) request.headers['x-no-compression'] = '1'
      done(null, payload)
    })
  }
  fastify.addHook('onRequest', (request, _reply, done) => {
    const ae = request.headers['accept-encoding']
    if (ae !== undefined && ae.includes('*') && !acceptsGzip(ae)) request.headers['x-no-compression'] = '1'
    done()
  })
}

/**
 * RFC 9110 §12.5.3: an explicit `gzip` (or `x-gzip`) entry decides by its q-value; otherwise `*` does;
 * otherwise gzip is not acceptable.
 */
export function acceptsGzip (header: string): boolean {
  let explicit: number | undefined
  let star: number | undefined
  for (const entry of header.split(',')) {
    const [coding = '', ...params] = entry.split(';').map((p) => p.trim().toLowerCase())
    let q = 1
    for (const p of params) if (p.startsWith('q=')) q = Number(p.slice(2))
    if (Number.isNaN(q)) q = 0
    if (coding === 'gzip' || coding === 'x-gzip') explicit = Math.max(explicit ?? 0, q)
    else if (coding === '*') star = q
  }
  return (explicit ?? star ?? 0) > 0
}

/** `fastify.register(gzipPlugin, { threshold })`, before the routes it should cover. */
export const gzipPlugin = fp(gzipPluginImpl, { name: 'gatehouse-gzip', fastify: '5.x' })
