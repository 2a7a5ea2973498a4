/**
 * benchmarks: response-time statistics over a sliding window of up to 15 minutes, kept in a ring of 900
 * one-second buckets. Recording a request is O(1) (index the bucket of the current second, reset it if it
 * belongs to an older lap of the ring, add); a query walks at most 900 buckets.
 */
import fp from 'fastify-plugin'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { OptionsError } from '../../lib/errors.js'

/** Statistics of one window; times in microseconds. */
export interface BenchmarkStats {
  requests: number
  requests_sec: number
  average_resp_time: number
  min_resp_time: number
  max_resp_time: number
}

/** The report served by the plugin's route. */
export interface BenchmarkReport { '1min': BenchmarkStats; '5min': BenchmarkStats; '15min': BenchmarkStats }

const BUCKETS = 900
export const MIN_WINDOW_MS = 1_000
export const MAX_WINDOW_MS = BUCKETS * 1_000

export class Benchmarks {
  private readonly second = new Float64Array(BUCKETS).fill(-1)
  private readonly count = new Float64Array(BUCKETS)
  private readonly sum = new Float64Array(BUCKETS)
  private readonly min = new Float64Array(BUCKETS)
  private readonly max = new Float64Array(BUCKETS)
  private readonly startedSec: number

  /** `now` returns epoch milliseconds; replaceable so that tests and replays control time. */
  constructor (private readonly now: () => number = Date.now) {
    this.startedSec = Math.floor(now() / 1000)
  }

  /** Adds one request that took `micros` microseconds, at the current time. */
  record (micros: number): void {
    const sec = Math.floor(this.now() / 1000)
    const i = sec % BUCKETS
    if (this.second[i] !== sec) {
      this.second[i] = sec
      this.count[i] = 0
      this.sum[i] = 0
      this.min[i] = Infinity
      this.max[i] = 0
    }
    this.count[i]! += 1
    this.sum[i]! += micros
    if (micros < this.min[i]!) this.min[i] = micros
    if (micros > this.max[i]!) this.max[i] = micros
  }

  /**
   * Statistics of the last `windowMs` (1s..15m, whole seconds, the current second included). `requests_sec`
   * divides by the part of the window the process has lived, so a young process is not reported as idle.
   * A window out of range throws an `OptionsError` naming `Benchmarks.stats.windowMs`.
   */
  stats (windowMs: number): BenchmarkStats {
    if (typeof windowMs !== 'number' || !Number.isFinite(windowMs) || windowMs < MIN_WINDOW_MS || windowMs > MAX_WINDOW_MS) {
      throw new OptionsError('Benchmarks.stats.windowMs', `must be from ${MIN_WINDOW_MS} to ${MAX_WINDOW_MS} ms`)
    }
    const nowSec = Math.floor(this.now() / 1000)
    const span = Math.floor(windowMs / 1000)
    const from = nowSec - span + 1
    let requests = 0
    let sum = 0
    let min = Infinity
    let max = 0
    for (let i = 0; i < BUCKETS; i++) {
      const s = this.second[i]!
      if (s < from || s > nowSec) continue
      requests += this.count[i]!
      sum += this.sum[i]!
      if (this.min[i]! < min) min = this.min[i]!
      if (this.max[i]! > max) max = this.max[i]!
    }
    const lived = Math.max(1, Math.min(span, nowSec - this.startedSec + 1))
    return {
      requests,
      requests_sec: round2(requests / lived),
      average_resp_time: requests === 0 ? 0 : Math.round(sum / requests),
      min_resp_time: requests === 0 ? 0 : Math.round(min),
      max_resp_time: Math.round(max)
    }
  }

  /** The standard report: 1, 5 and 15 minutes. */
  report (): BenchmarkReport {
    return { '1min': this.stats(60_000), '5min': this.stats(300_000), '15min': this.stats(900_000) }
  }
}

export interface BenchmarksOptions {
  /** The collector to feed; default a new one, available as `fastify.benchmarks`. */
  benchmarks?: Benchmarks | undefined
  /** When set, GET on this path answers the report as JSON (e.g. `/bench`); default none. */
  path?: string | undefined
}

/**
 * fastify-plugin: timing is wanted for every route of the context it is registered in, and
 * `fastify.benchmarks` should be visible there. Time is Fastify's own `reply.elapsedTime` (from the start of
 * the request), read in `onResponse`, so nothing is stored per request.
 */
const benchmarksPluginImpl: FastifyPluginAsync<BenchmarksOptions> = async (fastify, opts) => {
  const bench = opts.benchmarks ?? new Benchmarks()
  if (!(bench instanceof Benchmarks)) throw new OptionsError('benchmarks.benchmarks', 'must be a Benchmarks instance')
  if (opts.path !== undefined && (typeof opts.path !== 'string' || !opts.path.startsWith('/'))) {
    throw new OptionsError('benchmarks.path', 'must be a path starting with "/"')
  }
  fastify.decorate('benchmarks', bench)
  fastify.addHook('onResponse', (_request: FastifyRequest, reply: FastifyReply, next: () => void) => {
    bench.record(reply.elapsedTime * 1000)
    next()
  })
  if (opts.path !== undefined) {
    fastify.get(opts.path, async (_request, reply) => {
      reply.header('cache-control', 'no-store')
      return bench.report()
    })
  }
}

export const benchmarksPlugin = fp(benchmarksPluginImpl, { name: 'gatehouse-benchmarks', fastify: '5.x' })

function round2 (n: number): number { return Math.round(n * 100) / 100 }
