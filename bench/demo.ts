/**
 * The demo ladder, `npm run bench -- demo`: the example application (every toolkit plugin it runs, the providers,
 * the request log written to nowhere) with `/api/open` against `/api/private` (`authenticate`, a cached cookie
 * session), both sent the same request bytes (the session cookie pair and the XSRF header). Alternating rounds,
 * medians (bench/lib.ts `load`); the demo runs in this process, autocannon in another.
 * Target: `/api/private` >= 0.95x `/api/open`.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildDemo } from '../example/server.js'
import { load, median, type BenchRequest } from './lib.js'
import { lengths } from './server-process.js'

const TARGET = 0.95
const USER = { name: 'bench', id: 'local_0123456789abcdef0123456789abcdef01234567' }

export async function benchDemo (): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-demo-'))
  const silent = { out: () => {}, err: () => {} }
  const demo = await buildDemo({ PORT: '0', DEV_AUTH_PORT: '0', CUSTOM_AUTH_PORT: '0', AVATAR_STORE: `bolt://${join(dir, 'avatars.db')}` }, silent)
  try {
    const { token, claims } = await demo.app.auth.tokens.create({ user: USER })
    const headers = { cookie: `JWT=${token}; XSRF-TOKEN=${claims.jti}`, 'x-xsrf-token': claims.jti }
    const base = `http://127.0.0.1:${demo.port}`
    const cases: Array<{ label: string; req: BenchRequest }> = [
      { label: '/api/open (same request bytes)', req: { path: '/api/open', headers } },
      { label: '/api/private (authenticate, cached session)', req: { path: '/api/private', headers } }
    ]
    for (const c of cases) {
      const probe = await fetch(base + c.req.path, { headers })
      if (probe.status !== 200) throw new Error(`${c.label}: probe answered ${probe.status}`)
      await probe.arrayBuffer()
    }
    const len = lengths({ warmup: 1, seconds: 5 })
    const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
    const runs = cases.map(() => [] as Array<{ rps: number; cpuUs: number }>)
    for (let r = 0; r < rounds; r++) {
      for (const [i, c] of cases.entries()) {
        if (len.warmup > 0) await load(base + c.req.path, c.req, 50, len.warmup)
        const cpu = process.cpuUsage()
        const res = await load(base + c.req.path, c.req, 50, len.seconds)
        const used = process.cpuUsage(cpu)
        if (res.non2xx + res.errors + res.timeouts > 0) throw new Error(`${c.label}: failed responses under load`)
        runs[i]!.push({ rps: res.requests.average, cpuUs: (used.user + used.system) / Math.max(1, res.requests.total) })
      }
    }
    const rows = cases.map((c, i) => ({ label: c.label, rps: median(runs[i]!.map((x) => x.rps)), cpuUs: median(runs[i]!.map((x) => x.cpuUs)) }))
    console.log(`\n## demo: /api/private against /api/open (median of ${rounds} alternating rounds)`)
    for (const r of rows) {
      console.log(`${r.label.padEnd(48)} ${Math.round(r.rps).toString().padStart(8)} req/s ${(r.rps / rows[0]!.rps).toFixed(2).padStart(6)}x ${r.cpuUs.toFixed(1).padStart(8)} CPU µs/req`)
    }
    const ratio = rows[1]!.rps / rows[0]!.rps
    console.log(`/api/private / /api/open: ${ratio.toFixed(2)}x (target >= ${TARGET.toFixed(2)}x ${ratio >= TARGET ? 'ok' : 'BELOW'})`)
  } finally {
    await demo.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
