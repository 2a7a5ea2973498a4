/**
 * The login ladders, `npm run bench -- login`: what one login costs the server, in a process of its own
 * (bench/login-apps.ts, bench/peer-server.ts), loaded from this process, in alternating rounds, medians.
 * - Password: a POST route parsing the same JSON body, then the direct provider with a checker that only
 *   compares strings, throttling off and on; loaded by autocannon (50 connections), every answer must be 200.
 * - dev OAuth2: the whole browser round trip per login (start → the dev server's authorization → callback,
 *   which exchanges the code and reads the user over loopback HTTP), by a few concurrent fetch loops that carry
 *   the cookies; the dev server runs in the app's process, so its work is counted as the server's.
 * Printed: logins/s, server CPU µs per login, and the state store's part: µs in its calls per login, calls per
 * login, share of the CPU. No targets. BENCH_ROUNDS (default 3), BENCH_SECONDS (default 5) set the lengths.
 */
import { load, median, type BenchRequest } from './lib.js'
import { LOGIN_BODY, type LoginName, type StoreStats } from './login-apps.js'
import { cpuOf, startServer, stopServer, type ServerProcess } from './server-process.js'

/** Concurrent login loops of the dev ladder (each login is three requests in sequence). */
const DEV_LOOPS = 8

interface Run { rate: number; cpuUs: number; storeUs: number; storeCalls: number }

const LABELS: Record<LoginName, string> = {
  'login-bare': 'POST route, same JSON body (no login)',
  password: 'password login, throttling off',
  'password-throttled': 'password login, throttling on',
  dev: 'dev OAuth2 login (3 requests), throttling off',
  'dev-throttled': 'dev OAuth2 login (3 requests), throttling on'
}

function passwordRequest (hello: ServerProcess['hello']): BenchRequest {
  return { path: '/auth/local/login', method: 'POST', headers: { ...hello.headers, 'content-type': 'application/json' }, body: LOGIN_BODY }
}

/** Autocannon on the password login: logins per second and how many there were. */
async function passwordLoad (server: ServerProcess, seconds: number): Promise<{ rate: number; total: number }> {
  const req = passwordRequest(server.hello)
  const url = `http://127.0.0.1:${server.hello.port}${req.path}`
  const probe = await fetch(url, { method: 'POST', headers: req.headers ?? {}, body: req.body ?? null })
  const text = await probe.text()
  if (probe.status !== 200) throw new Error(`${server.name}: probe answered ${probe.status} ${text}`)
  const result = await load(url, req, 50, seconds)
  const bad = result.non2xx + result.errors + result.timeouts
  if (bad > 0) throw new Error(`${server.name}: ${bad} failed logins under load`)
  return { rate: result.requests.average, total: result.requests.total }
}

/**
 * One dev OAuth2 login as a browser makes it, following the redirects and carrying the app's cookies; resolves
 * with the callback's Set-Cookie lines (the session).
 */
export async function devLogin (base: string, headers: Record<string, string>): Promise<string[]> {
  const start = await fetch(`${base}/auth/dev/login?session=1`, { redirect: 'manual', headers })
  const jar = start.headers.getSetCookie().map((line) => line.split(';', 1)[0]!).join('; ')
  await start.arrayBuffer()
  const authorize = await fetch(start.headers.get('location') ?? '', { redirect: 'manual' })
  await authorize.arrayBuffer()
  const callback = await fetch(authorize.headers.get('location') ?? '', { redirect: 'manual', headers: { ...headers, cookie: jar } })
  await callback.arrayBuffer()
  if (callback.status >= 400 || !callback.headers.getSetCookie().some((c) => c.startsWith('JWT='))) {
    throw new Error(`dev login: the callback answered ${callback.status} without a session`)
  }
  return callback.headers.getSetCookie()
}

async function devLoad (server: ServerProcess, seconds: number): Promise<{ rate: number; total: number }> {
  const base = `http://127.0.0.1:${server.hello.port}`
  await devLogin(base, server.hello.headers)
  const until = Date.now() + seconds * 1000
  let total = 0
  const loop = async (): Promise<void> => {
    while (Date.now() < until) { await devLogin(base, server.hello.headers); total++ }
  }
  const began = Date.now()
  await Promise.all(Array.from({ length: DEV_LOOPS }, loop))
  return { rate: total / ((Date.now() - began) / 1000), total }
}

/** Starts the server, loads it, reads its CPU and store counters around the load, stops it. */
async function measure (name: LoginName, seconds: number): Promise<Run> {
  const server = await startServer(name)
  try {
    const run = name.startsWith('dev') ? devLoad : passwordLoad
    // Warm-up, then the measured load (the probe's login and the warm-up are not counted).
    await run(server, Math.min(1, seconds))
    const before = await cpuOf<Partial<StoreStats>>(server)
    const { rate, total } = await run(server, seconds)
    const after = await cpuOf<Partial<StoreStats>>(server)
    const per = (a: number | undefined, b: number | undefined): number => ((a ?? 0) - (b ?? 0)) / Math.max(1, total)
    return { rate, cpuUs: per(after.cpu, before.cpu), storeUs: per(after.stats.storeUs, before.stats.storeUs), storeCalls: per(after.stats.storeCalls, before.stats.storeCalls) }
  } finally {
    await stopServer(server)
  }
}

function print (title: string, rounds: number, names: readonly LoginName[], runs: Map<LoginName, Run[]>): void {
  console.log(`\n## ${title} (median of ${rounds} alternating rounds, a process per server)`)
  console.log(`${'case'.padEnd(48)} ${'logins/s'.padStart(9)} ${'CPU µs/login'.padStart(13)} ${'store µs/login'.padStart(15)} ${'store calls'.padStart(12)} ${'store share'.padStart(12)}`)
  for (const name of names) {
    const rs = runs.get(name)!
    const m = (f: (r: Run) => number): number => median(rs.map(f))
    const cpu = m((r) => r.cpuUs)
    const store = m((r) => r.storeUs)
    const storeCols = name === 'login-bare' ? ''.padStart(15) + ''.padStart(13) + ''.padStart(13) : `${store.toFixed(1).padStart(15)} ${m((r) => r.storeCalls).toFixed(1).padStart(12)} ${`${(100 * store / cpu).toFixed(1)}%`.padStart(12)}`
    console.log(`${LABELS[name].padEnd(48)} ${Math.round(m((r) => r.rate)).toString().padStart(9)} ${cpu.toFixed(1).padStart(13)} ${storeCols}`)
  }
}

async function ladder (title: string, names: readonly LoginName[], rounds: number, seconds: number): Promise<void> {
  const runs = new Map<LoginName, Run[]>(names.map((n) => [n, []]))
  for (let r = 0; r < rounds; r++) for (const name of names) runs.get(name)!.push(await measure(name, seconds))
  print(title, rounds, names, runs)
}

export async function benchLogin (): Promise<void> {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
  const seconds = Number(process.env.BENCH_SECONDS ?? 5)
  await ladder('password login ladder (trivial checker)', ['login-bare', 'password', 'password-throttled'], rounds, seconds)
  await ladder('dev OAuth2 login ladder (start, authorize, callback)', ['dev', 'dev-throttled'], rounds, seconds)
}
