/**
 * The servers of the toolkit tables (`npm run bench -- toolkit`), by name, so that bench/peer-server.ts can
 * build each in a process of its own: one route `/r` (GET, or POST answering the body's length) and at most one
 * toolkit plugin. A server sharing the bench's process would inherit the compiled code and inline caches of every
 * case before it, which moved ratios by more than the differences being measured.
 */
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyServerOptions } from 'fastify'
import type { Peer } from './peer-apps.js'
import { lengths } from './server-process.js'
// The public entry (`fastify-gatehouse/toolkit`): what an application imports is what is measured.
import {
  appInfoPlugin, basicAuthPlugin, bcryptHash, benchmarksPlugin, blackWordsPlugin, cacheControlPlugin, cleanPathPlugin, corsPlugin,
  crossOriginProtectionPlugin, deprecationPlugin, gzipPlugin, secureHeadersPlugin, stripSlashesPlugin, timeoutPlugin,
  headersHook, headersPlugin, maybePlugin, NO_CACHE_HEADERS, noCachePlugin, onlyFromPlugin, pingPlugin, realIpPlugin, recovererPlugin,
  rejectPlugin, requestLoggerPlugin, rewritePlugin, rewriteUrl, sizeLimitPlugin, tracePlugin
} from '../toolkit.js'

/**
 * 34 cases in 3 rounds: 2 s of load after 0.5 s of warm-up keep the suite near 6 minutes (BENCH_SECONDS and
 * BENCH_WARMUP override).
 */
export const TOOLKIT_LENGTHS = lengths({ warmup: 0.5, seconds: 2 })

const LETTERS = 'abcdefghijklmnopqrstuvwxyz'
/** About 16 KiB of JSON: large enough that compressing it is the main cost. */
const LARGE = { items: Array.from({ length: 300 }, (_, i) => ({ id: i, name: `item ${i}`, tags: ['alpha', 'beta', 'gamma'] })) }
const RULES = { '^/old/(\\w+)$': '/$1' }
const THREE_HEADERS = { 'x-frame-options': 'DENY', 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' }

interface AppSpec {
  method?: 'GET' | 'POST'
  /** What the GET route answers; default `{ ok: true }`. */
  body?: unknown
  /** Headers the GET route's handler sets on its answer (a scale for plugins that add headers). */
  headers?: Readonly<Record<string, string>>
  server?: FastifyServerOptions
  setup?: (app: FastifyInstance) => Promise<void>
}

function build (spec: AppSpec): () => Promise<Peer> {
  return async () => {
    const app = Fastify(spec.server ?? {})
    if (spec.setup !== undefined) await spec.setup(app)
    if (spec.method === 'POST') app.post('/r', async (req) => ({ len: (req.body as string | object).toString().length }))
    else {
      const body = spec.body ?? { ok: true }
      const headers = spec.headers
      if (headers === undefined) app.get('/r', async () => body)
      else app.get('/r', async (_req, reply) => { reply.headers(headers); return body })
    }
    return { app, cookies: [], headers: {} }
  }
}

// Each plugin has its own options type.
const use = (plugin: FastifyPluginAsync<any>, opts: object = {}) =>
  async (app: FastifyInstance): Promise<void> => { await app.register(plugin, opts) }

export const TOOLKIT_APPS: Record<string, () => Promise<Peer>> = {
  'tk-bare-get': build({}),
  'tk-bare-post': build({ method: 'POST' }),
  'tk-bare-large': build({ body: LARGE }),
  'tk-benchmarks': build({ setup: use(benchmarksPlugin) }),
  'tk-trace': build({ setup: use(tracePlugin) }),
  'tk-real-ip': build({ setup: use(realIpPlugin) }),
  'tk-app-info': build({ setup: use(appInfoPlugin, { name: 'bench', version: '1.0.0', org: 'Acme', mhost: 'h1' }) }),
  'tk-only-from': build({ setup: use(onlyFromPlugin, { allow: ['10.0.0.0/8', '192.168.', '8.8.8.8'] }) }),
  'tk-logger': build({ setup: use(requestLoggerPlugin, { logger: () => {} }) }),
  'tk-deprecation': build({ setup: use(deprecationPlugin, { date: '2030-01-01T00:00:00Z', link: 'https://example.com/d' }) }),
  'tk-ping': build({ setup: use(pingPlugin) }),
  'tk-recoverer': build({ setup: use(recovererPlugin) }),
  'tk-size-limit': build({ method: 'POST', setup: use(sizeLimitPlugin, { limit: 65536 }) }),
  'tk-black-words': build({ method: 'POST', setup: use(blackWordsPlugin, { words: ['viagra', 'casino', 'lottery'] }) }),
  // One pass over the body whatever the number of words: 500 words (starting with every letter, so the body's
  // letters keep starting partial matches) should cost about what 3 do.
  'tk-black-words-500': build({ method: 'POST', setup: use(blackWordsPlugin, { words: Array.from({ length: 500 }, (_, i) => `${LETTERS[i % 26]!}${LETTERS[(i * 7) % 26]!}x${i}`) }) }),
  'tk-no-cache': build({ setup: use(noCachePlugin) }),
  // The same headers set by the route's own handler: what answering with them costs, without any plugin.
  'tk-bare-get-no-cache-headers': build({ headers: NO_CACHE_HEADERS }),
  'tk-bare-get-three-headers': build({ headers: THREE_HEADERS }),
  'tk-headers': build({ setup: use(headersPlugin, { headers: Object.entries(THREE_HEADERS).map(([k, v]) => `${k}:${v}`) }) }),
  'tk-rewrite': build({ setup: use(rewritePlugin, { rules: RULES }) }),
  'tk-rewrite-url': build({ server: { rewriteUrl: rewriteUrl(RULES) } }),
  'tk-gzip-small': build({ setup: use(gzipPlugin) }),
  'tk-maybe': build({ setup: use(maybePlugin, { when: (r: { headers: Record<string, unknown> }) => r.headers['x-debug'] !== undefined, hook: headersHook(['X-Debug:1']) }) }),
  'tk-reject': build({ setup: use(rejectPlugin, { when: (r: { headers: Record<string, unknown> }) => r.headers['x-bad'] !== undefined, status: 403, message: 'no' }) }),
  'tk-basic-fixed': build({ setup: use(basicAuthPlugin, { user: 'admin', passwd: 'bench-secret' }) }),
  'tk-basic-bcrypt': build({ setup: async (app) => { await app.register(basicAuthPlugin, { user: 'admin', bcryptHash: await bcryptHash('bench-secret', 4) }) } }),
  // @fastify/compress alone, as gzip configures it (gzip only, 1 KiB threshold, no request decompression): the
  // baseline of the gzip rows.
  'tk-compress-large': build({ body: LARGE, setup: async (app) => { await app.register((await import('@fastify/compress')).default, { encodings: ['gzip'], threshold: 1024, globalDecompression: false }) } }),
  'tk-gzip-large': build({ body: LARGE, setup: use(gzipPlugin) }),
  'tk-compress-large-1': build({ body: LARGE, setup: async (app) => { await app.register((await import('@fastify/compress')).default, { encodings: ['gzip'], threshold: 1024, globalDecompression: false, zlibOptions: { level: 1 } }) } }),
  'tk-gzip-large-1': build({ body: LARGE, setup: use(gzipPlugin, { level: 1 }) }),
  // Part C: go-pkgz/rest v1.21-v1.24's middleware.
  'tk-cors': build({ setup: use(corsPlugin, { origins: ['https://app.example.com', 'https://admin.example.com'], credentials: true }) }),
  'tk-secure-headers': build({ setup: use(secureHeadersPlugin) }),
  'tk-cross-origin': build({ setup: use(crossOriginProtectionPlugin, { trustedOrigins: ['https://sso.example.com'] }) }),
  'tk-cross-origin-post': build({ method: 'POST', setup: use(crossOriginProtectionPlugin, { trustedOrigins: ['https://sso.example.com'] }) }),
  'tk-timeout': build({ setup: use(timeoutPlugin, { timeout: 5000 }) }),
  'tk-cache-control': build({ setup: use(cacheControlPlugin, { maxAge: 60, version: 'v1.2.3' }) }),
  'tk-clean-path': build({ setup: use(cleanPathPlugin) }),
  'tk-strip-slashes': build({ setup: use(stripSlashesPlugin) })
}
