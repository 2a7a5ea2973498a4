/**
 * metrics: expvar-style variables as JSON at GET `/metrics`: `cmdline` (process argv), `memstats` (memory
 * and heap figures), `eventloop` (event-loop delay, ms) and every variable published with
 * `publish(name, fn)`; or the same numbers in the Prometheus text format (`Accept: text/plain`, or the
 * `format` option; see prometheus.ts). The same snapshot is the profiler's `/vars`.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks'
import { getHeapStatistics } from 'node:v8'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import { OptionsError } from '../../lib/errors.js'
import { onlyFromHookNamed } from './only-from.js'
import { PROMETHEUS_CONTENT_TYPE, prometheusText, wantsPrometheus } from './prometheus.js'

/** A published variable: its current value, computed when the variables are served. */
export type VarFunc = () => unknown

const RESERVED = new Set(['cmdline', 'memstats', 'eventloop'])

/**
 * A set of published variables. Names are unique, as in expvar; publishing a name twice, a reserved name
 * (`cmdline`, `memstats`, `eventloop`) or no function throws an `OptionsError` naming `publish.name` or
 * `publish.fn`.
 */
export class VarRegistry {
  private readonly vars = new Map<string, VarFunc>()

  publish (name: string, fn: VarFunc): void {
    if (typeof name !== 'string' || name === '') throw new OptionsError('publish.name', 'must be a non-empty string')
    if (RESERVED.has(name)) throw new OptionsError('publish.name', `${JSON.stringify(name)} is reserved`)
    if (typeof fn !== 'function') throw new OptionsError('publish.fn', `of variable ${JSON.stringify(name)} must be a function`)
    if (this.vars.has(name)) throw new OptionsError('publish.name', `${JSON.stringify(name)} is already published`)
    this.vars.set(name, fn)
  }

  unpublish (name: string): boolean { return this.vars.delete(name) }

  /** Current values; a variable whose function throws shows `{error}` instead of failing the answer. */
  async values (): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {}
    for (const [name, fn] of this.vars) {
      try { out[name] = await fn() } catch (err) { out[name] = { error: err instanceof Error ? err.message : String(err) } }
    }
    return out
  }
}

/** The process-wide registry (expvar's model). */
export const defaultVars = new VarRegistry()

/** Publishes a variable in the process-wide registry. */
export function publish (name: string, fn: VarFunc): void { defaultVars.publish(name, fn) }

// One event-loop delay histogram for the process, started by the first plugin and stopped by the last.
let loopDelay: IntervalHistogram | null = null
let loopUsers = 0

/** Starts (or shares) the event-loop delay monitor; returns its release function. */
export function acquireLoopMonitor (): () => void {
  if (loopUsers++ === 0) {
    loopDelay = monitorEventLoopDelay({ resolution: 20 })
    loopDelay.enable()
  }
  let released = false
  return () => {
    if (released) return
    released = true
    if (--loopUsers === 0 && loopDelay !== null) { loopDelay.disable(); loopDelay = null }
  }
}

function loopStats (): Record<string, number> | null {
  if (loopDelay === null || loopDelay.count === 0) return null
  const ms = (ns: number): number => Math.round(ns / 1e4) / 100
  return { min_ms: ms(loopDelay.min), max_ms: ms(loopDelay.max), mean_ms: ms(loopDelay.mean), p50_ms: ms(loopDelay.percentile(50)), p99_ms: ms(loopDelay.percentile(99)) }
}

/** The whole variable set as served. */
export async function expvarSnapshot (registry: VarRegistry = defaultVars): Promise<Record<string, unknown>> {
  const mem = process.memoryUsage()
  const heap = getHeapStatistics()
  return {
    cmdline: process.argv,
    memstats: {
      rss: mem.rss,
      heap_total: mem.heapTotal,
      heap_used: mem.heapUsed,
      external: mem.external,
      array_buffers: mem.arrayBuffers,
      heap_size_limit: heap.heap_size_limit,
      total_available_size: heap.total_available_size,
      uptime_sec: Math.round(process.uptime())
    },
    eventloop: loopStats(),
    ...(await registry.values())
  }
}

/**
 * How `/metrics` answers: `json` (the expvar JSON), `prometheus` (the text exposition format 0.0.4: one gauge
 * per number), or `negotiate`: Prometheus text when `Accept` names `text/plain` or OpenMetrics and not JSON,
 * else JSON.
 */
export type MetricsFormat = 'json' | 'prometheus' | 'negotiate'

const FORMATS: readonly MetricsFormat[] = ['json', 'prometheus', 'negotiate']

export interface MetricsOptions {
  /** The answer's format (see `MetricsFormat`). Default `negotiate`. */
  format?: MetricsFormat | undefined
  /** Path of the endpoint. Default `/metrics`. */
  path?: string | undefined
  /** Allow-list of client addresses (see onlyFrom); default: anyone. */
  allow?: string[] | undefined
  /** Proxies whose forwarding headers the allow-list believes (see onlyFrom). */
  trustedProxies?: string[] | undefined
  /** Registry to serve; default the process-wide one (`publish`). */
  registry?: VarRegistry | undefined
}

/**
 * Encapsulated (fastify-plugin with `encapsulate: true`): the allow-list hook guards only this plugin's
 * route, and the register `prefix` applies.
 */
const metricsPluginImpl: FastifyPluginAsync<MetricsOptions> = async (fastify, opts) => {
  const path = opts.path ?? '/metrics'
  if (typeof path !== 'string' || !path.startsWith('/')) throw new OptionsError('metrics.path', 'must be a path starting with "/"')
  const registry = opts.registry ?? defaultVars
  if (!(registry instanceof VarRegistry)) throw new OptionsError('metrics.registry', 'must be a VarRegistry')
  const format = opts.format ?? 'negotiate'
  if (!FORMATS.includes(format)) throw new OptionsError('metrics.format', `must be one of ${FORMATS.join(', ')}`)
  if (opts.allow !== undefined) guardWithAllowList(fastify, 'metrics', opts.allow, opts.trustedProxies)
  serveVars(fastify, path, registry, format)
}

/**
 * Adds the onlyFrom check to every route of this (encapsulated) context; a bad list throws an OptionsError
 * naming `<label>.allow` or `<label>.trustedProxies`.
 */
export function guardWithAllowList (fastify: FastifyInstance, label: string, allow: string[], trustedProxies: string[] | undefined): void {
  fastify.addHook('onRequest', onlyFromHookNamed(label, { allow, ...(trustedProxies === undefined ? {} : { trustedProxies }) }))
}

/**
 * GET `path` answers the variables (JSON, unless `format` says otherwise); the event-loop monitor runs while
 * this context is open.
 */
export function serveVars (fastify: FastifyInstance, path: string, registry: VarRegistry, format: MetricsFormat = 'json'): void {
  const release = acquireLoopMonitor()
  fastify.addHook('onClose', async () => { release() })
  fastify.get(path, async (request, reply) => {
    reply.header('cache-control', 'no-store')
    if (format === 'negotiate') reply.header('vary', 'accept')
    const vars = await expvarSnapshot(registry)
    if (format === 'prometheus' || (format === 'negotiate' && wantsPrometheus(request.headers.accept))) {
      return await reply.type(PROMETHEUS_CONTENT_TYPE).send(prometheusText(vars))
    }
    return await reply.type('application/json; charset=utf-8').send(vars)
  })
}

export const metricsPlugin = fp(metricsPluginImpl, { name: 'gatehouse-metrics', fastify: '5.x', encapsulate: true })
