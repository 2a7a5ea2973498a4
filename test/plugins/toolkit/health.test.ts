import t from 'tap'
import Fastify from 'fastify'
import { injectApp } from '../../helpers/app.js'
import { healthPlugin } from '../../../plugins/toolkit/health.js'

t.test('health: all pass → 200 JSON array', async (t) => {
  const { app, base, fetch } = await injectApp(async (app) => {
    await app.register(healthPlugin, {
      checks: [
        () => ({ name: 'db' }),
        async () => ({ name: 'cache', error: null }),
        { name: 'disk', check: async () => 'fine' }
      ]
    })
  })
  t.teardown(() => app.close())
  const r = await fetch(`${base}/health`)
  t.equal(r.status, 200)
  t.equal(r.headers.get('content-type'), 'application/json; charset=utf-8')
  t.same(await r.json(), [{ name: 'db', status: 'ok' }, { name: 'cache', status: 'ok' }, { name: 'disk', status: 'ok' }])
})

t.test('health: failing, throwing and hanging checks → 503 within the time limit', async (t) => {
  let hangs = 0
  let aborted = 0
  const { app, base, fetch } = await injectApp(async (app) => {
    await app.register(healthPlugin, {
      path: '/hc',
      timeout: 150,
      checks: [
        () => ({ name: 'ok-one' }),
        () => ({ name: 'db', error: new Error('connection refused') }),
        () => ({ name: 'queue', error: 'backlog too long' }),
        function thrower () { throw new Error('boom') },
        async function rejecter () { throw new TypeError('async boom') },
        function hanger () { hangs++; return new Promise(() => {}) },
        { name: 'named-hang', check: (signal: AbortSignal) => new Promise((_resolve, reject) => { signal.addEventListener('abort', () => { aborted++; reject(signal.reason) }) }) },
        () => null as never
      ]
    }).after()
  })
  t.teardown(() => app.close())
  // Two checks never settle: only the 150 ms limit can answer (a hang fails on the file's time limit), and the
  // answer names it for each of them below.
  const r = await fetch(`${base}/hc`)
  t.equal(r.status, 503)
  t.same(await r.json(), [
    { name: 'ok-one', status: 'ok' },
    { name: 'db', status: 'failed', error: 'connection refused' },
    { name: 'queue', status: 'failed', error: 'backlog too long' },
    { name: 'thrower', status: 'failed', error: 'boom' },
    { name: 'rejecter', status: 'failed', error: 'async boom' },
    { name: 'hanger', status: 'failed', error: 'timed out after 150 ms' },
    { name: 'named-hang', status: 'failed', error: 'timed out after 150 ms' },
    { name: 'check-8', status: 'failed', error: 'check returned no result' }
  ])
  t.equal(hangs, 1)
  t.equal(aborted, 1, 'the time limit aborts the signal given to the check')
})

t.test('health honours the register prefix and refuses bad options', async (t) => {
  const { app, base, fetch } = await injectApp(async (app) => {
    await app.register(healthPlugin, { prefix: '/ops', checks: [] })
  })
  t.teardown(() => app.close())
  const r = await fetch(`${base}/ops/health`)
  t.equal(r.status, 200)
  t.same(await r.json(), [])

  for (const [opts, option] of [
    [{}, 'health.checks'],
    [{ checks: [42] }, 'health.checks[0]'],
    [{ checks: [() => ({ name: 'ok' }), { name: '', check: () => 1 }] }, 'health.checks[1]'],
    [{ checks: [], timeout: 0 }, 'health.timeout'],
    [{ checks: [], path: 'health' }, 'health.path']
  ] as const) {
    const bad = Fastify()
    await t.rejects(async () => { await bad.register(healthPlugin, opts as never).ready() }, { code: 'GATEHOUSE_OPTION', option }, JSON.stringify(opts))
    await bad.close()
  }
})
