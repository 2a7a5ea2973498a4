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
}

const gzipPluginImpl: FastifyPluginAsync<GzipOptions> = async (fastify, opts = {}) => {
  const threshold = opts.threshold ?? 1024
  if (!Number.isInteger(threshold) || threshold < 0) throw new OptionsError('gzip.threshold', 'must be a non-negative integer of bytes')
  if (opts.level !== undefined && (!Number.isInteger(opts.level) || opts.level < 1 || opts.level > 9)) {
    throw new OptionsError('gzip.level', 'must be an integer from 1 to 9')
  }
  const extra = opts.contentTypes ?? []
  if (!Array.isArray(extra) || extra.some((c) => typeof c !== 'string' || c === '')) {
    throw new OptionsError('gzip.contentTypes', 'must be an array of non-empty content types')
  }
  const exact = new Set(extra.filter((c) => !c.endsWith('/')).map((c) => c.toLowerCase()))
  const prefixes = extra.filter((c) => c.endsWith('/')).map((c) => c.toLowerCase())
  // Loaded when gzip is registered, not when the toolkit is imported.
  await fastify.register((await import('@fastify/compress')).default, {
    encodings: ['gzip'],
    threshold,
    globalDecompression: false,
    ...(opts.level !== undefined ? { zlibOptions: { level: opts.level } } : {}),
    // Asked for every answer before mime-db: without extra types it answers at once (no string work).
    customTypes: extra.length === 0
      ? () => false
      : (type: string) => {
          const mime = type.split(';', 1)[0]!.trim().toLowerCase()
          return exact.has(mime) || prefixes.some((p) => mime.startsWith(p))
        }
  })
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
