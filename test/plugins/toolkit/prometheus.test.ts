/**
 * The metrics plugin in the Prometheus text exposition format: the exact lines of a snapshot, negotiation by
 * `Accept` (JSON stays the default), the `format` option, a bad format refused at registration.
 */
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { metricsPlugin, VarRegistry } from '../../../plugins/toolkit/metrics.js'
import { PROMETHEUS_CONTENT_TYPE, prometheusText, wantsPrometheus } from '../../../plugins/toolkit/prometheus.js'

t.test('prometheusText: one gauge per number or boolean, key paths joined by _, names made valid', async (t) => {
  const text = prometheusText({
    cmdline: ['node', 'app.js'],
    memstats: { rss: 1024, heap_used: 512.5 },
    eventloop: null,
    'jobs.queued': 3,
    '9lives': 9,
    up: true,
    down: false,
    label: 'text',
    infinite: Infinity,
    nested: { deeper: { value: -2 } },
    memstats_rss: 7
  })
  t.equal(text, [
    '# TYPE memstats_rss gauge', 'memstats_rss 1024',
    '# TYPE memstats_heap_used gauge', 'memstats_heap_used 512.5',
    '# TYPE jobs_queued gauge', 'jobs_queued 3',
    '# TYPE _9lives gauge', '_9lives 9',
    '# TYPE up gauge', 'up 1',
    '# TYPE down gauge', 'down 0',
    '# TYPE nested_deeper_value gauge', 'nested_deeper_value -2',
    ''
  ].join('\n'), 'strings, arrays, null and Infinity have no gauge; a second memstats_rss is dropped')
  t.equal(prometheusText({ only: 'strings' }), '', 'nothing to expose: an empty answer')
})

t.test('wantsPrometheus: text/plain or OpenMetrics, never over JSON', async (t) => {
  t.ok(wantsPrometheus('text/plain'))
  t.ok(wantsPrometheus('application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1'))
  t.notOk(wantsPrometheus(undefined))
  t.notOk(wantsPrometheus('*/*'))
  t.notOk(wantsPrometheus('application/json, text/plain'))
})

async function app (opts: Record<string, unknown>): Promise<FastifyInstance> {
  const registry = new VarRegistry()
  registry.publish('logins', () => 42)
  registry.publish('queue', () => ({ depth: 3, busy: true, name: 'mail' }))
  const a = Fastify()
  await a.register(metricsPlugin, { registry, ...opts })
  t.teardown(() => a.close())
  return a
}

/** Every line is a TYPE comment or `<name> <number>`, and the published variables are there exactly. */
function checkText (t: Test, body: string): void {
  const lines = body.split('\n')
  t.equal(lines.pop(), '', 'ends in a newline')
  t.ok(lines.every((l) => /^# TYPE [a-zA-Z_:][a-zA-Z0-9_:]* gauge$/.test(l) || /^[a-zA-Z_:][a-zA-Z0-9_:]* -?[0-9.e+-]+$/.test(l)), 'every line valid')
  for (const line of ['# TYPE logins gauge', 'logins 42', '# TYPE queue_depth gauge', 'queue_depth 3', '# TYPE queue_busy gauge', 'queue_busy 1']) {
    t.ok(lines.includes(line), line)
  }
  t.ok(lines.some((l) => /^memstats_heap_used [0-9]+$/.test(l)), 'memstats exposed')
  t.notOk(body.includes('cmdline') || body.includes('mail'), 'no strings')
}

t.test('negotiated: Accept text/plain gets the text format, anything else the JSON', async (t) => {
  const a = await app({})
  const text = await a.inject({ url: '/metrics', headers: { accept: 'text/plain' } })
  t.equal(text.statusCode, 200)
  t.equal(text.headers['content-type'], PROMETHEUS_CONTENT_TYPE)
  t.equal(text.headers.vary, 'accept')
  t.equal(text.headers['cache-control'], 'no-store')
  checkText(t, text.body)
  const json = await a.inject({ url: '/metrics' })
  t.equal(json.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(json.json().logins, 42)
  t.same(json.json().queue, { depth: 3, busy: true, name: 'mail' })
})

t.test('format option: prometheus always, json always', async (t) => {
  const p = await app({ format: 'prometheus' })
  const text = await p.inject({ url: '/metrics', headers: { accept: 'application/json' } })
  t.equal(text.headers['content-type'], PROMETHEUS_CONTENT_TYPE)
  t.equal(text.headers.vary, undefined)
  checkText(t, text.body)
  const j = await app({ format: 'json' })
  t.equal((await j.inject({ url: '/metrics', headers: { accept: 'text/plain' } })).headers['content-type'], 'application/json; charset=utf-8')
})

t.test('a bad format is refused at registration, naming the option', async (t) => {
  const bad = Fastify()
  await t.rejects(async () => { await bad.register(metricsPlugin, { format: 'xml' as never }).ready() }, { code: 'GATEHOUSE_OPTION', option: 'metrics.format' })
  await bad.close()
})
