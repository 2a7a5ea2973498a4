/**
 * The OpenTelemetry API, when the host has it: `@opentelemetry/api` is an optional peer, loaded at the root
 * plugin's registration (never at module load) through lib/optional-driver.ts. Telemetry is on for the process
 * when the API is installed and the host registered an SDK's tracer or meter provider before the plugin: then
 * spans go to its tracer and the audit events feed its meter. Without the API, or without an SDK, every span
 * helper is a plain call and nothing subscribes to anything (the session hot path never reaches this module).
 */
import type * as OtelApi from '@opentelemetry/api'
import { hasDriver, requireDriver } from '../optional-driver.js'

/** The name the package's tracer and meter carry (the instrumentation scope). */
export const SCOPE_NAME = 'fastify-gatehouse'

/** What the package holds of the API once telemetry is on. */
export interface TelemetryState {
  readonly api: typeof OtelApi
  /** The package's tracer; undefined when no tracer provider was registered. */
  readonly tracer: OtelApi.Tracer | undefined
  /** The package's meter; undefined when no meter provider was registered. */
  readonly meter: OtelApi.Meter | undefined
}

/** The process's telemetry: set by `enableTelemetry`, read by every span and metric helper. */
export const telemetry: { state: TelemetryState | undefined } = { state: undefined }

/**
 * Called at each root plugin's registration: loads the API when it is installed and a provider is registered.
 * A later registration finds what an earlier one set (the API's providers are process-wide too); one that finds
 * providers registered since then turns telemetry on. Returns the state, or undefined when telemetry is off.
 */
export function enableTelemetry (): TelemetryState | undefined {
  const known = telemetry.state
  if (known?.tracer !== undefined && known.meter !== undefined) return known
  if (!hasDriver('@opentelemetry/api')) return undefined
  let api: typeof OtelApi
  try {
    api = requireDriver<typeof OtelApi>('@opentelemetry/api', { option: 'telemetry', feature: 'OpenTelemetry traces and metrics' })
  } catch {
    // Installed but not loadable: no option asked for telemetry, so the plugin registers without it.
    return undefined
  }
  const state = { api, tracer: registeredTracer(api), meter: registeredMeter(api) }
  if (state.tracer === undefined && state.meter === undefined) return undefined
  telemetry.state = state
  return state
}

/** The tracer of the registered tracer provider, or undefined when only the API's no-op one is there. */
function registeredTracer (api: typeof OtelApi): OtelApi.Tracer | undefined {
  const provider = api.trace.getTracerProvider()
  // The global provider is a proxy; it has a delegate only once an SDK registered one.
  if (provider instanceof api.ProxyTracerProvider && provider.getDelegateTracer(SCOPE_NAME) === undefined) return undefined
  return provider.getTracer(SCOPE_NAME)
}

/** The meter of the registered meter provider, or undefined when only the API's no-op one is there. */
function registeredMeter (api: typeof OtelApi): OtelApi.Meter | undefined {
  const meter = api.metrics.getMeter(SCOPE_NAME)
  // Without an SDK the API answers a meter of its no-op class (whether or not it hands out one shared instance).
  const NoopMeter = api.createNoopMeter().constructor as new () => OtelApi.Meter
  return meter instanceof NoopMeter ? undefined : meter
}

/** Forgets the state (tests that register providers one after another). */
export function resetTelemetry (): void {
  telemetry.state = undefined
}
