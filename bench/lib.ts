/**
 * Shared benchmark harness: each case is a freshly built Fastify app on a loopback port in this process, loaded
 * by autocannon in a child process (so the server has a core of its own and its cost is not charged twice),
 * then closed. Every number of one run is comparable because cases run back to back.
 */
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import type { FastifyInstance } from 'fastify'

const AUTOCANNON_CLI = createRequire(import.meta.url).resolve('autocannon/autocannon.js')

interface LoadResult { requests: { average: number }; non2xx: number; errors: number; timeouts: number }

/** Runs the autocannon CLI with `--json` and returns its result. */
function load (url: string, req: BenchRequest, connections: number, seconds: number): Promise<LoadResult> {
  const args = [AUTOCANNON_CLI, '--json', '-c', String(connections), '-d', String(seconds), '-m', req.method ?? 'GET']
  for (const [k, v] of Object.entries(req.headers ?? {})) args.push('-H', `${k}=${v}`)
  if (req.body !== undefined) args.push('-b', req.body)
  args.push(url)
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
  const app = await build()
  try {
    await app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = app.server.address() as { port: number }
    const url = `http://127.0.0.1:${port}`
    const expect = opts.expectStatus ?? 200
    const probe = await fetch(url + req.path, { method: req.method ?? 'GET', headers: req.headers ?? {}, body: req.body ?? null })
    await probe.arrayBuffer()
    if (probe.status !== expect) throw new Error(`${label}: probe answered ${probe.status}, expected ${expect}`)
    const result = await load(url + req.path, req, opts.connections ?? 50, opts.seconds ?? Number(process.env.BENCH_SECONDS ?? 5))
    const bad = result.non2xx + result.errors + result.timeouts
    if (expect < 300 && bad > 0) throw new Error(`${label}: ${bad} failed responses under load`)
    return result.requests.average
  } finally {
    await app.close()
  }
}

export interface BenchRow { label: string; rps: number; target?: number }

/** Prints req/s and the ratio of each row to the baseline, marking rows below their target. */
export function printTable (title: string, baseline: BenchRow, rows: BenchRow[]): void {
  console.log(`\n## ${title}`)
  console.log(`${'case'.padEnd(48)} ${'req/s'.padStart(10)} ${'ratio'.padStart(7)}  target`)
  for (const r of [baseline, ...rows]) {
    const ratio = r.rps / baseline.rps
    const target = r.target === undefined ? '' : `>= ${r.target.toFixed(2)}x ${ratio >= r.target ? 'ok' : 'BELOW'}`
    console.log(`${r.label.padEnd(48)} ${Math.round(r.rps).toString().padStart(10)} ${ratio.toFixed(2).padStart(6)}x  ${target}`)
  }
}
