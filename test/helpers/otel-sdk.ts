/**
 * A real OpenTelemetry SDK for the telemetry tests, registered globally before any app is built (as a host does):
 * a tracer provider with the in-memory span exporter, a meter provider read on demand, and the AsyncLocalStorage
 * context manager that carries the active span across awaits.
 */
import { context, metrics, trace, type Attributes } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics'

export interface Sdk {
  spans: InMemorySpanExporter
  tracerProvider: BasicTracerProvider
  /** Every data point of every metric collected now, by metric name. */
  collect(): Promise<Map<string, Array<{ attributes: Attributes, value: unknown }>>>
  shutdown(): Promise<void>
}

export function startSdk (): Sdk {
  const spans = new InMemorySpanExporter()
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] })
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
        for (const m of scope.metrics) out.set(m.descriptor.name, m.dataPoints.map((p) => ({ attributes: p.attributes, value: p.value })))
      }
      return out
    },
    async shutdown () {
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
