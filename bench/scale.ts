/**
 * `npm run bench -- scale`: several instances (bench/scale-app.ts, each in a process of its own) on one shared
 * Redis store, against one instance: one Redis server (1 and 3 instances), a Cluster of 3 masters + 3 replicas
 * and 1 master + 1 replica + 3 Sentinels (3 instances each), all on loopback. Per case, in fresh processes:
 * - password logins: autocannon on every instance at once (48 connections in all, split evenly), each login
 *   throttled, checked against the shared store and listed in the user's session list;
 * - dev OAuth2 logins: the whole round trip (start, authorization, callback: the state is a one-time value taken
 *   from the store), 8 loops in all spread over the instances;
 * - authenticated requests: autocannon on `/private` with a session cookie, every instance at once;
 * - revocation visibility: a session cached on the last instance, logged out on the first; the time from the
 *   logout's request until the last instance refuses the session (100 samples);
 * - memory and keys per session in Redis: 300 logins of distinct users;
 * - Redis commands per login and per request (`INFO commandstats` of the masters, scripts' inner calls included)
 *   and the store's latency as the app sees it (mean µs per state-store call, from the start of the call to its
 *   answer, under the login load).
 * Cases alternate round by round (BENCH_ROUNDS, default 3), medians are printed. BENCH_SECONDS (default 5) is
 * the length of each load. Needs redis-server and redis-cli (Debian's redis-server and redis-tools).
 */
import { load, median, type BenchRequest } from './lib.js'
import { devLogin } from './login.js'
import { SCALE_PASSWORD } from './scale-app.js'
import { perUnit, STORES, totals, type RedisTotals, type StoreKind, type StoreSetup } from './scale-redis.js'
import { cpuOf, startServer, stopServer, type ServerProcess } from './server-process.js'
import type { StoreStats } from './login-apps.js'

const CONNECTIONS = 48
const DEV_LOOPS = 8
const REVOCATION_SAMPLES = 100
const MEMORY_SESSIONS = 300

interface ScaleCase { store: StoreKind; instances: number }
const CASES: ScaleCase[] = [
  { store: 'one', instances: 1 },
  { store: 'one', instances: 3 },
  { store: 'cluster', instances: 3 },
  { store: 'sentinel', instances: 3 }
]

/** A load's outcome over all instances: rate, worst p99 of the instances, Redis per unit, store µs per call. */
interface Phase { rate: number; p99: number; redis: RedisTotals; storeUsPerCall: number }
interface Run { logins: Phase; dev: Phase; auth: Phase; revocationMs: number[]; memory: RedisTotals }

const base = (s: ServerProcess): string => `http://127.0.0.1:${s.hello.port}`

/** A password login; resolves with the Cookie header and XSRF header value its session needs. */
async function login (s: ServerProcess, user: string): Promise<Record<string, string>> {
  const r = await fetch(`${base(s)}/auth/local/login`, {
    method: 'POST', headers: { ...s.hello.headers, 'content-type': 'application/json' }, body: JSON.stringify({ user, passwd: SCALE_PASSWORD })
  })
  await r.arrayBuffer()
  if (r.status !== 200) throw new Error(`login of ${user} answered ${r.status}`)
  const jar = r.headers.getSetCookie().map((line) => line.split(';', 1)[0]!)
  const xsrf = jar.find((c) => c.startsWith('XSRF-TOKEN='))?.slice('XSRF-TOKEN='.length) ?? ''
  return { cookie: jar.join('; '), 'x-xsrf-token': xsrf }
}

async function storeStats (servers: ServerProcess[]): Promise<StoreStats> {
  const all = await Promise.all(servers.map(async (s) => (await cpuOf<StoreStats>(s)).stats))
  return { storeUs: all.reduce((n, x) => n + x.storeUs, 0), storeCalls: all.reduce((n, x) => n + x.storeCalls, 0) }
}

/** Runs `work` (resolving with units done and the worst p99) with Redis and the apps' store counters around it. */
async function phase (setup: StoreSetup, servers: ServerProcess[], seconds: number, work: () => Promise<{ units: number; p99: number }>): Promise<Phase> {
  const [redis0, store0] = [await totals(setup), await storeStats(servers)]
  const began = Date.now()
  const { units, p99 } = await work()
  const elapsed = (Date.now() - began) / 1000
  const [redis1, store1] = [await totals(setup), await storeStats(servers)]
  return {
    rate: units / Math.max(elapsed, seconds),
    p99,
    redis: perUnit(redis1, redis0, units),
    storeUsPerCall: (store1.storeUs - store0.storeUs) / Math.max(1, store1.storeCalls - store0.storeCalls)
  }
}

/** Autocannon on every instance at once; each answer must be 200. */
async function loadAll (servers: ServerProcess[], seconds: number, req: (s: ServerProcess) => Promise<BenchRequest>): Promise<{ units: number; p99: number }> {
  const reqs = await Promise.all(servers.map(req))
  const results = await Promise.all(servers.map(async (s, i) => await load(`${base(s)}${reqs[i]!.path}`, reqs[i]!, Math.ceil(CONNECTIONS / servers.length), seconds, true)))
  const bad = results.reduce((n, r) => n + r.non2xx + r.errors + r.timeouts, 0)
  if (bad > 0) {
    const probe = await fetch(`${base(servers[0]!)}${reqs[0]!.path}`, { method: reqs[0]!.method ?? 'GET', headers: reqs[0]!.headers, body: reqs[0]!.body ?? null })
    throw new Error(`${bad} failed answers under load (${results.map((r) => `${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`).join('; ')}); now ${probe.status} ${await probe.text()}`)
  }
  return { units: results.reduce((n, r) => n + r.requests.total, 0), p99: Math.max(...results.map((r) => r.latency.p99)) }
}

/**
 * A login of a user of its own per request (`[<id>]` is replaced by autocannon): a failed check locks an
 * account, and so do more parallel attempts on one account than `rateLimit.failures.perAccount` (attempts are
 * counted before the check), so one account for all would be refused after 5.
 */
const loginRequest = async (s: ServerProcess): Promise<BenchRequest> =>
  ({ path: '/auth/local/login', method: 'POST', headers: { ...s.hello.headers, 'content-type': 'application/json' }, body: JSON.stringify({ user: 'bench-[<id>]', passwd: SCALE_PASSWORD }) })

const privateRequest = async (s: ServerProcess): Promise<BenchRequest> =>
  ({ path: '/private', headers: await login(s, 'bench') })

/** Dev OAuth2 logins in DEV_LOOPS loops spread over the instances, for `seconds`. */
async function devLoad (servers: ServerProcess[], seconds: number): Promise<{ units: number; p99: number }> {
  const until = Date.now() + seconds * 1000
  const times: number[] = []
  await Promise.all(Array.from({ length: DEV_LOOPS }, async (_, i) => {
    const s = servers[i % servers.length]!
    while (Date.now() < until) {
      const start = Date.now()
      await devLogin(base(s), s.hello.headers)
      times.push(Date.now() - start)
    }
  }))
  return { units: times.length, p99: percentile(times, 0.99) }
}

/** Logout on the first instance, a session cached on the last: ms until the last refuses it. */
async function revocationSample (servers: ServerProcess[], tag: string): Promise<number> {
  const [first, last] = [servers[0]!, servers[servers.length - 1]!]
  const headers = await login(first, `revoked-${tag}`)
  const seen = await fetch(`${base(last)}/private`, { headers })
  await seen.arrayBuffer()
  if (seen.status !== 200) throw new Error(`a fresh session answered ${seen.status}`)
  const start = process.hrtime.bigint()
  const out = await fetch(`${base(first)}/auth/logout`, { headers })
  await out.arrayBuffer()
  if (out.status !== 200) throw new Error(`logout answered ${out.status}`)
  for (let tries = 0; ; tries++) {
    const r = await fetch(`${base(last)}/private`, { headers })
    await r.arrayBuffer()
    if (r.status === 401) return Number(process.hrtime.bigint() - start) / 1e6
    if (tries > 10_000) throw new Error('the revocation never reached the other instance')
  }
}

/** Redis memory and keys per session: MEMORY_SESSIONS logins of distinct users, 10 at a time. */
async function memoryPerSession (setup: StoreSetup, servers: ServerProcess[], tag: string): Promise<RedisTotals> {
  const before = await totals(setup)
  for (let i = 0; i < MEMORY_SESSIONS; i += 10) {
    await Promise.all(Array.from({ length: 10 }, async (_, j) => await login(servers[(i + j) % servers.length]!, `user-${tag}-${i + j}`)))
  }
  return perUnit(await totals(setup), before, MEMORY_SESSIONS)
}

async function measure (setup: StoreSetup, c: ScaleCase, seconds: number, round: number): Promise<Run> {
  const servers = await Promise.all(Array.from({ length: c.instances }, async () => await startServer('scale', { GATEHOUSE_BENCH_STORE: setup.address })))
  try {
    // Warm-up (every instance compiled and connected), not counted.
    await loadAll(servers, 1, loginRequest)
    await loadAll(servers, 1, privateRequest)
    const logins = await phase(setup, servers, seconds, async () => await loadAll(servers, seconds, loginRequest))
    const dev = await phase(setup, servers, seconds, async () => await devLoad(servers, seconds))
    const auth = await phase(setup, servers, seconds, async () => await loadAll(servers, seconds, privateRequest))
    const revocationMs: number[] = []
    for (let i = 0; i < REVOCATION_SAMPLES; i++) revocationMs.push(await revocationSample(servers, `${c.store}-${c.instances}-${round}-${i}`))
    return { logins, dev, auth, revocationMs, memory: await memoryPerSession(setup, servers, `${c.store}-${c.instances}-${round}`) }
  } finally {
    await Promise.all(servers.map(stopServer))
  }
}

/** The nearest-rank percentile (p99 of 100 samples is the 99th, not the largest). */
function percentile (xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.max(0, Math.ceil(s.length * p) - 1)] ?? 0
}

function print (rounds: number, labels: string[], runs: Run[][]): void {
  const m = (rs: Run[], f: (r: Run) => number): number => median(rs.map(f))
  const row = (cells: Array<string | number>, widths: number[]): string => cells.map((c, i) => String(c).padStart(widths[i]!)).join(' ')
  console.log(`\n## scale: instances on one shared store (median of ${rounds} alternating rounds, a process per instance)`)
  const w1 = [24, 10, 8, 10, 8, 10, 8, 12]
  console.log(row(['setup', 'logins/s', 'p99 ms', 'dev/s', 'p99 ms', 'auth req/s', 'p99 ms', 'store µs/call'], w1))
  for (const [i, rs] of runs.entries()) {
    console.log(row([labels[i]!, Math.round(m(rs, (r) => r.logins.rate)), m(rs, (r) => r.logins.p99), Math.round(m(rs, (r) => r.dev.rate)),
      m(rs, (r) => r.dev.p99), Math.round(m(rs, (r) => r.auth.rate)), m(rs, (r) => r.auth.p99), Math.round(m(rs, (r) => r.logins.storeUsPerCall))], w1))
  }
  console.log('\nRedis per unit of work (masters; commands include the calls inside scripts, evals in brackets), revocation visibility, memory')
  const w2 = [24, 14, 14, 12, 22, 14, 12]
  console.log(row(['setup', 'cmds/login', 'cmds/dev', 'cmds/auth', 'revocation p50/p99/max', 'bytes/session', 'keys/session'], w2))
  for (const [i, rs] of runs.entries()) {
    const cmds = (f: (r: Run) => Phase): string => `${m(rs, (r) => f(r).redis.commands).toFixed(1)} (${m(rs, (r) => f(r).redis.evals).toFixed(1)})`
    const rev = (p: number): string => m(rs, (r) => p === 1 ? Math.max(...r.revocationMs) : percentile(r.revocationMs, p)).toFixed(1)
    console.log(row([labels[i]!, cmds((r) => r.logins), cmds((r) => r.dev), m(rs, (r) => r.auth.redis.commands).toFixed(3),
      `${rev(0.5)}/${rev(0.99)}/${rev(1)} ms`, Math.round(m(rs, (r) => r.memory.memory)), m(rs, (r) => r.memory.keys).toFixed(2)], w2))
  }
}

export async function benchScale (): Promise<void> {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
  const seconds = Number(process.env.BENCH_SECONDS ?? 5)
  const kinds = [...new Set(CASES.map((c) => c.store))]
  const setups = new Map<StoreKind, StoreSetup>()
  try {
    for (const kind of kinds) setups.set(kind, await STORES[kind]())
    const runs = CASES.map(() => [] as Run[])
    for (let round = 0; round < rounds; round++) {
      for (const [i, c] of CASES.entries()) runs[i]!.push(await measure(setups.get(c.store)!, c, seconds, round))
    }
    print(rounds, CASES.map((c) => `${setups.get(c.store)!.label}, ${c.instances} inst.`), runs)
  } finally {
    for (const s of setups.values()) await s.stop()
  }
}
