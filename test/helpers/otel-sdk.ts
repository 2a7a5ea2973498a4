/**
 * A real OpenTelemetry SDK for the telemetry tests, registered globally before any app is built (as a host does):
 * a tracer provider with the in-memory span exporter, a meter provider read on demand, and the AsyncLocalStorage
 * context manager that carries the active span across awaits.
 *
 * It also hooks the suite-wide secret check (secret-check.ts) into what the SDK sees: every span that ends and
 * every metric data point collected (at each `collect()` and at shutdown) goes through `assertNoSecret`. Only a
 * process with an SDK emits spans or metrics (without one the package starts none), so these are all the spans
 * and labels of the suite, and no other test process loads the SDK for it.
 */
import { context, metrics, trace, type Attributes } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base'
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics'

import Fastify, { type FastifyInstance } from 'fastify'
import { FastifyOtelInstrumentation } from '@fastify/otel'
import { otelRequestHook } from '../../lib/telemetry/index.js'
import { assertNoSecret } from './secret-check.js'

/**
 * Semantic-convention keys that the check's key rule (`/token|passw|secret|code/`) would take for a secret's
 * name: their values are still checked.
 */
const CONVENTION_KEYS = new Set(['http.response.status_code'])

/** The secret check on one span's attributes or one data point's labels. */
export function checkAttributes (where: string, attributes: Attributes): void {
  const named = Object.fromEntries(Object.entries(attributes).filter(([k]) => !CONVENTION_KEYS.has(k)))
  assertNoSecret(where, named)
  assertNoSecret(where, Object.values(attributes))
}

/** Checks every span as it ends. */
const checkingProcessor: SpanProcessor = {
  onStart () {},
  onEnd (span) { checkAttributes(`span ${span.name}`, span.attributes) },
  async forceFlush () {},
  async shutdown () {}
}

export interface Sdk {
  spans: InMemorySpanExporter
  tracerProvider: BasicTracerProvider
  /** Every data point of every metric collected now, by metric name. */
  collect(): Promise<Map<string, Array<{ attributes: Attributes, value: unknown }>>>
  shutdown(): Promise<void>
}

export function startSdk (): Sdk {
  const spans = new InMemorySpanExporter()
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [checkingProcessor, new SimpleSpanProcessor(spans)] })
  const reader = new PeriodicExportingMetricReader({ exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE), exportIntervalMillis: 3_600_000 })
  const meterProvider = new MeterProvider({ readers: [reader] })
  const contextManager = new AsyncLocalStorageContextManager().enable()
  context.setGlobalContextManager(contextManager)
  trace.setGlobalTracerProvider(tracerProvider)
  metrics.setGlobalMeterProvider(meterProvider)
  return {
    spans,
    tracerProvider,
    async collect () {
      const { resourceMetrics } = await reader.collect()
      const out = new Map<string, Array<{ attributes: Attributes, value: unknown }>>()
      for (const scope of resourceMetrics.scopeMetrics) {
        for (const m of scope.metrics) {
          for (const p of m.dataPoints) checkAttributes(`metric ${m.descriptor.name}`, p.attributes)
          out.set(m.descriptor.name, m.dataPoints.map((p) => ({ attributes: p.attributes, value: p.value })))
        }
      }
      return out
    },
    async shutdown () {
      await this.collect()
      await tracerProvider.shutdown()
      await meterProvider.shutdown()
      contextManager.disable()
      trace.disable()
      metrics.disable()
      context.disable()
    }
  }
}

/** The finished spans named `name`. */
export function spansNamed (spans: InMemorySpanExporter, name: string): ReadableSpan[] {
  return spans.getFinishedSpans().filter((s) => s.name === name)
}

/** The parent span id of a span (SDK 2.x: `parentSpanContext`). */
export function parentOf (span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId
}

/** Every attribute value of every finished span, and every label of every data point, as text. */
export function emittedTexts (spans: ReadableSpan[], points: Iterable<Array<{ attributes: Attributes }>>): string[] {
  const out: string[] = []
  for (const s of spans) for (const v of Object.values(s.attributes)) out.push(String(v))
  for (const list of points) for (const p of list) for (const v of Object.values(p.attributes)) out.push(String(v))
  return out
}

/** A Fastify app with @fastify/otel registered first (the package's request hook, the SDK's tracer provider). */
export async function otelFastify (sdk: Sdk): Promise<FastifyInstance> {
  const app = Fastify()
  const otel = new FastifyOtelInstrumentation({ requestHook: otelRequestHook })
  otel.setTracerProvider(sdk.tracerProvider)
  await app.register(otel.plugin())
  return app
}
