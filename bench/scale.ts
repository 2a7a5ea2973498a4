/**
 * `npm run bench -- scale`: several instances (bench/scale-app.ts, each in a process of its own) on one shared
 * Redis store, against one instance: one Redis server (1 and 3 instances), a Cluster of 3 masters + 3 replicas
 * and 1 master + 1 replica + 3 Sentinels (3 instances each), all on loopback. Per case, in fresh processes, one
 * operation at a time first (for its rate and its cost in Redis):
 * - password logins: autocannon on every instance at once (48 connections in all, split evenly), each login
 *   throttled, checked against the shared store and listed in the user's session list;
 * - dev OAuth2 logins: the whole round trip (start, authorization, callback: the state is a one-time value taken
 *   from the store), 8 loops in all spread over the instances;
 * - e-mail logins: the confirmation message asked for on one instance, its link opened on the next (the token is
 *   a one-time value checked in the store), 8 loops;
 * - authenticated requests: autocannon on `/private` with a session cookie, every instance at once;
 * - refresh grants of a registered client without cookies: LOGIN_LOOPS token families, each refreshing again and
 *   again at `POST /auth/token` with the refresh token its last grant answered (rotated on every use), every
 *   grant on the next instance (the current token and the rotated one are checked in the shared store);
 * - revocation visibility: a session seen on the last instance, logged out on the first; the time from the
 *   logout's request until the last instance refuses the session (100 samples);
 * - memory and keys per session in Redis: 300 logins of distinct users;
 * - refreshes and logouts, on instances whose tokens live 1 s: 2,000 sessions signed in, left to expire, then
 *   each presented once on another instance (a refresh: a new token in Set-Cookie), then each logged out;
 * then all of it at once (bench/scale-mix.ts): users signing in, browsing, refreshing and logging out on every
 * instance while revocation visibility is sampled under that load.
 * Redis commands per unit come from `INFO commandstats` of the masters (scripts' inner calls included); the
 * store's latency as the app sees it is the mean µs per state-store call, from its start to its answer, under
 * the login load. Cases alternate round by round (BENCH_ROUNDS, default 3), medians are printed. BENCH_SECONDS
 * (default 5) is the length of each timed load. Needs redis-server and redis-cli (Debian's redis-server and
 * redis-tools).
 */
import { load, median, type BenchRequest } from './lib.js'
import { Browser, base, emailLogin, issuePair, oauth2Login, passwordLogin, refreshGrant } from './scale-client.js'
import { mixLoad, revocationSample, SHORT_TOKEN_MS, type MixTally } from './scale-mix.js'
import { SCALE_PASSWORD } from './scale-app.js'
import { perUnit, STORES, totals, type RedisTotals, type StoreKind, type StoreSetup } from './scale-redis.js'
import { cpuOf, startServer, stopServer, type ServerProcess } from './server-process.js'
import type { StoreStats } from './login-apps.js'

const CONNECTIONS = 48
const LOGIN_LOOPS = 8
const REVOCATION_SAMPLES = 100
const MEMORY_SESSIONS = 300
const REFRESH_SESSIONS = 2000

interface ScaleCase { store: StoreKind; instances: number }
const CASES: ScaleCase[] = [
  { store: 'one', instances: 1 },
  { store: 'one', instances: 3 },
  { store: 'cluster', instances: 3 },
  { store: 'sentinel', instances: 3 }
]

/** A load's outcome over all instances: rate, worst p99 of the instances, Redis per unit, store µs per call. */
interface Phase { rate: number; p99: number; redis: RedisTotals; storeUsPerCall: number }
interface Mix { tally: MixTally; seconds: number; redisPerSecond: number }
interface Run {
  logins: Phase; dev: Phase; email: Phase; auth: Phase; grants: Phase; refresh: Phase; logout: Phase
  revocationMs: number[]; memory: RedisTotals; mix: Mix
}
/** Units done by a load and the worst p99 (ms) of its requests or operations. */
interface Done { units: number; p99: number }

async function storeStats (servers: ServerProcess[]): Promise<StoreStats> {
  const all = await Promise.all(servers.map(async (s) => (await cpuOf<StoreStats>(s)).stats))
  return { storeUs: all.reduce((n, x) => n + x.storeUs, 0), storeCalls: all.reduce((n, x) => n + x.storeCalls, 0) }
}

/**
 * Runs `work` with Redis and the apps' store counters read around it. The rate is over `seconds` at least (a
 * timed load's operations started before its end finish after it); 0 for a load of a fixed number of units.
 */
async function phase (setup: StoreSetup, servers: ServerProcess[], seconds: number, work: () => Promise<Done>): Promise<Phase> {
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
async function loadAll (servers: ServerProcess[], seconds: number, req: (s: ServerProcess) => Promise<BenchRequest>): Promise<Done> {
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
  ({ path: '/private', headers: (await passwordLogin(s, 'bench')).headers() })

/** `op` in LOGIN_LOOPS loops spread over the instances until `seconds` have passed; ms per operation. */
async function loops (servers: ServerProcess[], seconds: number, op: (at: number, i: number) => Promise<unknown>): Promise<Done> {
  const until = Date.now() + seconds * 1000
  const times: number[] = []
  await Promise.all(Array.from({ length: LOGIN_LOOPS }, async (_, loop) => {
    for (let i = 0; Date.now() < until; i++) {
      const start = Date.now()
      await op(loop % servers.length, i * LOGIN_LOOPS + loop)
      times.push(Date.now() - start)
    }
  }))
  return { units: times.length, p99: percentile(times, 0.99) }
}

/** LOGIN_LOOPS new token families, issued on the instances in turn: their refresh tokens. */
const families = async (servers: ServerProcess[], tag: string): Promise<string[]> =>
  await Promise.all(Array.from({ length: LOGIN_LOOPS }, async (_, k) => await issuePair(servers[k % servers.length]!, `grant-${tag}-${k}`)))

/**
 * Refresh grants for `seconds`: each of the families (`tokens`, one per loop) refreshing in a loop of its own with
 * the token its last grant answered, its grants going round the instances.
 */
async function grantLoops (servers: ServerProcess[], seconds: number, tokens: string[]): Promise<Done> {
  return await loops(servers, seconds, async (_at, i) => {
    const family = i % LOGIN_LOOPS
    tokens[family] = await refreshGrant(servers[(family + Math.floor(i / LOGIN_LOOPS)) % servers.length]!, tokens[family]!)
  })
}

/** `op` on each of `items`, LOGIN_LOOPS at a time; ms per operation. */
async function each<T> (items: T[], op: (item: T, i: number) => Promise<void>): Promise<Done> {
  const times: number[] = []
  let next = 0
  await Promise.all(Array.from({ length: LOGIN_LOOPS * 2 }, async () => {
    for (let i = next++; i < items.length; i = next++) {
      const start = Date.now()
      await op(items[i]!, i)
      times.push(Date.now() - start)
    }
  }))
  return { units: items.length, p99: percentile(times, 0.99) }
}

/** Redis memory and keys per session: MEMORY_SESSIONS logins of distinct users, 10 at a time. */
async function memoryPerSession (setup: StoreSetup, servers: ServerProcess[], tag: string): Promise<RedisTotals> {
  const before = await totals(setup)
  const users = Array.from({ length: MEMORY_SESSIONS }, (_, i) => `user-${tag}-${i}`)
  await each(users, async (user, i) => { await passwordLogin(servers[i % servers.length]!, user) })
  return perUnit(await totals(setup), before, MEMORY_SESSIONS)
}

const startAll = async (c: ScaleCase, env: Record<string, string>): Promise<ServerProcess[]> =>
  await Promise.all(Array.from({ length: c.instances }, async () => await startServer('scale', env)))

/** The refresh grants' phase: the families' first pairs are issued before the counters are read. */
async function grantPhase (setup: StoreSetup, servers: ServerProcess[], seconds: number, tag: string): Promise<Phase> {
  const tokens = await families(servers, tag)
  return await phase(setup, servers, seconds, async () => await grantLoops(servers, seconds, tokens))
}

/** Every operation alone, on instances with the default token lifetime. */
async function oneAtATime (setup: StoreSetup, c: ScaleCase, seconds: number, tag: string): Promise<Omit<Run, 'refresh' | 'logout' | 'mix'>> {
  const servers = await startAll(c, { GATEHOUSE_BENCH_STORE: setup.address })
  try {
    const next = (at: number): ServerProcess => servers[(at + 1) % servers.length]!
    // Warm-up (every instance compiled and connected), not counted.
    await loadAll(servers, 1, loginRequest)
    await loadAll(servers, 1, privateRequest)
    await loops(servers, 1, async (at, i) => await emailLogin(servers[at]!, next(at), `warm-${tag}-${i}`))
    await grantLoops(servers, 1, await families(servers, `warm-${tag}`))
    const logins = await phase(setup, servers, seconds, async () => await loadAll(servers, seconds, loginRequest))
    const dev = await phase(setup, servers, seconds, async () => await loops(servers, seconds, async (at) => await oauth2Login(servers[at]!)))
    const email = await phase(setup, servers, seconds, async () =>
      await loops(servers, seconds, async (at, i) => await emailLogin(servers[at]!, next(at), `mail-${tag}-${i}`)))
    const auth = await phase(setup, servers, seconds, async () => await loadAll(servers, seconds, privateRequest))
    const grants = await grantPhase(setup, servers, seconds, tag)
    const revocationMs: number[] = []
    for (let i = 0; i < REVOCATION_SAMPLES; i++) revocationMs.push(await revocationSample(servers, `revoked-${tag}-${i}`))
    return { logins, dev, email, auth, grants, revocationMs, memory: await memoryPerSession(setup, servers, tag) }
  } finally {
    await Promise.all(servers.map(stopServer))
  }
}

/** Refreshes and logouts of REFRESH_SESSIONS expired sessions, then the mix, on instances with short tokens. */
async function withShortTokens (setup: StoreSetup, c: ScaleCase, seconds: number, tag: string): Promise<Pick<Run, 'refresh' | 'logout' | 'mix'>> {
  const servers = await startAll(c, { GATEHOUSE_BENCH_STORE: setup.address, GATEHOUSE_BENCH_TOKEN_MS: String(SHORT_TOKEN_MS) })
  try {
    const n = servers.length
    const pool: Browser[] = []
    await each(Array.from({ length: REFRESH_SESSIONS }, (_, i) => i), async (i) => { pool[i] = await passwordLogin(servers[i % n]!, `refresh-${tag}-${i}`) })
    // Every token expired (its exp is in whole seconds), every session still alive.
    await new Promise((resolve) => setTimeout(resolve, SHORT_TOKEN_MS + 1100))
    const refresh = await phase(setup, servers, 0, async () => await each(pool, async (browser, i) => {
      const a = await browser.get(servers[(i + 1) % n]!, '/private')
      if (a.status !== 200 || !a.refreshed) throw new Error(`an expired session answered ${a.status}${a.refreshed ? '' : ' without a new token'}`)
    }))
    const logout = await phase(setup, servers, 0, async () => await each(pool, async (browser, i) => {
      const a = await browser.get(servers[(i + 2) % n]!, '/auth/logout')
      if (a.status !== 200 || browser.signedIn) throw new Error(`logout answered ${a.status}`)
    }))
    const before = await totals(setup)
    const began = Date.now()
    const tally = await mixLoad(servers, seconds, tag)
    const elapsed = (Date.now() - began) / 1000
    return { refresh, logout, mix: { tally, seconds: elapsed, redisPerSecond: ((await totals(setup)).commands - before.commands) / elapsed } }
  } finally {
    await Promise.all(servers.map(stopServer))
  }
}

async function measure (setup: StoreSetup, c: ScaleCase, seconds: number, round: number): Promise<Run> {
  const tag = `${c.store}-${c.instances}-${round}`
  return { ...await oneAtATime(setup, c, seconds, tag), ...await withShortTokens(setup, c, seconds, tag) }
}

/** The nearest-rank percentile (p99 of 100 samples is the 99th, not the largest). */
function percentile (xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.max(0, Math.ceil(s.length * p) - 1)] ?? 0
}

function print (rounds: number, labels: string[], runs: Run[][]): void {
  const m = (rs: Run[], f: (r: Run) => number): number => median(rs.map(f))
  const row = (cells: Array<string | number>, widths: number[]): string => cells.map((c, i) => String(c).padStart(widths[i]!)).join(' ')
  const rate = (rs: Run[], f: (r: Run) => Phase): string => `${Math.round(m(rs, (r) => f(r).rate))} / ${m(rs, (r) => f(r).p99).toFixed(0)}`
  const visibility = (samples: (r: Run) => number[]) => (rs: Run[]): string =>
    [0.5, 0.99, 1].map((p) => m(rs, (r) => p === 1 ? Math.max(...samples(r)) : percentile(samples(r), p)).toFixed(1)).join('/')
  console.log(`\n## scale: instances on one shared store (median of ${rounds} alternating rounds, a process per instance)`)
  console.log('\nOne operation at a time: per second / p99 ms (a login or refresh is every request it takes, in sequence;')
  console.log('refresh grants: a registered client\'s refresh_token grants at /auth/token, refreshes: expired cookie sessions)')
  const w1 = [24, 13, 13, 13, 14, 15, 13, 13, 10]
  console.log(row(['setup', 'password', 'dev OAuth2', 'e-mail link', 'auth requests', 'refresh grants', 'refreshes', 'logouts', 'store µs'], w1))
  for (const [i, rs] of runs.entries()) {
    console.log(row([labels[i]!, rate(rs, (r) => r.logins), rate(rs, (r) => r.dev), rate(rs, (r) => r.email), rate(rs, (r) => r.auth),
      rate(rs, (r) => r.grants), rate(rs, (r) => r.refresh), rate(rs, (r) => r.logout), Math.round(m(rs, (r) => r.logins.storeUsPerCall))], w1))
  }
  console.log('\nRedis commands per unit of work (masters; the calls inside scripts included, evals in brackets), memory per session')
  const w2 = [24, 11, 11, 11, 9, 12, 10, 10, 9, 7]
  console.log(row(['setup', 'password', 'dev', 'e-mail', 'auth', 'grant', 'refresh', 'logout', 'bytes', 'keys'], w2))
  for (const [i, rs] of runs.entries()) {
    const cmds = (f: (r: Run) => Phase): string => `${m(rs, (r) => f(r).redis.commands).toFixed(1)} (${m(rs, (r) => f(r).redis.evals).toFixed(1)})`
    console.log(row([labels[i]!, cmds((r) => r.logins), cmds((r) => r.dev), cmds((r) => r.email), m(rs, (r) => r.auth.redis.commands).toFixed(3),
      cmds((r) => r.grants), cmds((r) => r.refresh), cmds((r) => r.logout), Math.round(m(rs, (r) => r.memory.memory)), m(rs, (r) => r.memory.keys).toFixed(2)], w2))
  }
  console.log('\nAll at once (the mix, tokens of 1 s): per second; revocation visibility p50/p99/max ms idle and under the mix')
  const w3 = [24, 9, 15, 9, 9, 8, 8, 17, 17, 9]
  console.log(row(['setup', 'logins', '(pw/dev/mail)', 'requests', 'refreshes', 'logouts', 'p99 ms', 'revoked idle', 'revoked in mix', 'Redis/s'], w3))
  for (const [i, rs] of runs.entries()) {
    const per = (f: (t: MixTally) => number): number => m(rs, (r) => f(r.mix.tally) / r.mix.seconds)
    const kinds = `${per((t) => t.password).toFixed(0)}/${per((t) => t.oauth2).toFixed(0)}/${per((t) => t.email).toFixed(0)}`
    console.log(row([labels[i]!, per((t) => t.password + t.oauth2 + t.email).toFixed(0), kinds, per((t) => t.requests).toFixed(0),
      per((t) => t.refreshes).toFixed(0), per((t) => t.logouts).toFixed(0), m(rs, (r) => percentile(r.mix.tally.requestMs, 0.99)).toFixed(1),
      visibility((r) => r.revocationMs)(rs), visibility((r) => r.mix.tally.revocationMs)(rs), Math.round(m(rs, (r) => r.mix.redisPerSecond))], w3))
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
