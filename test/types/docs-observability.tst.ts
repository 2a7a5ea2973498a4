/**
 * The example of docs/guide/observability.md, compiled (lines as written there; test/docs/readme-examples.test.ts
 * checks they stay the same).
 */
import Fastify from 'fastify'
import { FastifyOtelInstrumentation } from '@fastify/otel'
import { context, metrics, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, BatchSpanProcessor, ConsoleSpanExporter } from '@opentelemetry/sdk-trace-base'
import { ConsoleMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics'
import authPlugin, { otelRequestHook } from '../../index.js'
import type { CredChecker } from '../../index.js'

declare const secret: () => string
declare const url: string
declare const checker: CredChecker

const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(new ConsoleSpanExporter())] })
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
trace.setGlobalTracerProvider(tracerProvider)
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [new PeriodicExportingMetricReader({ exporter: new ConsoleMetricExporter() })] }))

const otel = new FastifyOtelInstrumentation({ requestHook: otelRequestHook })
otel.setTracerProvider(tracerProvider)
const app = Fastify()
await app.register(otel.plugin())

await app.register(authPlugin, { secret, url, providers: [{ kind: 'direct', name: 'local', checker }] })
