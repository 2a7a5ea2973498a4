import t from 'tap'
import { injectApp } from '../../helpers/app.js'
import { pingPlugin, pingHook } from '../../../plugins/toolkit/ping.js'

t.test('ping plugin answers /ping and any path ending in /ping', async (t) => {
  const { app, base, fetch } = await injectApp(async (app) => {
    await app.register(pingPlugin)
    app.get('/api/data', async () => ({ ok: true }))
    app.post('/ping', async () => 'posted')
  })
  t.teardown(() => app.close())

  for (const path of ['/ping', '/a/ping', '/deep/er/path/ping', '/ping?x=1']) {
    const r = await fetch(base + path)
    t.equal(r.status, 200, path)
    t.equal(r.headers.get('content-type'), 'text/plain', `${path} content type`)
    t.equal(await r.text(), 'pong', `${path} body`)
  }
  const head = await fetch(`${base}/ping`, { method: 'HEAD' })
  t.equal(head.status, 200, 'HEAD too')

  for (const path of ['/pingx', '/pin', '/ping/more', '/a/xping']) {
    const r = await fetch(base + path)
    t.equal(r.status, 404, `${path} is not a ping`)
    await r.arrayBuffer()
  }
  const post = await fetch(`${base}/ping`, { method: 'POST' })
  t.equal(await post.text(), 'posted', 'only GET/HEAD are pings')
  const data = await fetch(`${base}/api/data`)
  t.same(await data.json(), { ok: true }, 'other routes untouched')
})

t.test('pingHook on a route', async (t) => {
  const { app, base, fetch } = await injectApp(async (app) => {
    app.get('/svc/*', { onRequest: pingHook }, async () => 'svc')
  })
  t.teardown(() => app.close())
  t.equal(await (await fetch(`${base}/svc/ping`)).text(), 'pong')
  t.equal(await (await fetch(`${base}/svc/other`)).text(), 'svc')
})
