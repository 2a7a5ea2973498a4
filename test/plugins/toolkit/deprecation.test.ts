import t from 'tap'
import Fastify from 'fastify'
import { injectApp } from '../../helpers/app.js'
import { deprecationPlugin, deprecationHook } from '../../../plugins/toolkit/deprecation.js'

t.test('deprecation headers per draft-02 (and RFC 9745 on request)', async (t) => {
  const date = new Date('2024-06-30T23:59:59Z')
  const { app, base, fetch } = await injectApp(async (app) => {
    await app.register(async (v1) => {
      await v1.register(deprecationPlugin)
      v1.get('/v1/now', async () => 'old')
    })
    await app.register(async (v2) => {
      await v2.register(deprecationPlugin, { date, link: 'https://example.com/docs/v2-deprecation', sunset: '2025-01-01T00:00:00Z' })
      v2.get('/v2/dated', async (_req, reply) => { reply.header('link', '<https://example.com/next>; rel="successor-version"'); return 'dated' })
    })
    app.get('/v3/sf', { onRequest: deprecationHook({ date, format: 'rfc9745' }) }, async () => 'sf')
    app.get('/current', async () => 'current')
  })
  t.teardown(() => app.close())

  const now = await fetch(`${base}/v1/now`)
  t.equal(now.headers.get('deprecation'), 'true', 'deprecated now')
  t.equal(now.headers.get('link'), null)
  t.equal(now.headers.get('sunset'), null)
  t.equal(await now.text(), 'old', 'the resource still works')

  const dated = await fetch(`${base}/v2/dated`)
  t.equal(dated.headers.get('deprecation'), 'Sun, 30 Jun 2024 23:59:59 GMT', 'IMF-fixdate')
  t.equal(dated.headers.get('sunset'), 'Wed, 01 Jan 2025 00:00:00 GMT')
  t.equal(dated.headers.get('link'), '<https://example.com/next>; rel="successor-version", <https://example.com/docs/v2-deprecation>; rel="deprecation"; type="text/html"', 'application Link kept, deprecation link appended')
  await dated.arrayBuffer()

  const sf = await fetch(`${base}/v3/sf`)
  t.equal(sf.headers.get('deprecation'), `@${date.getTime() / 1000 | 0}`, 'structured-field date')
  await sf.arrayBuffer()

  const cur = await fetch(`${base}/current`)
  t.equal(cur.headers.get('deprecation'), null, 'scoped to its context')
  await cur.arrayBuffer()
})

t.test('deprecation refuses bad options', async (t) => {
  for (const [opts, option] of [
    [{ date: 'not a date' }, 'deprecation.date'],
    [{ date: {} }, 'deprecation.date'],
    [{ format: 'rfc9745' }, 'deprecation.date'],
    [{ format: 'v3' }, 'deprecation.format'],
    [{ link: 'javascript:alert(1)' }, 'deprecation.link'],
    [{ link: 'relative/path' }, 'deprecation.link'],
    [{ date: '2024-01-02', sunset: '2024-01-01' }, 'deprecation.sunset'],
    [{ sunset: 'soon' }, 'deprecation.sunset']
  ] as const) {
    const bad = Fastify()
    await t.rejects(async () => { await bad.register(deprecationPlugin, opts as never).ready() }, { code: 'GATEHOUSE_OPTION', option }, JSON.stringify(opts))
    await bad.close()
    t.throws(() => deprecationHook(opts as never), { code: 'GATEHOUSE_OPTION', option }, 'hook form')
  }
})
