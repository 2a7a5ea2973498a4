/**
 * Issue 6 benchmark, second half of the toolkit: a bare route against the same route with one of noCache,
 * headers, rewrite (plugin and constructor option), gzip, the basic-auth family and maybe/reject. Each case
 * builds its own app, because some of them (`rewriteUrl`) only exist as constructor options. The bare route
 * is measured first and last; the mean is the baseline, so drift during the run is not charged to a plugin.
 */
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { measure, printTable, type BenchRequest, type BenchRow } from './lib.js'
// The public entry (`fastify-gatehouse/toolkit`): what an application imports is what is measured.
import {
  basicAuthPlugin, bcryptHash, gzipPlugin, headersHook, headersPlugin, maybePlugin, noCachePlugin, rejectPlugin, rewritePlugin, rewriteUrl
} from '../toolkit.js'

interface Case {
  label: string
  /** Registers the plugin under test (before the route). */
  setup?: (app: FastifyInstance) => Promise<void>
  server?: FastifyServerOptions
  /** Request to send, when it differs from the table's. */
  req?: BenchRequest
  target?: number
}

const small = { ok: true }
// About 16 KiB of JSON: large enough that compressing it is the main cost.
const large = { items: Array.from({ length: 300 }, (_, i) => ({ id: i, name: `item ${i}`, tags: ['alpha', 'beta', 'gamma'] })) }

function build (body: unknown, c?: Case): () => Promise<FastifyInstance> {
  return async () => {
    const app = Fastify(c?.server ?? {})
    if (c?.setup !== undefined) await c.setup(app)
    app.get('/r', async () => body)
    return app
  }
}

async function table (title: string, body: unknown, req: BenchRequest, cases: Case[]): Promise<void> {
  const first = await measure('bare', build(body), req)
  const rows: BenchRow[] = []
  for (const c of cases) {
    const row: BenchRow = { label: c.label, rps: await measure(c.label, build(body, c), c.req ?? req) }
    if (c.target !== undefined) row.target = c.target
    rows.push(row)
  }
  const last = await measure('bare (again)', build(body), req)
  printTable(title, { label: `bare GET route (mean of first ${Math.round(first)} and last ${Math.round(last)})`, rps: (first + last) / 2 }, rows)
}

const basic = (user: string, passwd: string): Record<string, string> =>
  ({ authorization: `Basic ${Buffer.from(`${user}:${passwd}`).toString('base64')}` })

export async function benchToolkitB (): Promise<void> {
  const bcrypt4 = await bcryptHash('bench-secret', 4)
  const req: BenchRequest = { path: '/r', headers: { 'accept-encoding': 'gzip' } }
  await table('toolkit (issue 6, part B): one plugin on a bare GET route (small JSON)', small, req, [
    { label: 'noCache', setup: async (a) => { await a.register(noCachePlugin) }, target: 0.95 },
    { label: 'headers (3 entries)', setup: async (a) => { await a.register(headersPlugin, { headers: ['X-Frame-Options:DENY', 'X-Content-Type-Options:nosniff', 'Referrer-Policy:no-referrer'] }) }, target: 0.95 },
    { label: 'rewrite plugin (/old/r -> /r)', setup: async (a) => { await a.register(rewritePlugin, { rules: { '^/old/(\\w+)$': '/$1' } }) }, req: { ...req, path: '/old/r' } },
    { label: 'rewrite plugin (no rule matches)', setup: async (a) => { await a.register(rewritePlugin, { rules: { '^/old/(\\w+)$': '/$1' } }) } },
    { label: 'rewriteUrl option (/old/r -> /r)', server: { rewriteUrl: rewriteUrl({ '^/old/(\\w+)$': '/$1' }) }, req: { ...req, path: '/old/r' } },
    { label: 'gzip (body below threshold)', setup: async (a) => { await a.register(gzipPlugin) } },
    { label: 'maybe (predicate false)', setup: async (a) => { await a.register(maybePlugin, { when: (r) => r.headers['x-debug'] !== undefined, hook: headersHook(['X-Debug:1']) }) } },
    { label: 'reject (predicate false)', setup: async (a) => { await a.register(rejectPlugin, { when: (r) => r.headers['x-bad'] !== undefined, status: 403, message: 'no' }) } }
  ])
  // The bare route receives the same Authorization header, so the rows differ only by the check.
  const authed: BenchRequest = { path: '/r', headers: basic('admin', 'bench-secret') }
  const fixed = async (a: FastifyInstance): Promise<void> => { await a.register(basicAuthPlugin, { user: 'admin', passwd: 'bench-secret' }) }
  await table('toolkit (part B): basic auth, bare route sent the same Authorization header', small, authed, [
    { label: 'basic auth withUserPasswd', setup: fixed, target: 0.9 },
    { label: 'basic auth withUserPasswd, scheme as "basic" (full parse)', setup: fixed, req: { path: '/r', headers: { authorization: `basic${authed.headers!.authorization!.slice(5)}` } } },
    { label: 'basic auth withBcryptHash (cost 4)', setup: async (a) => { await a.register(basicAuthPlugin, { user: 'admin', bcryptHash: bcrypt4 }) } }
  ])
  await table('toolkit (issue 6, part B): gzip on a 16 KiB JSON answer', large, req, [
    { label: 'gzip (level 6, default)', setup: async (a) => { await a.register(gzipPlugin) } },
    { label: 'gzip (level 1)', setup: async (a) => { await a.register(gzipPlugin, { level: 1 }) } }
  ])
}
