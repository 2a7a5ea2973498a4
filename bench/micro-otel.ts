/**
 * The second half of `npm run bench:micro`: the session hot path with an OpenTelemetry SDK registered (a tracer
 * provider whose spans are counted and dropped, a meter provider) and a subscriber on `gatehouse:audit`, as a
 * traced host runs it. The apps are built after the SDK is registered (telemetry is decided at registration),
 * so the first half, measured before, ran with neither. Prints each case's median and its cost over the first
 * half's median of the same case.
 */
import { subscribe } from 'node:diagnostics_channel'
import FakeTimers from '@sinonjs/fake-timers'
import { context, metrics, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base'
import { MeterProvider, PeriodicExportingMetricReader, InMemoryMetricExporter, AggregationTemporality } from '@opentelemetry/sdk-metrics'
import { bench, run } from 'mitata'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { UserData } from '../lib/user.js'

/** Counts the spans it is given and keeps none (memory stays flat over a million calls). */
class DroppingExporter implements SpanExporter {
  count = 0
  export (spans: ReadableSpan[], done: (result: { code: number }) => void): void { this.count += spans.length; done({ code: 0 }) }
  async shutdown (): Promise<void> {}
}

export interface OtelBench {
  /** Builds an app the way the first half did. */
  app(): Promise<FastifyInstance>
  /** A request carrying a session. */
  request(token: string, jti: string): FastifyRequest
  reply: FastifyReply
  user: UserData
  /** The first half's medians (µs) of the same cases. */
  baseline: { cached: number, refresh: number }
}

export async function benchWithSdk (b: OtelBench): Promise<void> {
  const spans = new DroppingExporter()
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(spans)] })
  const meterProvider = new MeterProvider({ readers: [new PeriodicExportingMetricReader({ exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE), exportIntervalMillis: 3_600_000 })] })
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  trace.setGlobalTracerProvider(tracerProvider)
  metrics.setGlobalMeterProvider(meterProvider)
  let events = 0
  subscribe('gatehouse:audit', () => { events++ })

  const cachedApp = await b.app()
  const refreshApp = await b.app()
  const session = await cachedApp.auth.tokens.create({ user: b.user })
  const cachedReq = b.request(session.token, session.claims.jti)
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() - 20 * 60_000 })
  const old = await refreshApp.auth.tokens.create({ user: b.user })
  clock.uninstall()
  const refreshReq = b.request(old.token, old.claims.jti)
  const auth1 = cachedApp.auth.authenticate
  const auth2 = refreshApp.auth.authenticate

  const NAMES = { cached: 'SDK + audit subscriber: cached cookie session', refresh: 'SDK + audit subscriber: refresh every call' }
  bench(NAMES.cached, async () => { await auth1.call(undefined as never, cachedReq, b.reply) })
  bench(NAMES.refresh, async () => { await auth2.call(undefined as never, refreshReq, b.reply) })
  const { benchmarks } = await run({ colors: false })
  const p50 = (name: string): number => (benchmarks.find((x) => x.alias === name)?.runs[0]?.stats?.p50 ?? NaN) / 1000
  const cached = p50(NAMES.cached)
  const refresh = p50(NAMES.refresh)
  await tracerProvider.forceFlush()
  console.log('\n## With an OpenTelemetry SDK and a gatehouse:audit subscriber, medians')
  console.log(`cached session          ${cached.toFixed(2)} µs   cost per request ${(cached - b.baseline.cached).toFixed(2)} µs`)
  console.log(`refresh every call      ${refresh.toFixed(2)} µs   cost per request ${(refresh - b.baseline.refresh).toFixed(2)} µs`)
  console.log(`(${events} audit events and ${spans.count} spans during the runs)`)
  await cachedApp.close()
  await refreshApp.close()
  await tracerProvider.shutdown()
  await meterProvider.shutdown()
}
