/**
 * The parent's side of bench/peer-server.ts: starts a benchmark server in a process of its own, asks it for its
 * CPU time and counters, stops it. A server that exits early fails the question being asked.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { load, median, printTable, type BenchRequest } from './lib.js'

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
 * Starts app `name` in a process of its own; `env` is added to this process's environment for it. `server`: the
 * peer-server script of another build (a before/after in one run), this build's by default.
 */
export async function startServer<N extends string> (name: N, env: Record<string, string> = {}, server = SERVER): Promise<ServerProcess<N>> {
  const child = fork(server, [name], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, ...env } })
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
export interface LoadLengths { warmup: number; seconds: number }

/** BENCH_WARMUP and BENCH_SECONDS when set, else a suite's defaults. */
export function lengths (defaults: LoadLengths): LoadLengths {
  return {
    warmup: Number(process.env.BENCH_WARMUP ?? defaults.warmup),
    seconds: Number(process.env.BENCH_SECONDS ?? defaults.seconds)
  }
}

/**
 * Checks one request answers `expectStatus` (default 200), warms the server up, then loads it with autocannon,
 * reading the server's CPU time around the load.
 */
export async function loadServer (server: ServerProcess, req: BenchRequest, len: LoadLengths, expectStatus = 200): Promise<ServerRun> {
  const url = `http://127.0.0.1:${server.hello.port}${req.path}`
  const probe = await fetch(url, { method: req.method ?? 'GET', headers: req.headers ?? {}, body: req.body ?? null })
  await probe.arrayBuffer()
  if (probe.status !== expectStatus) throw new Error(`${server.name}: probe answered ${probe.status}, expected ${expectStatus}`)
  if (len.warmup > 0) await load(url, req, 50, len.warmup)
  const before = (await cpuOf(server)).cpu
  const result = await load(url, req, 50, len.seconds)
  const after = (await cpuOf(server)).cpu
  const bad = result.non2xx + result.errors + result.timeouts
  if (expectStatus < 300 && bad > 0) throw new Error(`${server.name}: ${bad} failed responses under load`)
  return { rps: result.requests.average, cpuUs: (after - before) / Math.max(1, result.requests.total), p99: result.latency.p99 }
}

/** A case of a table measured in server processes: the app's name (peer-server.ts) and the request to send. */
export interface ProcessCase { label: string; app: string; req: BenchRequest; target?: number }

/**
 * Each case `rounds` times (default BENCH_ROUNDS or 3), alternating (1, 2, …, n, 1, 2, …), each time in a fresh
 * server process; the median req/s, CPU µs per request and p99 of each, in the order given.
 */
export async function alternateProcesses (cases: ProcessCase[], len: LoadLengths, rounds = Number(process.env.BENCH_ROUNDS ?? 3)): Promise<Array<ProcessCase & ServerRun>> {
  const runs = cases.map(() => [] as ServerRun[])
  for (let round = 0; round < rounds; round++) {
    for (const [i, c] of cases.entries()) {
      const server = await startServer(c.app)
      try { runs[i]!.push(await loadServer(server, c.req, len)) } finally { await stopServer(server) }
    }
  }
  return cases.map((c, i) => ({
    ...c,
    rps: median(runs[i]!.map((r) => r.rps)),
    cpuUs: median(runs[i]!.map((r) => r.cpuUs)),
    p99: median(runs[i]!.map((r) => r.p99))
  }))
}

/** Measures the baseline and the rows alternately, each in its own process, and prints the ratios to the baseline. */
export async function printProcessTable (title: string, baseline: ProcessCase, rows: ProcessCase[], len: LoadLengths): Promise<void> {
  const [base, ...measured] = await alternateProcesses([baseline, ...rows], len)
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
  printTable(`${title} (median of ${rounds} alternating rounds, a process per server)`, base!, measured)
}
