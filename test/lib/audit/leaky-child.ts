/**
 * Child of secret-check.test.ts: publishes one bad audit event (chosen by argv[2]) the way the package would, then
 * ends normally. Loaded with the suite's secret check, the process must exit non-zero anyway.
 */
import diagnostics from 'node:diagnostics_channel'
import { TEST_SECRETS } from '../../helpers/secrets.js'
import { assertNoSecret } from '../../helpers/secret-check.js'

const BAD: Record<string, Record<string, unknown>> = {
  password: { type: 'login.failed', reason: 'bad_credentials', detail: { tried: `pw ${TEST_SECRETS[0]!}` } },
  jwt: { type: 'session.refused', reason: 'invalid', note: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl' },
  key: { type: 'login.succeeded', reason: 'ok', accessToken: 'opaque' },
  clean: { type: 'logout', reason: 'session', userId: 'local_0123' }
}

const kind = process.argv[2]!
if (kind === 'assert') {
  // How other telemetry (span attributes, metric labels) goes through the same check.
  try { assertNoSecret('span oauth2.token', { 'url.full': 'https://idp/cb?id_token=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln' }) } catch {}
} else {
  diagnostics.channel('gatehouse:audit').publish(BAD[kind])
}
// A test runner swallowing the thrown error still exits 1: the exit code is the check's last word.
process.on('uncaughtException', () => {})
setImmediate(() => { process.stdout.write('child done\n') })
