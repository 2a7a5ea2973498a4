/**
 * Shared benchmark harness: each case is a freshly built Fastify app on a loopback port in this process, loaded
 * by autocannon in a child process (so the server has a core of its own and its cost is not charged twice),
 * then closed. Every number of one run is comparable because cases run back to back; `alternate` runs a set of
 * cases in several alternating rounds and keeps the median of each, so that a slow moment of the machine does not
 * land on one case only. Autocannon runs without pipelining (one request in flight per connection).
 */
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { DPoPLoad } from './dpop-proofs.js'

const AUTOCANNON_CLI = createRequire(import.meta.url).resolve('autocannon/autocannon.js')
// Beside this module: dist/bench/dpop-load.js when built, bench/dpop-load.ts under the TypeScript loader (tests).
const FROM_SOURCE = import.meta.url.endsWith('.ts')
const DPOP_LOAD = fileURLToPath(new URL(FROM_SOURCE ? './dpop-load.ts' : './dpop-load.js', import.meta.url))

/** What is read of autocannon's `--json` result (latency in ms). */
export interface LoadResult { requests: { average: number; total: number }; latency: { p99: number }; non2xx: number; errors: number; timeouts: number }

/** A fixed number of requests, each given up after `timeout` seconds (autocannon's default: 10). */
export interface RequestCount { requests: number; timeout?: number }

/**
 * Runs the autocannon CLI with `--json` and returns its result. `seconds`: how long to load, or a `RequestCount`.
 * `uniqueIds`: every `[<id>]` in the body becomes a fresh random id per request (autocannon's `-I`).
 */
export function load (url: string, req: BenchRequest, connections: number, seconds: number | RequestCount, uniqueIds = false): Promise<LoadResult> {
  if (req.dpop !== undefined) return loadWithProofs(url, req, connections, seconds)
  const length = typeof seconds === 'number'
    ? ['-d', String(seconds)]
    : ['-a', String(seconds.requests), ...(seconds.timeout === undefined ? [] : ['-t', String(seconds.timeout)])]
  const args = [AUTOCANNON_CLI, '--json', '-c', String(connections), ...length, '-m', req.method ?? 'GET', ...(uniqueIds ? ['-I'] : [])]
  for (const [k, v] of Object.entries(req.headers ?? {})) args.push('-H', `${k}=${v}`)
  if (req.body !== undefined) args.push('-b', req.body)
  args.push(url)
  return jsonOf(args)
}

/** `load` of a DPoP request: autocannon's API in a child process, a proof per request (bench/dpop-load.ts). */
function loadWithProofs (url: string, req: BenchRequest, connections: number, seconds: number | RequestCount): Promise<LoadResult> {
  const length = typeof seconds === 'number' ? { seconds } : { requests: seconds.requests, timeout: seconds.timeout }
  const spec = JSON.stringify({ url, connections, ...length, method: req.method ?? 'GET', headers: req.headers ?? {}, dpop: req.dpop })
  return jsonOf([...(FROM_SOURCE ? process.execArgv : []), DPOP_LOAD, spec])
}

/** Runs node with `args` and parses what it prints as autocannon's JSON result. */
function jsonOf (args: string[]): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'ignore'] })
    let out = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => { out += d })
    child.on('error', reject)
    child.on('close', (code) => {
      try { resolve(JSON.parse(out) as LoadResult) } catch { reject(new Error(`autocannon exited ${code} without a JSON result`)) }
    })
  })
}

export interface BenchRequest {
  path: string
  method?: 'GET' | 'POST'
  headers?: Record<string, string>
  body?: string
  /** A DPoP request (bench/dpop.ts): a fresh `DPoP` proof in every request, signed with this key (bench/dpop-load.ts). */
  dpop?: DPoPLoad
}

export interface BenchOptions {
  /** Seconds of load per case. Default from BENCH_SECONDS or 5. */
  seconds?: number
  /** Concurrent connections. Default 50. */
  connections?: number
  /** Status every response must have; a case with other statuses fails loudly. Default 200. */
  expectStatus?: number
}

/** Builds the app, checks one request answers `expectStatus`, loads it, returns requests per second. */
export async function measure (label: string, build: () => Promise<FastifyInstance>, req: BenchRequest, opts: BenchOptions = {}): Promise<number> {
  return (await measureDetailed(label, build, req, opts)).rps
}

/** One measurement: requests per second, and the server's CPU time per request (this process, user + system). */
export interface Measurement { rps: number; cpuUs: number }

/**
 * As `measure`, also returning the server's CPU time per request: on a busy machine throughput follows what
 * else runs, while CPU time per request stays close to what the server's code costs.
 */
export async function measureDetailed (label: string, build: () => Promise<FastifyInstance>, req: BenchRequest, opts: BenchOptions = {}): Promise<Measurement> {
  const app = await build()
  try {
    await app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = app.server.address() as { port: number }
    const url = `http://127.0.0.1:${port}`
    const expect = opts.expectStatus ?? 200
    const probe = await fetch(url + req.path, { method: req.method ?? 'GET', headers: req.headers ?? {}, body: req.body ?? null })
    await probe.arrayBuffer()
    if (probe.status !== expect) throw new Error(`${label}: probe answered ${probe.status}, expected ${expect}`)
    const cpu = process.cpuUsage()
    const result = await load(url + req.path, req, opts.connections ?? 50, opts.seconds ?? Number(process.env.BENCH_SECONDS ?? 5))
    const used = process.cpuUsage(cpu)
    const bad = result.non2xx + result.errors + result.timeouts
    if (expect < 300 && bad > 0) throw new Error(`${label}: ${bad} failed responses under load`)
    return { rps: result.requests.average, cpuUs: (used.user + used.system) / Math.max(1, result.requests.total) }
  } finally {
    await app.close()
  }
}

export interface BenchRow { label: string; rps: number; target?: number; cpuUs?: number }

/**
 * Prints req/s and the ratio of each row to the baseline, marking rows below their target; with CPU figures, also
 * the server's CPU µs per request and the baseline's CPU over the row's (the ratio a CPU-bound server would reach).
 */
export function printTable (title: string, baseline: BenchRow, rows: BenchRow[]): void {
  const cpu = baseline.cpuUs !== undefined
  console.log(`\n## ${title}`)
  console.log(`${'case'.padEnd(48)} ${'req/s'.padStart(10)} ${'ratio'.padStart(7)}${cpu ? ` ${'CPU µs/req'.padStart(11)} ${'ratio'.padStart(7)}` : ''}  target`)
  for (const r of [baseline, ...rows]) {
    const ratio = r.rps / baseline.rps
    const target = r.target === undefined ? '' : `>= ${r.target.toFixed(2)}x ${ratio >= r.target ? 'ok' : 'BELOW'}`
    const cpuCols = cpu && r.cpuUs !== undefined ? ` ${r.cpuUs.toFixed(1).padStart(11)} ${(baseline.cpuUs! / r.cpuUs).toFixed(2).padStart(6)}x` : ''
    console.log(`${r.label.padEnd(48)} ${Math.round(r.rps).toString().padStart(10)} ${ratio.toFixed(2).padStart(6)}x${cpuCols}  ${target}`)
  }
}

export interface BenchCase {
  label: string
  build: () => Promise<FastifyInstance>
  req: BenchRequest
  opts?: BenchOptions
}

export interface CaseResult {
  label: string
  /** Median req/s. */
  median: number
  /** Median server CPU µs per request. */
  cpuUs: number
  runs: Measurement[]
}

/**
 * Measures every case `rounds` times (default from BENCH_ROUNDS or 3), in alternation (1, 2, …, n, 1, 2, …), and
 * returns the median req/s of each, in the order given.
 */
export async function alternate (cases: BenchCase[], rounds = Number(process.env.BENCH_ROUNDS ?? 3)): Promise<CaseResult[]> {
  const runs = cases.map(() => [] as Measurement[])
  for (let round = 0; round < rounds; round++) {
    for (const [i, c] of cases.entries()) runs[i]!.push(await measureDetailed(c.label, c.build, c.req, c.opts))
  }
  return cases.map((c, i) => ({
    label: c.label,
    median: median(runs[i]!.map((m) => m.rps)),
    cpuUs: median(runs[i]!.map((m) => m.cpuUs)),
    runs: runs[i]!
  }))
}

export function median (xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

/** A reply for calling a hook outside Fastify: takes what the hook may do to one (cookies, headers) and drops it. */
export const IDLE_REPLY = {
  setCookie () { return this },
  // The package writes its own Set-Cookie lines: a header is read, set and removed (and forgotten here).
  getHeader () { return undefined },
  removeHeader () { return this },
  header () { return this },
  code () { return this },
  send () { return this }
} as unknown as FastifyReply
