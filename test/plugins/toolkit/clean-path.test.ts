/**
 * cleanPath and stripSlashes route the normalized path over real HTTP (the plugins act on the server's request
 * event, before routing), keep the query and percent-encoding, never climb above the root; the functions fit
 * Fastify's rewriteUrl option, which `inject` passes through as well.
 */
import t from 'tap'
import Fastify from 'fastify'
import { cleanPath, cleanPathPlugin, stripSlashes, stripSlashesPlugin } from '../../../toolkit.js'
import { listen } from '../../helpers/client.js'

/** A raw request target sent as is (fetch would normalize the dots itself). */
async function rawGet (base: string, target: string): Promise<{ status: number; body: string }> {
  const { request } = await import('node:http')
  return await new Promise((resolve, reject) => {
    const req = request(`${base}${target}`, { path: target }, (res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (c: string) => { body += c }).on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject).end()
  })
}

t.test('the functions', async (t) => {
  const clean: Array<[string, string]> = [
    ['/a/b', '/a/b'], ['//a///b', '/a/b'], ['/a/./b', '/a/b'], ['/a/../b', '/b'], ['/../../etc/passwd', '/etc/passwd'],
    ['/a//b/?x=//y/../z', '/a/b/?x=//y/../z'], ['/a/b/', '/a/b/'], ['/a%2F..%2Fb', '/a%2F..%2Fb'], ['/a/%2e%2e/b', '/b'],
    ['/%61dmin', '/admin'], ['/%41%5a%7e%2D%5F%30', '/AZ~-_0'], ['/a%20b/%2F/%25/%3F', '/a%20b/%2F/%25/%3F'], ['/%61?x=%61', '/a?x=%61'],
    ['/x/%2E/y', '/x/y'], ['/%zz/%6', '/%zz/%6'],
    ['/..', '/'], ['/', '/'], ['*', '*'], ['/a/.hidden', '/a/.hidden']
  ]
  for (const [from, to] of clean) t.equal(cleanPath(from), to, `cleanPath ${from}`)
  const strip: Array<[string, string]> = [['/users/', '/users'], ['/users///', '/users'], ['/', '/'], ['/a?b=/', '/a?b=/'], ['/a/?q=1', '/a?q=1'], ['/a', '/a']]
  for (const [from, to] of strip) t.equal(stripSlashes(from), to, `stripSlashes ${from}`)
})

t.test('the plugins over real HTTP', async (t) => {
  const { app, base } = await listen(async (app) => {
    await app.register(cleanPathPlugin)
    await app.register(stripSlashesPlugin)
    app.get('/api/users', async (req) => ({ url: req.url, query: req.query }))
    app.get('/files/:name', async (req) => ({ name: (req.params as { name: string }).name }))
  })
  t.teardown(() => app.close())
  for (const target of ['/api/users', '//api//users', '/api/./users/', '/x/../api/users///', '/api/v1/../users']) {
    const res = await rawGet(base, target)
    t.equal(res.status, 200, target)
    t.same(JSON.parse(res.body).url, '/api/users', `${target} routed as /api/users`)
  }
  const q = await rawGet(base, '//api/users/?a=1&b=//x')
  t.same(JSON.parse(q.body), { url: '/api/users?a=1&b=//x', query: { a: '1', b: '//x' } }, 'query kept')
  t.same(JSON.parse((await rawGet(base, '/files/a%2Fb')).body), { name: 'a/b' }, 'an encoded slash stays in its segment')
  t.equal((await rawGet(base, '/../../api/nothing')).status, 404, 'no climbing above the root')
})

t.test('the rewriteUrl option with inject', async (t) => {
  const app = Fastify({ rewriteUrl: (req) => stripSlashes(cleanPath(req.url ?? '/')) })
  app.get('/a/b', async () => 'ab')
  t.teardown(() => app.close())
  t.equal((await app.inject('//a/./b/')).body, 'ab')
})

t.test('an app-wide guard on request.url after cleanPath sees the path the router matched (issue 43, item 9)', async (t) => {
  const guard = (app: import('fastify').FastifyInstance): void => {
    app.addHook('onRequest', async (req, reply) => {
      if (req.url.startsWith('/admin')) return await reply.code(403).send({ error: 'forbidden', code: 'ADMIN' })
    })
    app.get('/admin', async () => 'the admin page')
    app.get('/public', async () => 'public')
  }
  const { app, base } = await listen(async (app) => {
    await app.register(cleanPathPlugin)
    guard(app)
  })
  t.teardown(() => app.close())
  for (const target of ['/admin', '/%61dmin', '/%61%64%6D%69%6E', '/public/%2e%2e/admin', '/.//%61dmin?x=1']) {
    const res = await rawGet(base, target)
    t.equal(res.status, 403, `${target}: the guard saw /admin`)
  }
  t.equal((await rawGet(base, '/public')).status, 200)

  const rewritten = Fastify({ rewriteUrl: (req) => cleanPath(req.url ?? '/') })
  guard(rewritten)
  t.teardown(() => rewritten.close())
  t.equal((await rewritten.inject('/%61dmin')).statusCode, 403, 'the function in rewriteUrl, with inject')
})
