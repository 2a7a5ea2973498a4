/**
 * cors over @fastify/cors: an allowed origin is echoed with Vary and credentials, another gets no CORS headers,
 * a preflight is 204 with the allowed methods and headers, `*` works without credentials; `*` with credentials
 * (upstream #52) and every other bad option is an OptionsError naming it. The browser's view is in
 * test/e2e/browser/cors.test.ts.
 */
import t from 'tap'
import Fastify from 'fastify'
import { corsPlugin, type CorsOptions } from '../../../toolkit.js'
import { OptionsError } from '../../../lib/errors.js'

async function app (opts: CorsOptions): Promise<ReturnType<typeof Fastify>> {
  const app = Fastify()
  await app.register(corsPlugin, opts)
  app.get('/data', async () => ({ ok: true }))
  await app.ready()
  return app
}

t.test('listed origins with credentials', async (t) => {
  const a = await app({ origins: ['https://app.example.com', 'http://localhost:5173'], credentials: true, exposedHeaders: ['X-Total'], maxAge: 600 })
  t.teardown(() => a.close())
  const ok = await a.inject({ url: '/data', headers: { origin: 'https://app.example.com' } })
  t.equal(ok.statusCode, 200)
  t.equal(ok.headers['access-control-allow-origin'], 'https://app.example.com')
  t.equal(ok.headers['access-control-allow-credentials'], 'true')
  t.equal(ok.headers['access-control-expose-headers'], 'X-Total')
  t.match(ok.headers.vary, /Origin/)

  const other = await a.inject({ url: '/data', headers: { origin: 'https://evil.example' } })
  t.equal(other.statusCode, 200, 'the answer itself is not refused (the browser withholds it)')
  t.equal(other.headers['access-control-allow-origin'], undefined, 'no Allow-Origin for another origin')

  const pre = await a.inject({ method: 'OPTIONS', url: '/data', headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'PUT', 'access-control-request-headers': 'content-type' } })
  t.equal(pre.statusCode, 204)
  t.equal(pre.headers['access-control-allow-origin'], 'http://localhost:5173')
  t.equal(pre.headers['access-control-allow-methods'], 'GET, POST, PUT, PATCH, DELETE, OPTIONS, HEAD')
  t.equal(pre.headers['access-control-allow-headers'], 'Accept, Content-Type, Authorization, X-Requested-With')
  t.equal(pre.headers['access-control-max-age'], '600')

  const bare = await a.inject({ method: 'OPTIONS', url: '/data' })
  t.equal(bare.statusCode, 204, 'an OPTIONS without preflight headers is no error')
  t.equal(bare.headers['access-control-allow-origin'], undefined)
})

t.test('any origin without credentials', async (t) => {
  const a = await app({ origins: ['*'], methods: ['get', 'post'] })
  t.teardown(() => a.close())
  const res = await a.inject({ url: '/data', headers: { origin: 'https://anyone.example' } })
  t.equal(res.headers['access-control-allow-origin'], '*')
  t.equal(res.headers['access-control-allow-credentials'], undefined)
  const pre = await a.inject({ method: 'OPTIONS', url: '/data', headers: { origin: 'https://anyone.example', 'access-control-request-method': 'POST' } })
  t.equal(pre.headers['access-control-allow-methods'], 'GET, POST')
})

t.test('bad options: an OptionsError naming the option', async (t) => {
  const bad: Array<[unknown, string, RegExp?]> = [
    [{ origins: ['*'], credentials: true }, 'cors.origins', /may not allow "\*" with credentials/],
    [{ origins: ['https://a.example', '*'], credentials: true }, 'cors.origins', /with credentials/],
    [{ origins: ['https://a.example', '*'] }, 'cors.origins', /alone/],
    [{}, 'cors.origins'],
    [{ origins: [] }, 'cors.origins'],
    [{ origins: 'https://a.example' }, 'cors.origins'],
    [{ origins: ['https://a.example/app'] }, 'cors.origins[0]'],
    [{ origins: ['null'] }, 'cors.origins[0]'],
    [{ origins: [7] }, 'cors.origins[0]'],
    [{ origins: ['*'], credentials: 'yes' }, 'cors.credentials'],
    [{ origins: ['*'], maxAge: -5 }, 'cors.maxAge'],
    [{ origins: ['*'], methods: ['GET', 'BAD METHOD'] }, 'cors.methods'],
    [{ origins: ['*'], allowedHeaders: ['X-Ok', 'bad\nheader'] }, 'cors.allowedHeaders'],
    [{ origins: ['*'], exposedHeaders: 'X-Total' }, 'cors.exposedHeaders']
  ]
  for (const [opts, option, message] of bad) {
    const a = Fastify()
    const err = await a.register(corsPlugin, opts as CorsOptions).ready().then(() => undefined, (e: unknown) => e)
    t.ok(err instanceof OptionsError, `${JSON.stringify(opts)}: an OptionsError`)
    t.equal((err as OptionsError).option, option, JSON.stringify(opts))
    if (message !== undefined) t.match((err as Error).message, message)
    await a.close()
  }
})
