import t from 'tap'
import Fastify from 'fastify'
import { request } from 'node:http'
import { Readable } from 'node:stream'
import { gunzipSync, gzipSync } from 'node:zlib'
import { listen } from '../../helpers/client.js'
import { acceptsGzip, gzipPlugin } from '../../../plugins/toolkit/gzip.js'

interface Raw { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }

/** Raw HTTP (fetch would decode the body and add its own Accept-Encoding). */
function get (base: string, path: string, acceptEncoding?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding }
    const req = request(base + path, { headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

const big = { items: Array.from({ length: 200 }, (_, i) => ({ i, name: `item number ${i}` })) }
const bigText = 'line of text that repeats\n'.repeat(500)

t.test('gzip plugin', async (t) => {
  const { app, base } = await listen(async (app) => {
    await app.register(async (scope) => {
      await scope.register(gzipPlugin, { threshold: 256, contentTypes: ['application/x-ndjson'] })
      scope.get('/big', async () => big)
      scope.get('/small', async () => ({ ok: true }))
      scope.get('/stream', async (_req, reply) => {
        reply.type('text/plain; charset=utf-8')
        return Readable.from((function * () { for (let i = 0; i < 50; i++) yield 'line of text that repeats\n'.repeat(10) })())
      })
      scope.get('/pre-gzipped', async (_req, reply) => {
        reply.header('content-encoding', 'gzip').type('text/plain')
        return gzipSync(bigText)
      })
      scope.get('/br', async (_req, reply) => {
        reply.header('content-encoding', 'br').type('text/plain')
        return Buffer.from('pretend-brotli'.repeat(100))
      })
      scope.get('/png', async (_req, reply) => { reply.type('image/png'); return Buffer.alloc(4096, 7) })
      scope.get('/ndjson', async (_req, reply) => { reply.type('application/x-ndjson'); return bigText })
      scope.get('/off', { compress: false }, async () => big)
    })
    app.get('/outside', async () => big)
  })
  t.teardown(() => app.close())

  let r = await get(base, '/big', 'gzip')
  t.equal(r.headers['content-encoding'], 'gzip')
  t.match(r.headers.vary, /accept-encoding/i)
  t.same(JSON.parse(gunzipSync(r.body).toString()), big)
  t.ok(r.body.length < JSON.stringify(big).length / 3, 'really smaller')

  r = await get(base, '/big', 'gzip, deflate, br')
  t.equal(r.headers['content-encoding'], 'gzip', 'gzip chosen even when br is offered')

  for (const ae of ['gzip;q=0', 'br', 'identity', 'gzip;q=0, *;q=0.5, identity']) {
    r = await get(base, '/big', ae)
    t.equal(r.headers['content-encoding'], undefined, `not compressed for "${ae}"`)
    t.same(JSON.parse(r.body.toString()), big)
  }
  r = await get(base, '/big')
  t.equal(r.headers['content-encoding'], undefined, 'no Accept-Encoding, no compression')

  r = await get(base, '/small', 'gzip')
  t.equal(r.headers['content-encoding'], undefined, 'below the threshold')
  t.same(JSON.parse(r.body.toString()), { ok: true })

  r = await get(base, '/stream', 'gzip')
  t.equal(r.headers['content-encoding'], 'gzip', 'streams compressed')
  t.equal(r.headers['transfer-encoding'], 'chunked')
  t.equal(gunzipSync(r.body).toString(), bigText.slice(0, 'line of text that repeats\n'.length * 500))

  r = await get(base, '/pre-gzipped', 'gzip')
  t.equal(r.headers['content-encoding'], 'gzip')
  t.equal(gunzipSync(r.body).toString(), bigText, 'already-gzipped body not gzipped twice')

  r = await get(base, '/br', 'gzip')
  t.equal(r.headers['content-encoding'], 'br', 'other encodings left alone')
  t.equal(r.body.toString(), 'pretend-brotli'.repeat(100))

  r = await get(base, '/png', 'gzip')
  t.equal(r.headers['content-encoding'], undefined, 'incompressible type skipped')
  t.equal(r.body.length, 4096)

  r = await get(base, '/ndjson', 'gzip')
  t.equal(r.headers['content-encoding'], 'gzip', 'extra content type compressed')

  r = await get(base, '/off', 'gzip')
  t.equal(r.headers['content-encoding'], undefined, 'route opt-out')

  r = await get(base, '/outside', 'gzip')
  t.equal(r.headers['content-encoding'], undefined, 'scoped to its context')
})

t.test('bad options fail at startup', async (t) => {
  const bad: Array<[object, string]> = [
    [{ threshold: -1 }, 'gzip.threshold'],
    [{ threshold: 1.5 }, 'gzip.threshold'],
    [{ level: 10 }, 'gzip.level'],
    [{ level: 0 }, 'gzip.level'],
    [{ contentTypes: [''] }, 'gzip.contentTypes'],
    [{ contentTypes: 'text/' }, 'gzip.contentTypes'],
    [{ onlyContentTypes: [''] }, 'gzip.onlyContentTypes'],
    [{ onlyContentTypes: 'application/json' }, 'gzip.onlyContentTypes'],
    [{ onlyContentTypes: ['text/'], contentTypes: ['application/x-ndjson'] }, 'gzip.onlyContentTypes']
  ]
  for (const [opts, option] of bad) {
    const app = Fastify()
    app.register(gzipPlugin, opts)
    await t.rejects(async () => { await app.ready() }, { code: 'GATEHOUSE_OPTION', option }, JSON.stringify(opts))
    await app.close()
  }
})

t.test('acceptsGzip follows RFC 9110 q-values', async (t) => {
  const cases: Array<[string, boolean]> = [
    ['gzip', true], ['GZIP;Q=0.5', true], ['gzip;q=0', false], ['gzip;q=0.000', false], ['*', true],
    ['*;q=0', false], ['gzip;q=0, *', false], ['x-gzip;q=0, *;q=1', false], ['br, *;q=0.1', true],
    ['br, deflate', false], ['gzip;q=nonsense', false], ['', false]
  ]
  for (const [h, want] of cases) t.equal(acceptsGzip(h), want, JSON.stringify(h))
})

t.test('gzip without extra content types: what mime-db marks compressible, nothing else', async (t) => {
  const { app, base } = await listen(async (app) => {
    await app.register(gzipPlugin)
    app.get('/json', async () => big)
    app.get('/text', async (_req, reply) => { reply.type('text/plain; charset=utf-8'); return bigText })
    // @fastify/compress's own default would compress any `+json` type; mime-db does not know this one.
    app.get('/vendor', async (_req, reply) => { reply.type('application/vnd.acme.bench+json'); return bigText })
    app.get('/ndjson', async (_req, reply) => { reply.type('application/x-ndjson'); return bigText })
  })
  t.teardown(() => app.close())
  for (const path of ['/json', '/text']) {
    const r = await get(base, path, 'gzip')
    t.equal(r.headers['content-encoding'], 'gzip', `${path} compressed`)
    t.ok(gunzipSync(r.body).length > r.body.length)
  }
  for (const path of ['/vendor', '/ndjson']) {
    const r = await get(base, path, 'gzip')
    t.equal(r.headers['content-encoding'], undefined, `${path}: not compressible by mime-db, not compressed`)
    t.equal(r.body.toString(), bigText)
  }
})

t.test('gzip onlyContentTypes (upstream #51): decided on the type the handler answered with, mime-db not consulted', async (t) => {
  const { app, base } = await listen(async (app) => {
    await app.register(gzipPlugin, { onlyContentTypes: ['text/', 'application/x-ndjson'] })
    app.get('/json', async () => big)
    app.get('/text', async (_req, reply) => { reply.type('text/plain; charset=utf-8'); return bigText })
    app.get('/ndjson', async (_req, reply) => { reply.type('Application/X-NDJSON'); return bigText })
    // The same route answering two types: the answer's type decides, not the route or the request.
    app.get('/either', async (req, reply) => (req.query as { as?: string }).as === 'text' ? reply.type('text/csv').send(bigText) : big)
  })
  t.teardown(() => app.close())
  for (const path of ['/text', '/ndjson', '/either?as=text']) {
    const r = await get(base, path, 'gzip')
    t.equal(r.headers['content-encoding'], 'gzip', `${path} compressed`)
    t.equal(gunzipSync(r.body).toString(), bigText)
  }
  for (const path of ['/json', '/either']) {
    const r = await get(base, path, 'gzip')
    t.equal(r.headers['content-encoding'], undefined, `${path}: JSON is not listed (mime-db would compress it)`)
    t.same(JSON.parse(r.body.toString()), big)
  }
  const refused = await get(base, '/text', 'gzip;q=0')
  t.equal(refused.headers['content-encoding'], undefined, 'the client\'s gzip;q=0 still wins')
})
