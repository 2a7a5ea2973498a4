import t from 'tap'
import Fastify from 'fastify'
import { injectApp } from '../../helpers/app.js'
import { appInfoPlugin, appInfoHook } from '../../../plugins/toolkit/app-info.js'

t.test('appInfo headers, M-Host from MHOST', async (t) => {
  const saved = process.env.MHOST
  process.env.MHOST = 'host-7'
  t.teardown(() => { if (saved === undefined) delete process.env.MHOST; else process.env.MHOST = saved })
  const { app, base, fetch } = await injectApp(async (app) => {
    await app.register(async (scope) => {
      await scope.register(appInfoPlugin, { name: 'demo', version: '1.2.3', org: 'Acme' })
      scope.get('/a', async () => 'a')
      scope.get('/fail', async () => { throw new Error('x') })
    })
    app.get('/outside', async () => 'o')
    app.get('/hooked', { onRequest: appInfoHook({ name: 'h', version: '9' }) }, async () => 'h')
  })
  t.teardown(() => app.close())

  const r = await fetch(`${base}/a`)
  t.equal(r.headers.get('app-name'), 'demo')
  t.equal(r.headers.get('app-version'), '1.2.3')
  t.equal(r.headers.get('org'), 'Acme')
  t.equal(r.headers.get('m-host'), 'host-7')
  t.equal(await r.text(), 'a')

  const f = await fetch(`${base}/fail`)
  t.equal(f.status, 500)
  t.equal(f.headers.get('app-name'), 'demo', 'error answers carry the headers too')
  await f.arrayBuffer()

  const o = await fetch(`${base}/outside`)
  t.equal(o.headers.get('app-name'), null, 'scoped to its context')
  await o.arrayBuffer()

  const h = await fetch(`${base}/hooked`)
  t.equal(h.headers.get('app-name'), 'h')
  t.equal(h.headers.get('org'), null, 'org omitted when not given')
  await h.arrayBuffer()
})

t.test('appInfo without MHOST sends no M-Host; bad options are refused at registration', async (t) => {
  const saved = process.env.MHOST
  delete process.env.MHOST
  t.teardown(() => { if (saved !== undefined) process.env.MHOST = saved })
  const { app, base, fetch } = await injectApp(async (app) => {
    await app.register(appInfoPlugin, { name: 'n', version: 'v' })
    app.get('/', async () => 'ok')
  })
  t.teardown(() => app.close())
  const r = await fetch(base)
  t.equal(r.headers.get('m-host'), null)
  await r.arrayBuffer()

  for (const [opts, option] of [
    [{ version: '1' }, 'appInfo.name'],
    [{ name: 'a', version: '' }, 'appInfo.version'],
    [{ name: 'a\r\nSet-Cookie: x=1', version: '1' }, 'appInfo.name'],
    [{ name: 'a', version: '1', org: 5 }, 'appInfo.org'],
    [{ name: 'a', version: '1', mhost: 'h\n' }, 'appInfo.mhost']
  ] as const) {
    const bad = Fastify()
    await t.rejects(async () => { await bad.register(appInfoPlugin, opts as never).ready() }, { code: 'GATEHOUSE_OPTION', option }, JSON.stringify(opts))
    await bad.close()
    t.throws(() => appInfoHook(opts as never), { code: 'GATEHOUSE_OPTION', option }, 'hook form')
  }
})
