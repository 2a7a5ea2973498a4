/** OpenTelemetry traces and metrics of the package (an optional peer; see docs/guide/observability.md). */
export { enableTelemetry, resetTelemetry, telemetry, SCOPE_NAME } from './api.js'
export { inSpan, errorType, traceUrl } from './spans.js'
export { startMetrics, instruments } from './metrics.js'
export { tracedStateStore } from './state-store.js'
export { loginStep } from './login.js'
export { otelRequestHook, type AttributeSetter } from './request-hook.js'
