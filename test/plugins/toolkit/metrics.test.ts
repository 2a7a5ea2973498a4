import t from 'tap'
import { eventually } from '../../helpers/eventually.js'
import Fastify from 'fastify'
import { injectApp } from '../../helpers/app.js'
import { metricsPlugin, publish, defaultVars, VarRegistry } from '../../../plugins/toolkit/metrics.js'

t.test('metrics: expvar-style JSON with published variables', async (t) => {
  const registry = new VarRegistry()
  let hits = 0
  registry.publish('hits', () => ++hits)
  registry.publish('config', async () => ({ mode: 'test' }))
  registry.publish('broken', () => { throw new Error('cannot read') })
  publish('gatehouse_test_global', () => 'global')
  t.teardown(() => { defaultVars.unpublish('gatehouse_test_global') })

  const { app, base, fetch } = await injectApp(async (app) => {
    await app.register(metricsPlugin, { registry })
    await app.register(metricsPlugin, { path: '/global-metrics' })
    await app.register(metricsPlugin, { path: '/private', allow: ['10.0.0.0/8'], trustedProxies: [] })
  })
  t.teardown(() => app.close())

  const r = await fetch(`${base}/metrics`)
  t.equal(r.status, 200)
  t.equal(r.headers.get('content-type'), 'application/json; charset=utf-8')
  t.equal(r.headers.get('cache-control'), 'no-store')
  const vars = await r.json() as Record<string, any>
  t.same(vars.cmdline, process.argv)
  for (const k of ['rss', 'heap_total', 'heap_used', 'external', 'heap_size_limit']) t.type(vars.memstats[k], 'number', `memstats.${k}`)
  t.ok(vars.eventloop === null || typeof vars.eventloop.p99_ms === 'number', 'event-loop delay figures')
  t.equal(vars.hits, 1)
  t.same(vars.config, { mode: 'test' })
  t.same(vars.broken, { error: 'cannot read' }, 'a failing variable does not fail the answer')
  t.notOk('gatehouse_test_global' in vars, 'own registry only')
  t.equal(((await (await fetch(`${base}/metrics`)).json()) as Record<string, number>).hits, 2, 'computed per request')

  const g = await (await fetch(`${base}/global-metrics`)).json() as Record<string, unknown>
  t.equal(g.gatehouse_test_global, 'global', 'publish() feeds the process-wide registry')

  const p = await fetch(`${base}/private`, { headers: { 'x-forwarded-for': '10.0.0.1' } })
  t.equal(p.status, 403, 'allow-list (headers not trusted here)')
  t.same(await p.json(), { error: 'forbidden', details: 'source address is not allowed', code: 'GATEHOUSE_FORBIDDEN' })
})

t.test('event-loop delay is measured', async (t) => {
  const { app, base, fetch } = await injectApp(async (app) => { await app.register(metricsPlugin, { registry: new VarRegistry() }) })
  t.teardown(() => app.close())
  // The histogram samples every 20 ms and announces nothing: polled until it has a sample.
  const loop = await eventually(async () => ((await (await fetch(`${base}/metrics`)).json()) as { eventloop: Record<string, number> | null }).eventloop, (l) => l !== null, 10)
  t.ok(loop !== null && loop.max_ms >= loop.min_ms && loop.p99_ms >= loop.p50_ms, JSON.stringify(loop))
})

t.test('publish rules and bad options', async (t) => {
  const reg = new VarRegistry()
  reg.publish('a', () => 1)
  t.throws(() => reg.publish('a', () => 2), { code: 'GATEHOUSE_OPTION', option: 'publish.name', message: /already published/ })
  for (const name of ['cmdline', 'memstats', 'eventloop', '', 5]) {
    t.throws(() => reg.publish(name as string, () => 1), { code: 'GATEHOUSE_OPTION', option: 'publish.name' }, `name ${String(name)}`)
  }
  t.throws(() => reg.publish('b', 5 as never), { code: 'GATEHOUSE_OPTION', option: 'publish.fn' })
  t.ok(reg.unpublish('a'))
  for (const [opts, option] of [
    [{ path: 'x' }, 'metrics.path'], [{ registry: {} }, 'metrics.registry'], [{ allow: ['bad entry'] }, 'metrics.allow'],
    [{ allow: [] }, 'metrics.allow'], [{ allow: ['127.0.0.1'], trustedProxies: ['nope'] }, 'metrics.trustedProxies']
  ] as const) {
    const bad = Fastify()
    await t.rejects(async () => { await bad.register(metricsPlugin, opts as never).ready() }, { code: 'GATEHOUSE_OPTION', option }, JSON.stringify(opts))
    await bad.close()
  }
})
