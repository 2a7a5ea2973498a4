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
    ['/a//b/?x=//y/../z', '/a/b/?x=//y/../z'], ['/a/b/', '/a/b/'], ['/a%2F..%2Fb', '/a%2F..%2Fb'], ['/a/%2e%2e/b', '/a/%2e%2e/b'],
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
