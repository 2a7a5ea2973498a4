import t from 'tap'
import Fastify from 'fastify'
import { injectApp } from '../../helpers/app.js'
import { Benchmarks, benchmarksPlugin } from '../../../plugins/toolkit/benchmarks.js'

t.test('benchmarks over HTTP: report keys, microseconds, sliding windows', async (t) => {
  let now = Date.UTC(2026, 0, 1, 12, 0, 0)
  const bench = new Benchmarks(() => now)
  const { app, base, fetch } = await injectApp(async (app) => {
    await app.register(benchmarksPlugin, { benchmarks: bench, path: '/bench' })
    app.get('/fast', async () => 'fast')
    // 30 ms for a bound of 25: a timer may fire up to a millisecond early by the high-resolution clock (libuv
    // counts from the loop's cached time), which once measured 24,953 µs for a 25 ms timer.
    app.get('/slow', async () => { await new Promise((resolve) => setTimeout(resolve, 30)); return 'slow' })
  })
  t.teardown(() => app.close())
  t.equal(app.benchmarks, bench, 'decorated')

  for (let i = 0; i < 3; i++) await (await fetch(`${base}/fast`)).text()
  await (await fetch(`${base}/slow`)).text()
  const rep = await fetch(`${base}/bench`)
  t.equal(rep.status, 200)
  const report = await rep.json() as Record<string, Record<string, number>>
  t.same(Object.keys(report), ['1min', '5min', '15min'])
  const m1 = report['1min']!
  t.equal(m1.requests, 4, 'each request counted once (the report itself after it is sent)')
  t.ok(m1.max_resp_time >= 25_000, `max in µs (${m1.max_resp_time})`)
  t.ok(m1.min_resp_time > 0 && m1.min_resp_time < m1.max_resp_time, 'min in µs')
  t.ok(m1.average_resp_time >= m1.min_resp_time && m1.average_resp_time <= m1.max_resp_time, 'average between')
  t.equal(m1.requests_sec, 4, 'process lived one second of the window')
  t.same(report['15min'], m1)

  now += 2 * 60_000
  await (await fetch(`${base}/fast`)).text()
  t.equal(bench.stats(60_000).requests, 1, '1 min window only sees the latest second')
  t.equal(bench.stats(300_000).requests, 6, '5 min window sees everything (the report request included)')
  t.equal(bench.stats(1_000).requests, 1, '1 s window')
})

t.test('Benchmarks ring: window bounds, wrap-around, empty stats', async (t) => {
  let now = 1_000_000_000
  const b = new Benchmarks(() => now)
  t.same(b.stats(60_000), { requests: 0, requests_sec: 0, average_resp_time: 0, min_resp_time: 0, max_resp_time: 0 })
  for (const bad of [0, 999, 900_001, NaN, Infinity, -1, '60000']) {
    t.throws(() => b.stats(bad as number), { code: 'GATEHOUSE_OPTION', option: 'Benchmarks.stats.windowMs' }, `window ${bad}`)
  }
  t.doesNotThrow(() => b.stats(900_000))

  b.record(100); b.record(300)
  now += 10_000
  b.record(200)
  t.same(b.stats(5_000), { requests: 1, requests_sec: 0.2, average_resp_time: 200, min_resp_time: 200, max_resp_time: 200 })
  t.same(b.stats(15_000), { requests: 3, requests_sec: 0.27, average_resp_time: 200, min_resp_time: 100, max_resp_time: 300 })

  now += 900_000 // a whole lap: the bucket of the first second is reused and must start empty
  b.record(50)
  const s = b.stats(900_000)
  t.equal(s.requests, 1, 'old lap forgotten')
  t.equal(s.max_resp_time, 50)
  t.equal(s.requests_sec, Math.round(100 / 900) / 100)
})

t.test('benchmarks refuses bad options', async (t) => {
  for (const [opts, option] of [[{ benchmarks: {} }, 'benchmarks.benchmarks'], [{ path: 'bench' }, 'benchmarks.path']] as const) {
    const bad = Fastify()
    await t.rejects(async () => { await bad.register(benchmarksPlugin, opts as never).ready() }, { code: 'GATEHOUSE_OPTION', option })
    await bad.close()
  }
})
