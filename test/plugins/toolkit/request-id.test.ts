import t from 'tap'
import { injectApp } from '../../helpers/app.js'
import { tracePlugin, traceHook, requestId } from '../../../plugins/toolkit/request-id.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

t.test('trace plugin: id read or generated, on response and request', async (t) => {
  const { app, base, fetch } = await injectApp(async (app) => {
    await app.register(async (scope) => {
      await scope.register(tracePlugin)
      scope.get('/id', async (req) => ({ id: requestId(req) }))
    })
    app.get('/outside', async (req) => ({ id: requestId(req) }))
    app.get('/hooked', { onRequest: traceHook }, async (req) => ({ id: req.requestId }))
  })
  t.teardown(() => app.close())

  const gen = await fetch(`${base}/id`)
  const genId = gen.headers.get('x-request-id')
  t.match(genId, UUID, 'generated when absent')
  t.same(await gen.json(), { id: genId }, 'same id on the request')

  const other = await fetch(`${base}/id`)
  t.not(other.headers.get('x-request-id'), genId, 'a new id per request')
  await other.arrayBuffer()

  const kept = await fetch(`${base}/id`, { headers: { 'x-request-id': 'abc-123_XYZ.:/' } })
  t.equal(kept.headers.get('x-request-id'), 'abc-123_XYZ.:/', 'sane incoming id kept')
  t.same(await kept.json(), { id: 'abc-123_XYZ.:/' })

  for (const bad of ['has space', 'x'.repeat(200), 'caf\u00e9', '']) {
    const r = await fetch(`${base}/id`, { headers: { 'x-request-id': bad } })
    t.match(r.headers.get('x-request-id'), UUID, `insane id ${JSON.stringify(bad.slice(0, 12))} replaced`)
    await r.arrayBuffer()
  }

  const out = await fetch(`${base}/outside`)
  t.equal(out.headers.get('x-request-id'), null, 'scoped to its encapsulation context')
  t.same(await out.json(), { id: '' })

  const h = await fetch(`${base}/hooked`, { headers: { 'x-request-id': 'from-hook' } })
  t.equal(h.headers.get('x-request-id'), 'from-hook', 'hook form')
  t.same(await h.json(), { id: 'from-hook' })
})

t.test('registered at the root, 404s carry an id too', async (t) => {
  const { app, base, fetch } = await injectApp(async (app) => { await app.register(tracePlugin) })
  t.teardown(() => app.close())
  const r = await fetch(`${base}/nowhere`)
  t.equal(r.status, 404)
  t.match(r.headers.get('x-request-id'), UUID)
  await r.arrayBuffer()
})
