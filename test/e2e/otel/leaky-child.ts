/**
 * Child of otel-secret-check.test.ts: with the test SDK (test/helpers/otel-sdk.ts) registered, ends one span or
 * records one metric label holding a test secret (chosen by argv[2]), or a clean one, then ends normally. With
 * the suite's secret check loaded, a leak must make the process exit non-zero whatever else happens.
 */
import { enableTelemetry, inSpan, startMetrics } from '../../../lib/telemetry/index.js'
import { countEvent } from '../../../lib/telemetry/metrics.js'
import type { AuditEvent } from '../../../lib/audit/events.js'
import { startSdk } from '../../helpers/otel-sdk.js'

const sdk = startSdk()
enableTelemetry()
startMetrics()
const kind = process.argv[2]!
process.on('uncaughtException', () => {})
process.on('unhandledRejection', () => {})
if (kind === 'span') await inSpan('gatehouse.http', { 'url.full': 'http://127.0.0.1/?q=alice-secret' }, async () => {})
if (kind === 'label') countEvent({ type: 'rate_limited', reason: 'alice-secret' } as unknown as AuditEvent)
if (kind === 'clean') {
  await inSpan('gatehouse.http', { 'http.request.method': 'GET', 'http.response.status_code': 200 }, async () => {})
  countEvent({ type: 'rate_limited', reason: 'login' } as unknown as AuditEvent)
}
await sdk.shutdown().catch(() => {})
process.stdout.write('child done\n')
