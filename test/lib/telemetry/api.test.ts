/**
 * When telemetry turns on: never without an SDK (nothing wrapped, no instruments), tracing alone with a tracer
 * provider only, metrics once a meter provider is registered before a later registration. Each step in this one
 * process, in order, as a host's start-up would go.
 */
import t from 'tap'
import { metrics, trace } from '@opentelemetry/api'
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base'
import { MeterProvider } from '@opentelemetry/sdk-metrics'
import { MemoryStateStore } from '../../../stores/state/memory.js'
import { enableTelemetry, instruments, loginStep, resetTelemetry, startMetrics, telemetry, tracedStateStore } from '../../../lib/telemetry/index.js'

t.teardown(() => { resetTelemetry(); trace.disable(); metrics.disable() })
const store = new MemoryStateStore()
t.teardown(() => store.close())

t.test('no SDK: off, the store as it is, no instruments, a login step just runs', async (t) => {
  t.equal(enableTelemetry(), undefined)
  startMetrics()
  t.equal(telemetry.state, undefined)
  t.equal(instruments.current, undefined)
  t.equal(tracedStateStore(store), store, 'not wrapped')
  t.equal(await loginStep('local', 'start', { statusCode: 200 }, async () => 'answered'), 'answered')
})

t.test('a tracer provider only: tracing on, no meter, no instruments', async (t) => {
  trace.setGlobalTracerProvider(new BasicTracerProvider())
  const state = enableTelemetry()
  t.ok(state?.tracer, 'a tracer')
  t.equal(state?.meter, undefined, 'no meter')
  startMetrics()
  t.equal(instruments.current, undefined, 'nothing to count with')
  const traced = tracedStateStore(store)
  t.not(traced, store, 'the store is wrapped')
  t.equal(tracedStateStore(store), traced, 'one wrapper per store')
  t.ok(traced instanceof MemoryStateStore, 'instanceof still answers')
  t.ok(await traced.setIfAbsent('k', 'v', 1000))
  t.equal(await traced.take('k'), 'v', 'calls reach the store')
})

t.test('a meter provider registered later: the next registration turns metrics on, once', async (t) => {
  metrics.setGlobalMeterProvider(new MeterProvider())
  const state = enableTelemetry()
  t.ok(state?.meter, 'a meter now')
  startMetrics()
  const first = instruments.current
  t.ok(first?.logins, 'instruments created')
  enableTelemetry()
  startMetrics()
  t.equal(instruments.current, first, 'not created twice')
})

t.test('an API that is installed but does not load: telemetry stays off, the registration goes on', async (t) => {
  const mocked = await t.mockImport<typeof import('../../../lib/telemetry/api.js')>('../../../lib/telemetry/api.js', {
    '../../../lib/optional-driver.js': {
      hasDriver: () => true,
      requireDriver: () => { throw new Error('a broken install') }
    }
  })
  t.equal(mocked.enableTelemetry(), undefined)
  t.equal(mocked.telemetry.state, undefined)
})
