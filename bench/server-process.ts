/**
 * The parent's side of bench/peer-server.ts: starts a benchmark server in a process of its own, asks it for its
 * CPU time and counters, stops it. A server that exits early fails the question being asked.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadavg } from 'node:os'
import { load, median, type BenchRequest } from './lib.js'
import { proofSigner } from './dpop-proofs.js'

const SERVER = fileURLToPath(new URL('./peer-server.js', import.meta.url))

/** What a server sends once it listens: its port, and the cookies and headers its session needs. */
export interface Hello { port: number; cookies: string[]; headers: Record<string, string> }
export interface ServerProcess<N extends string = string> { name: N; child: ChildProcess; hello: Hello }

/** Sends a command (none for the greeting) and resolves with the next message the server sends back. */
export function ask<T> (child: ChildProcess, message?: object): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null): void => { reject(new Error(`benchmark server exited (${code}) before answering`)) }
    child.once('exit', onExit)
    child.once('message', (m) => { child.off('exit', onExit); resolve(m as T) })
    if (message !== undefined) child.send(message)
  })
}

/**
 * Starts app `name` in a process of its own; `env` is added to this process's environment for it. With
 * BENCH_CPU_PROF set to a directory, the server writes a V8 CPU profile into its `<app>` folder when it stops
 * (Node's default file name; bench/profile-summary.ts reads it).
 */
export async function startServer<N extends string> (name: N, env: Record<string, string> = {}): Promise<ServerProcess<N>> {
  const profileDir = process.env.BENCH_CPU_PROF
  const execArgv = profileDir === undefined || profileDir === '' ? [] : ['--cpu-prof', `--cpu-prof-dir=${join(profileDir, name)}`]
  const child = fork(SERVER, [name], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, ...env }, execArgv })
  return { name, child, hello: await ask<Hello>(child) }
}

export async function stopServer (server: ServerProcess): Promise<void> {
  if (server.child.exitCode !== null) return
  const exited = new Promise((resolve) => server.child.once('exit', resolve))
  server.child.send({ cmd: 'stop' })
  await exited
}

/** The server's CPU time so far (µs) and its own counters. */
export function cpuOf<S extends object = Record<string, number>> (server: ServerProcess): Promise<{ cpu: number; stats: S }> {
  return ask(server.child, { cmd: 'cpu' })
}

/** One load of a server in its own process: req/s, its CPU µs per request, p99 ms. */
export interface ServerRun { rps: number; cpuUs: number; p99: number }

/** Lengths of one load: seconds of warm-up (every case measured compiled, not the first to meet the JIT), then of load. */
export interface LoadLengths {
  warmup: number
  seconds: number
  /**
   * Counts instead of seconds, when set: requests of warm-up, then of load. On a busy machine a server gets
   * through fewer requests per second, and a warm-up by time can end before its code is optimised.
   */
  warmupRequests?: number
  requests?: number
}

/**
 * BENCH_WARMUP and BENCH_SECONDS when set, else a suite's defaults; BENCH_WARMUP_REQUESTS and BENCH_REQUESTS,
 * when set, measure by counts of requests instead (e.g. 20000 and 40000 on a shared machine).
 */
export function lengths (defaults: LoadLengths): LoadLengths {
  const count = (name: string): number | undefined => process.env[name] === undefined || process.env[name] === '' ? undefined : Number(process.env[name])
  const warmupRequests = count('BENCH_WARMUP_REQUESTS')
  const requests = count('BENCH_REQUESTS')
  return {
    warmup: Number(process.env.BENCH_WARMUP ?? defaults.warmup),
    seconds: Number(process.env.BENCH_SECONDS ?? defaults.seconds),
    ...(warmupRequests === undefined ? {} : { warmupRequests }),
    ...(requests === undefined ? {} : { requests })
  }
}

/**
 * Checks one request answers `expectStatus` (default 200), warms the server up, then loads it with autocannon,
 * reading the server's CPU time around the load.
 */
export async function loadServer (server: ServerProcess, req: BenchRequest, len: LoadLengths, expectStatus = 200): Promise<ServerRun> {
  const url = `http://127.0.0.1:${server.hello.port}${req.path}`
  // A DPoP request's probe carries a proof of its own, as each of the load's requests does.
  const proof: Record<string, string> = req.dpop === undefined ? {} : { dpop: proofSigner(req.dpop, req.method)() }
  const probe = await fetch(url, { method: req.method ?? 'GET', headers: { ...req.headers, ...proof }, body: req.body ?? null })
  await probe.arrayBuffer()
  if (probe.status !== expectStatus) throw new Error(`${server.name}: probe answered ${probe.status}, expected ${expectStatus}`)
  if (len.warmupRequests !== undefined) await load(url, req, 50, { requests: len.warmupRequests })
  else if (len.warmup > 0) await load(url, req, 50, len.warmup)
  const before = (await cpuOf(server)).cpu
  const result = await load(url, req, 50, len.requests === undefined ? len.seconds : { requests: len.requests })
  const after = (await cpuOf(server)).cpu
  const bad = result.non2xx + result.errors + result.timeouts
  if (expectStatus < 300 && bad > 0) throw new Error(`${server.name}: ${bad} failed responses under load`)
  return { rps: result.requests.average, cpuUs: (after - before) / Math.max(1, result.requests.total), p99: result.latency.p99 }
}

/** A case of a table measured in server processes: the app's name (peer-server.ts) and the request to send. */
/** One row: `expectStatus` when the case's answer is not a 200 (a 304 of a revalidation). */
export interface ProcessCase { label: string; app: string; req: BenchRequest; target?: number; expectStatus?: number }

/** A case's medians across its processes, and the CPU µs per request of each process (in the order run). */
export interface ProcessResult extends ProcessCase, ServerRun { cpuRuns: number[] }

/**
 * Each case `rounds` times (default BENCH_ROUNDS or 3), alternating (1, 2, …, n, 1, 2, …), each time in a fresh
 * server process; the median req/s, CPU µs per request and p99 of each across its processes, in the order given.
 */
export async function alternateProcesses (cases: ProcessCase[], len: LoadLengths, rounds = Number(process.env.BENCH_ROUNDS ?? 3)): Promise<ProcessResult[]> {
  const runs = cases.map(() => [] as ServerRun[])
  for (let round = 0; round < rounds; round++) {
    for (const [i, c] of cases.entries()) {
      const server = await startServer(c.app)
      try { runs[i]!.push(await loadServer(server, c.req, len, c.expectStatus)) } finally { await stopServer(server) }
    }
  }
  return cases.map((c, i) => ({
    ...c,
    rps: median(runs[i]!.map((r) => r.rps)),
    cpuUs: median(runs[i]!.map((r) => r.cpuUs)),
    p99: median(runs[i]!.map((r) => r.p99)),
    cpuRuns: runs[i]!.map((r) => r.cpuUs)
  }))
}

/** The 1, 5 and 15 minute load averages, as printed with every table (a busy machine moves every figure). */
export function loadAverage (): string {
  return loadavg().map((l) => l.toFixed(2)).join(' / ')
}

/**
 * Prints a table measured in server processes, CPU first: per case the median CPU µs per request across its
 * processes, the baseline's over it (the ratio a CPU-bound server reaches; targets are judged on it), the lowest
 * and highest process, then req/s and its ratio (which follow what else the machine runs), p99 ms. `loadAtStart`:
 * the load average when the measuring began (printed with the one at the end).
 */
export function printCpuTable (title: string, results: ProcessResult[], loadAtStart: string): void {
  const base = results[0]!
  console.log(`\n## ${title}`)
  console.log(`load average (1 / 5 / 15 min): ${loadAtStart} at the start, ${loadAverage()} at the end`)
  console.log(`${'case'.padEnd(52)} ${'CPU µs/req'.padStart(10)} ${'ratio'.padStart(7)} ${'min-max µs'.padStart(12)} ${'req/s'.padStart(8)} ${'ratio'.padStart(7)} ${'p99 ms'.padStart(6)}  target (CPU ratio)`)
  for (const r of results) {
    const ratio = base.cpuUs / r.cpuUs
    const target = r.target === undefined ? '' : `>= ${r.target.toFixed(2)}x ${ratio >= r.target ? 'ok' : 'BELOW'}`
    const spread = `${Math.min(...r.cpuRuns).toFixed(1)}-${Math.max(...r.cpuRuns).toFixed(1)}`
    console.log(`${r.label.padEnd(52)} ${r.cpuUs.toFixed(2).padStart(10)} ${ratio.toFixed(3).padStart(6)}x ${spread.padStart(12)} ${Math.round(r.rps).toString().padStart(8)} ${(r.rps / base.rps).toFixed(2).padStart(6)}x ${r.p99.toFixed(0).padStart(6)}  ${target}`)
  }
}
