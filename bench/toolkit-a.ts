/**
 * Issue 6 benchmark, first half of the toolkit: a bare route against the same route with one plugin
 * registered (autocannon on loopback through bench/lib.ts), printed as req/s and ratio to the bare route.
 */
import Fastify, { type FastifyInstance, type FastifyPluginAsync } from 'fastify'
import { measure, printTable, type BenchRequest, type BenchRow } from './lib.js'
// The public entry (`fastify-gatehouse/toolkit`): what an application imports is what is measured.
import {
  appInfoPlugin, benchmarksPlugin, blackWordsPlugin, deprecationPlugin, onlyFromPlugin, pingPlugin, realIpPlugin,
  recovererPlugin, requestLoggerPlugin, sizeLimitPlugin, tracePlugin
} from '../toolkit.js'

const LETTERS = 'abcdefghijklmnopqrstuvwxyz'

type Case = { label: string; plugin?: FastifyPluginAsync<any>; opts?: object; target?: number }

function app (method: 'GET' | 'POST', c?: Case): () => Promise<FastifyInstance> {
  return async () => {
    const f = Fastify()
    if (c?.plugin !== undefined) await f.register(c.plugin, c.opts ?? {})
    if (method === 'GET') f.get('/r', async () => ({ ok: true }))
    else f.post('/r', async (req) => ({ len: (req.body as string).length }))
    return f
  }
}

/** Median, so that one disturbed measurement on a shared machine does not decide a row. */
function median (xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

/**
 * Rounds of (bare, every case) interleaved: each case is compared with bare routes measured minutes apart at
 * most, and the medians over rounds are printed. BENCH_ROUNDS (default 3) sets the number of rounds.
 */
async function table (title: string, method: 'GET' | 'POST', req: BenchRequest, cases: Case[]): Promise<void> {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
  const bare: number[] = []
  const got = cases.map(() => [] as number[])
  for (let r = 0; r < rounds; r++) {
    bare.push(await measure('bare', app(method), req))
    for (const [i, c] of cases.entries()) got[i]!.push(await measure(c.label, app(method, c), req))
  }
  const rows: BenchRow[] = cases.map((c, i) => {
    const row: BenchRow = { label: c.label, rps: median(got[i]!) }
    if (c.target !== undefined) row.target = c.target
    return row
  })
  printTable(`${title} (median of ${rounds} interleaved rounds)`, { label: `bare ${method} route`, rps: median(bare) }, rows)
}

export async function benchToolkitA (): Promise<void> {
  await table('toolkit (issue 6, part A): one plugin on a bare GET route', 'GET', { path: '/r', headers: { 'x-forwarded-for': '8.8.8.8' } }, [
    { label: 'benchmarks', plugin: benchmarksPlugin, target: 0.95 },
    { label: 'trace', plugin: tracePlugin, target: 0.95 },
    { label: 'realIp', plugin: realIpPlugin, target: 0.95 },
    { label: 'appInfo', plugin: appInfoPlugin, opts: { name: 'bench', version: '1.0.0', org: 'Acme', mhost: 'h1' }, target: 0.95 },
    { label: 'onlyFrom (CIDR list, X-Forwarded-For)', plugin: onlyFromPlugin, opts: { allow: ['10.0.0.0/8', '192.168.', '8.8.8.8'] }, target: 0.95 },
    { label: 'logger (null sink)', plugin: requestLoggerPlugin, opts: { logger: () => {} }, target: 0.85 },
    { label: 'deprecation', plugin: deprecationPlugin, opts: { date: '2030-01-01T00:00:00Z', link: 'https://example.com/d' } },
    { label: 'ping (not a ping path)', plugin: pingPlugin },
    { label: 'recoverer', plugin: recovererPlugin }
  ])
  await table('toolkit (issue 6, part A): body plugins on a bare POST route (1 KiB text)', 'POST',
    { path: '/r', method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'lorem ipsum '.repeat(86).slice(0, 1024) }, [
      { label: 'sizeLimit (64 KiB)', plugin: sizeLimitPlugin, opts: { limit: 65536 }, target: 0.95 },
      { label: 'blackWords (3 words)', plugin: blackWordsPlugin, opts: { words: ['viagra', 'casino', 'lottery'] }, target: 0.85 },
      // One pass over the body whatever the number of words: 500 words (starting with every letter, so the body's
      // letters keep starting partial matches) should cost about what 3 do.
      { label: 'blackWords (500 words)', plugin: blackWordsPlugin, opts: { words: Array.from({ length: 500 }, (_, i) => `${LETTERS[i % 26]!}${LETTERS[(i * 7) % 26]!}x${i}`) } }
    ])
}
