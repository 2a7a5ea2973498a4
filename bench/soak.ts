/**
 * The soak (`npm run bench -- soak`): sign-ins and sign-outs for minutes against one instance, its memory sampled.
 * For each case of bench/soak-cases.ts a server runs in a process of its own (bench/soak-server.ts, with
 * `--expose-gc`, so that a sample is the heap still held after two full collections, not garbage waiting); here
 * `SOAK_WORKERS` loops (default 16) each sign a user in (one of `SOAK_USERS`, default 500: each user's session
 * list fills up to its 50 entries and stays there), make one authenticated request and sign out, over keep-alive
 * connections, for `SOAK_SECONDS` (default 180) per case, sampling every `SOAK_SAMPLE` seconds (default 10). The
 * case `demo-mix` runs the demo instead, loaded with the mix of bench/soak-mix.ts (password and dev OAuth2 sign-ins
 * from `SOAK_ADDRESSES` distinct addresses, default 50,000, private calls, sign-outs). `SOAK_CASES` picks cases.
 * Prints, per case, the samples and whether memory is flat after the warm-up (the first third, and until the
 * verified-session cache is full): the heap's slope over the rest, fitted by least squares, and its range.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { SOAK_CASES, SOAK_PASSWORD, type SoakSample } from './soak-cases.js'
import { addressOf, count, mixCycle, type MixCounts } from './soak-mix.js'

const SERVER = fileURLToPath(new URL('./soak-server.js', import.meta.url))
const MB = 1024 * 1024

type Counts = MixCounts
interface Row extends SoakSample { t: number; cycles: number }

function ask<T> (child: ChildProcess, message?: object): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null): void => { reject(new Error(`soak server exited (${code}) before answering`)) }
    child.once('exit', onExit)
    child.once('message', (m) => { child.off('exit', onExit); resolve(m as T) })
    if (message !== undefined) child.send(message)
  })
}

/** The `name=value` pairs of an answer's cookies (a cleared cookie's empty value included). */
function cookiesOf (res: Response): Map<string, string> {
  const jar = new Map<string, string>()
  for (const line of res.headers.getSetCookie()) {
    const pair = line.split(';', 1)[0]!
    const eq = pair.indexOf('=')
    jar.set(pair.slice(0, eq), pair.slice(eq + 1))
  }
  return jar
}

/** One user's sign-in, an authenticated request and sign-out. */
async function cycle (base: string, user: string, counts: Counts): Promise<void> {
  const login = await fetch(`${base}/auth/local/login`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user, passwd: SOAK_PASSWORD })
  })
  await login.arrayBuffer()
  count(counts, 'login', login.status)
  if (login.status !== 200) return
  const jar = cookiesOf(login)
  const headers = { cookie: `JWT=${jar.get('JWT')}; XSRF-TOKEN=${jar.get('XSRF-TOKEN')}`, 'x-xsrf-token': jar.get('XSRF-TOKEN')! }
  const me = await fetch(`${base}/api/me`, { headers })
  await me.arrayBuffer()
  count(counts, 'request', me.status)
  const logout = await fetch(`${base}/auth/logout`, { method: 'POST', headers })
  await logout.arrayBuffer()
  count(counts, 'logout', logout.status)
  counts.cycles++
}

/** A Markdown table, as bench/RESULTS.md keeps them. */
function markdownTable (head: string[], rows: string[][]): void {
  console.log(`| ${head.join(' | ')} |`)
  console.log(`|${head.map(() => '---').join('|')}|`)
  for (const r of rows) console.log(`| ${r.join(' | ')} |`)
}

/** The least-squares slope of `ys` over `xs`. */
function slope (xs: number[], ys: number[]): number {
  const n = xs.length
  const mx = xs.reduce((a, b) => a + b, 0) / n
  const my = ys.reduce((a, b) => a + b, 0) / n
  let num = 0
  let den = 0
  for (let i = 0; i < n; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my)
    den += (xs[i]! - mx) ** 2
  }
  return den === 0 ? 0 : num / den
}

async function soakCase (name: string, seconds: number, every: number, workers: number, users: number): Promise<void> {
  const child = fork(SERVER, [], { execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, SOAK_CASE: name } })
  try {
    const { port } = await ask<{ port: number }>(child)
    const base = `http://127.0.0.1:${port}`
    const counts: Counts = { cycles: 0, statuses: new Map() }
    const start = Date.now()
    const until = start + seconds * 1000
    let next = 0
    const addresses = Number(process.env.SOAK_ADDRESSES ?? 50_000)
    const demo = SOAK_CASES[name]!.demo === true
    const loops = Array.from({ length: workers }, async () => {
      while (Date.now() < until) {
        const n = next++
        if (demo) await mixCycle(base, addressOf(n, addresses), n, `user${n % users}`, counts)
        else await cycle(base, `user${n % users}`, counts)
      }
    })
    const rows: Row[] = [{ t: 0, cycles: 0, ...await ask<SoakSample>(child, { cmd: 'sample' }) }]
    for (let t = every; t <= seconds; t += every) {
      await new Promise((resolve) => setTimeout(resolve, start + t * 1000 - Date.now()))
      rows.push({ t, cycles: counts.cycles, ...await ask<SoakSample>(child, { cmd: 'sample' }) })
    }
    await Promise.all(loops)
    report(name, rows, counts, seconds)
  } finally {
    await stopServer(child)
  }
}

/**
 * Asks the soak server to stop, so that it closes what it started (the demo's SimpleSAMLphp: lighttpd and php-cgi
 * would outlive a killed server), and kills it only if it has not exited within 10 s.
 */
async function stopServer (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => { child.once('exit', () => { resolve() }) })
  if (child.connected) child.send({ cmd: 'stop' })
  else child.kill()
  const timer = setTimeout(() => { child.kill() }, 10_000)
  await exited
  clearTimeout(timer)
}

function report (name: string, rows: Row[], counts: Counts, seconds: number): void {
  console.log(`\n### ${name}: ${SOAK_CASES[name]!.label}\n`)
  markdownTable(['t (s)', 'cycles/s', 'heap MB', 'RSS MB', 'store entries', 'store MB', 'cached sessions'], rows.map((r, i) => [
    String(r.t),
    i === 0 ? '' : ((r.cycles - rows[i - 1]!.cycles) / (r.t - rows[i - 1]!.t)).toFixed(0),
    (r.heapUsed / MB).toFixed(1),
    (r.rss / MB).toFixed(1),
    String(r.entries),
    (r.storeBytes / MB).toFixed(1),
    String(r.cached)
  ]))
  // Warm-up: the first third, and until the verified-session cache stops growing (it holds up to
  // session.cacheSize sessions by design, so the heap grows with it until it is full).
  const filledAt = rows.find((r) => r.cached === rows.at(-1)!.cached)!.t
  const from = Math.max(seconds / 3, filledAt)
  const after = rows.filter((r) => r.t >= from)
  const heap = after.map((r) => r.heapUsed / MB)
  const rss = after.map((r) => r.rss / MB)
  const perMin = (ys: number[]): string => (slope(after.map((r) => r.t / 60), ys)).toFixed(2)
  console.log(`\n${counts.cycles} cycles (${(counts.cycles / seconds).toFixed(0)}/s); answers: ${[...counts.statuses].map(([k, v]) => `${k}: ${v}`).join(', ')}`)
  console.log(`after the warm-up (t ≥ ${Math.round(from)} s; the session cache stopped growing at ${filledAt} s): heap ${Math.min(...heap).toFixed(1)}–${Math.max(...heap).toFixed(1)} MB, slope ${perMin(heap)} MB/min; RSS ${Math.min(...rss).toFixed(1)}–${Math.max(...rss).toFixed(1)} MB, slope ${perMin(rss)} MB/min`)
}

export async function benchSoak (): Promise<void> {
  const seconds = Number(process.env.SOAK_SECONDS ?? 180)
  const every = Number(process.env.SOAK_SAMPLE ?? 10)
  const workers = Number(process.env.SOAK_WORKERS ?? 16)
  const users = Number(process.env.SOAK_USERS ?? 500)
  const cases = (process.env.SOAK_CASES ?? Object.keys(SOAK_CASES).join(',')).split(',')
  console.log(`\n## Soak: ${seconds} s per case, ${workers} loops, ${users} users, a sample every ${every} s (Node ${process.version})`)
  for (const name of cases) {
    if (!Object.hasOwn(SOAK_CASES, name)) throw new Error(`soak: unknown case ${name}; choose from ${Object.keys(SOAK_CASES).join(', ')}`)
    await soakCase(name, seconds, every, workers, users)
  }
}
