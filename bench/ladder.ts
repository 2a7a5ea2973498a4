/**
 * The hook ladder, `npm run bench -- ladder` (issue 39 items 3 and 5): a bare route; an empty async and an empty
 * callback `onRequest`; @fastify/cookie with its parsing hook; `authPlugin` registered with a route without its
 * hooks; `authenticate` as `onRequest` and as `preHandler`, and `trace`, on a cached cookie session. Each case in a
 * fresh server process per round (BENCH_ROUNDS, default 5), alternating, all sent the same request bytes; the
 * median of the server's CPU µs per request first, req/s beside it. With BENCH_OLD_DIST (the `dist/` of an older
 * build), its bare route and `authenticate` run in the same rounds, for a before/after of one change.
 */
import { fileURLToPath } from 'node:url'
import { median, type BenchRequest } from './lib.js'
import { LADDER_NAMES } from './ladder-apps.js'
import { lengths, loadServer, startServer, stopServer, type ServerProcess, type ServerRun } from './server-process.js'

const LABELS: Record<string, string> = {
  'ladder-bare': 'bare route',
  'ladder-async-hook': 'an empty async onRequest',
  'ladder-callback-hook': 'an empty callback onRequest',
  'ladder-cookie': '+ @fastify/cookie (its parsing hook)',
  'ladder-root': 'authPlugin registered, route without a hook',
  'ladder-auth-onrequest': 'authenticate as onRequest (cached session)',
  'ladder-auth-prehandler': 'authenticate as preHandler (cached session)',
  'ladder-trace': 'trace as preHandler (cached session)',
  'new:gatehouse': 'peer table\'s gatehouse app, this build',
  'old:bare': 'bare route, older build (BENCH_OLD_DIST)',
  'old:gatehouse': 'peer table\'s gatehouse app, older build'
}

interface Case { key: string; app: string; server?: string }

export async function benchLadder (): Promise<void> {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
  const len = lengths({ warmup: 1, seconds: 3 })
  const old = process.env.BENCH_OLD_DIST
  const cases: Case[] = LADDER_NAMES.map((name) => ({ key: name, app: name }))
  if (old !== undefined) {
    const server = fileURLToPath(new URL('bench/peer-server.js', `file://${old.endsWith('/') ? old : `${old}/`}`))
    cases.push({ key: 'new:gatehouse', app: 'gatehouse' }, { key: 'old:bare', app: 'bare', server }, { key: 'old:gatehouse', app: 'gatehouse', server })
  }
  const runs = new Map<string, ServerRun[]>(cases.map((c) => [c.key, []]))
  const reference = await referenceRequest()
  for (let r = 0; r < rounds; r++) {
    for (const c of cases) {
      const s: ServerProcess = await startServer(c.app, {}, c.server)
      try {
        // A server with a session of its own is sent that one (same length as the reference), the others the reference.
        runs.get(c.key)!.push(await loadServer(s, s.hello.cookies.length > 0 ? requestOf(s) : reference, len))
      } finally {
        await stopServer(s)
      }
    }
  }
  print(rounds, cases, runs)
}

function requestOf (s: ServerProcess): BenchRequest {
  return { path: '/r', headers: { ...s.hello.headers, cookie: s.hello.cookies.join('; ') } }
}

/** The bytes every server is sent: a session cookie pair and its XSRF header, from a server started for it. */
async function referenceRequest (): Promise<BenchRequest> {
  const s = await startServer('ladder-root')
  try { return requestOf(s) } finally { await stopServer(s) }
}

function print (rounds: number, cases: Case[], runs: Map<string, ServerRun[]>): void {
  const rows = cases.map((c) => {
    const rs = runs.get(c.key)!
    return { key: c.key, cpuUs: median(rs.map((x) => x.cpuUs)), rps: median(rs.map((x) => x.rps)), all: rs.map((x) => x.cpuUs.toFixed(2)).join(' ') }
  })
  const bare = rows[0]!
  console.log(`\n## hook ladder: server CPU µs per request (median of ${rounds} alternating rounds, a process per server per round)`)
  console.log(`${'case'.padEnd(46)} ${'CPU µs/req'.padStart(10)} ${'bare/case'.padStart(9)} ${'req/s'.padStart(8)} ${'ratio'.padStart(6)}  each round's CPU µs/req`)
  for (const r of rows) {
    console.log(`${LABELS[r.key]!.padEnd(46)} ${r.cpuUs.toFixed(2).padStart(10)} ${(bare.cpuUs / r.cpuUs).toFixed(3).padStart(9)} ${Math.round(r.rps).toString().padStart(8)} ${(r.rps / bare.rps).toFixed(2).padStart(5)}x  ${r.all}`)
  }
}
