import t from 'tap'
import { injectApp } from '../../helpers/app.js'
import { noCachePlugin, noCacheHook, NO_CACHE_HEADERS } from '../../../plugins/toolkit/no-cache.js'
import { HttpError } from '../../../lib/errors.js'

t.test('noCache plugin', async (t) => {
  const { app, base, fetch } = await injectApp(async (app) => {
    await app.register(async (scope) => {
      await scope.register(noCachePlugin)
      scope.get('/v', async (req, reply) => {
        reply.header('etag', '"abc"').header('last-modified', new Date(0).toUTCString()).header('cache-control', 'public, max-age=3600')
        return { inm: req.headers['if-none-match'] ?? null, ims: req.headers['if-modified-since'] ?? null, im: req.headers['if-match'] ?? null }
      })
      scope.get('/fail', async () => { throw new HttpError(418, 'teapot') })
    })
    app.get('/outside', async (_req, reply) => { reply.header('etag', '"x"'); return 'ok' })
    app.get('/hook', { onRequest: noCacheHook }, async () => 'hooked')
  })
  t.teardown(() => app.close())

  const r = await fetch(`${base}/v`, { headers: { 'if-none-match': '"abc"', 'if-modified-since': new Date().toUTCString(), 'if-match': '"w"' } })
  t.equal(r.status, 200)
  for (const [k, v] of Object.entries(NO_CACHE_HEADERS)) t.equal(r.headers.get(k), v, k)
  t.match(r.headers.get('cache-control'), /no-store/)
  t.equal(r.headers.get('expires'), 'Thu, 01 Jan 1970 00:00:00 GMT')
  t.equal(r.headers.get('etag'), null, 'etag dropped')
  t.equal(r.headers.get('last-modified'), null, 'last-modified dropped')
  t.same(await r.json(), { inm: null, ims: null, im: '"w"' }, 'cache validators stripped, write preconditions kept')

  const f = await fetch(`${base}/fail`)
  t.equal(f.status, 418)
  t.equal(f.headers.get('pragma'), 'no-cache', 'error answers are uncacheable too')

  const o = await fetch(`${base}/outside`)
  t.equal(o.headers.get('pragma'), null, 'scoped to its encapsulation context')
  t.equal(o.headers.get('etag'), '"x"')

  const h = await fetch(`${base}/hook`)
  t.equal(h.headers.get('cache-control'), NO_CACHE_HEADERS['cache-control'], 'hook form')
  t.equal(await h.text(), 'hooked')
})
