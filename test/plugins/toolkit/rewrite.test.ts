import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { createServer } from 'node:http'
import { listen } from '../../helpers/client.js'
import { compileRewrite, rewritePlugin, rewriteUrl, type RewriteRules } from '../../../plugins/toolkit/rewrite.js'

const rules: RewriteRules = [
  { from: '^/old/(\\d+)/(\\w+)$', to: '/new/$2/$1' },
  { from: '^/user/(?<name>[a-z]+)$', to: '/profile?who=$<name>' },
  { from: /^\/braces\/(\w+)\/(\w+)$/, to: '/new/${2}0/${1}' },
  { from: '^/loop/(.*)$', to: '/loop2/$1' },
  { from: '^/loop2/(.*)$', to: '/never/$1' },
  { from: '^/escape/(.*)$', to: '/files/../../$1/' },
  { from: '^/price$', to: '/new/$$9/x' }
]

function routes (app: FastifyInstance): void {
  app.get('/new/:a/:b', async (req) => ({ params: req.params, url: req.url, originalUrl: req.originalUrl }))
  app.get('/profile', async (req) => ({ query: req.query }))
  app.get('/loop2/*', async () => ({ served: 'loop2' }))
  app.get('/never/*', async () => ({ served: 'never' }))
  app.get('/etc/', async () => ({ served: 'etc' }))
  app.post('/new/:a/:b', async (req) => ({ body: req.body }))
}

for (const form of ['plugin', 'rewriteUrl'] as const) {
  t.test(`rewrite via ${form}`, async (t) => {
    const { app, base } = form === 'plugin'
      ? await listen(async (a) => { await a.register(rewritePlugin, { rules }); routes(a) })
      : await listen((a) => routes(a), { rewriteUrl: rewriteUrl(rules) })
    t.teardown(() => app.close())

    let r = await fetch(`${base}/old/42/abc`)
    t.equal(r.status, 200)
    t.same(await r.json(), { params: { a: 'abc', b: '42' }, url: '/new/abc/42', originalUrl: '/old/42/abc' })

    r = await fetch(`${base}/user/alice?x=1`)
    t.same(await r.json(), { query: { who: 'alice', x: '1' } }, 'named group; target query first, original query kept')

    r = await fetch(`${base}/braces/p/q`)
    t.same((await r.json() as { params: unknown }).params, { a: 'q0', b: 'p' }, '${n} references')

    r = await fetch(`${base}/loop/z`)
    t.same(await r.json(), { served: 'loop2' }, 'one rewrite per request')

    r = await fetch(`${base}/escape/etc`)
    t.same(await r.json(), { served: 'etc' }, 'dot segments resolved, trailing slash kept')

    r = await fetch(`${base}/price`)
    t.same((await r.json() as { params: unknown }).params, { a: '$9', b: 'x' }, '$$ is a literal dollar')

    r = await fetch(`${base}/old/42/abc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"k":1}' })
    t.same(await r.json(), { body: { k: 1 } }, 'body reaches the rewritten route')

    r = await fetch(`${base}/new/x/y?q=1`)
    t.same(await r.json(), { params: { a: 'x', b: 'y' }, url: '/new/x/y?q=1', originalUrl: '/new/x/y?q=1' }, 'unmatched untouched')

    r = await fetch(`${base}/nothing`)
    t.equal(r.status, 404)
  })
}

t.test('plugin and constructor option together still rewrite once; later plugin rules come after', async (t) => {
  const { app, base } = await listen(async (a) => {
    await a.register(rewritePlugin, { rules: { '^/a$': '/b' } })
    await a.register(rewritePlugin, { rules: { '^/a$': '/c', '^/b$': '/c' } })
    a.get('/b', async () => 'b')
    a.get('/c', async () => 'c')
    a.get('/d', async () => 'd')
  }, { rewriteUrl: rewriteUrl({ '^/b$': '/d' }) })
  t.teardown(() => app.close())
  t.equal(await (await fetch(`${base}/a`)).text(), 'b')
  t.equal(await (await fetch(`${base}/b`)).text(), 'c', 'second plugin rule applies; constructor rule skipped')
})

t.test('plugin on a server from serverFactory, with or without another listener of its own', async (t) => {
  for (const extra of [false, true]) {
    // A listener beside Fastify's that only counts: the rewrite must still run before Fastify's routing.
    const seen: string[] = []
    const { app, base } = await listen(async (a) => {
      await a.register(rewritePlugin, { rules: { '^/a$': '/b' } })
      a.get('/b', async (req) => ({ url: req.url, originalUrl: req.originalUrl }))
    }, {
      serverFactory: (handler) => {
        const server = createServer((req, res) => { handler(req, res) })
        if (extra) server.on('request', (req) => { seen.push(req.url ?? '') })
        return server
      }
    })
    t.teardown(() => app.close())
    t.equal(app.server.listenerCount('request'), extra ? 3 : 2, 'the rewrite prepended to the server\'s listeners')
    t.same(await (await fetch(`${base}/a`)).json(), { url: '/b', originalUrl: '/a' }, `rewritten (${extra ? 'with' : 'without'} another listener)`)
    t.same(await (await fetch(`${base}/b`)).json(), { url: '/b', originalUrl: '/b' }, 'unmatched untouched')
    if (extra) t.same(seen, ['/b', '/b'], 'the other listener sees the rewritten URL')
  }
})

t.test('plugin: fastify.inject passes by the server and is not rewritten; over HTTP it is', async (t) => {
  const app = Fastify()
  await app.register(rewritePlugin, { rules: { '^/a$': '/b' } })
  app.get('/a', async (req) => ({ served: 'a', url: req.url }))
  app.get('/b', async (req) => ({ served: 'b', url: req.url }))
  await app.ready()
  t.teardown(() => app.close())
  t.equal(app.server.listenerCount('request'), 2, 'the rewrite prepended to Fastify\'s listener, which stays in place')
  t.same((await app.inject('/a')).json(), { served: 'a', url: '/a' }, 'inject: not rewritten (documented)')
  // The same app over the wire: the prepended listener rewrites before Fastify's routes.
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  t.same(await (await fetch(`http://127.0.0.1:${port}/a`)).json(), { served: 'b', url: '/b' }, 'over HTTP: rewritten')
})

t.test('bad rules fail at startup with a clear error', async (t) => {
  // The option names the rule; the message tells which part of it is wrong.
  const bad: Array<[unknown, string, RegExp]> = [
    [[{ from: '^/(unclosed', to: '/x' }], 'rewrite.rules[0]', /"from" "\^\/\(unclosed" is not a valid regular expression/],
    [[{ from: '^/ok$', to: '/ok' }, { from: '*/x', to: '/x' }], 'rewrite.rules[1]', /not a valid regular expression/],
    [{ '^/ok$': '/ok', '^/(a)$': '/x/$2' }, 'rewrite.rules[1]', /refers to group 2, but the pattern has 1/],
    [[{ from: '^/(a)$', to: '/x/$<nope>' }], 'rewrite.rules[0]', /unknown named group "nope"/],
    [[{ from: '^/(a)$', to: '/x/$' }], 'rewrite.rules[0]', /bad reference .* \$\$ for a literal/],
    [[{ from: '^/(a)$', to: '' }], 'rewrite.rules[0]', /"to" must be a non-empty string/],
    [[{ from: '', to: '/x' }], 'rewrite.rules[0]', /"from" must be/],
    [[{ from: 5, to: '/x' }], 'rewrite.rules[0]', /"from" must be/],
    [[null], 'rewrite.rules[0]', /must be \{from, to\}/],
    [[], 'rewrite.rules', /at least one rule/],
    [null, 'rewrite.rules', /must be an array/],
    ['^/a', 'rewrite.rules', /must be an array/]
  ]
  for (const [r, option, message] of bad) {
    const wanted = { name: 'OptionsError', code: 'GATEHOUSE_OPTION', option, message }
    t.throws(() => compileRewrite(r as RewriteRules), wanted, JSON.stringify(r))
    t.throws(() => rewriteUrl(r as RewriteRules), wanted, 'constructor-option form')
    const app = Fastify()
    app.register(rewritePlugin, { rules: r as RewriteRules })
    await t.rejects(async () => { await app.ready() }, wanted, 'plugin refuses to start')
    await app.close()
  }
  const app = Fastify()
  app.register(rewritePlugin, {} as never)
  await t.rejects(async () => { await app.ready() }, { code: 'GATEHOUSE_OPTION', option: 'rewrite.rules', message: /is required/ })
  await app.close()
})

// Dot segments the client sends must not climb out of a rule's target: `/api/../admin` must not become
// `/admin` by way of `/v1/$1`, past a rule that blocks `/admin`. Only the template's own `..` is resolved.
t.test('client dot segments never escape a rewrite target', async (t) => {
  const { request } = await import('node:http')
  const guarded: RewriteRules = [
    { from: '^/admin', to: '/blocked' },
    { from: '^/api/(.*)$', to: '/v1/$1' },
    { from: '^/f-(.*)$', to: '/files/$1' }
  ]
  const { app, base } = await listen(async (a) => {
    await a.register(rewritePlugin, { rules: guarded })
    a.get('/admin', async () => ({ served: 'admin' }))
    a.get('/blocked', async (_req, reply) => reply.code(403).send({ error: 'blocked' }))
    a.get('/v1/*', async (req) => ({ served: 'v1', rest: (req.params as { '*': string })['*'] }))
    a.get('/files/*', async (req) => ({ served: 'files', rest: (req.params as { '*': string })['*'] }))
  })
  t.teardown(() => app.close())
  const { port } = new URL(base)
  const rawGet = (path: string): Promise<{ status: number; body: string }> => new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => { body += c })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    req.end()
  })
  for (const path of ['/api/../admin', '/api/x/../../admin', '/api/./../admin', '/f-../admin', '/f-x/../../admin']) {
    const r = await rawGet(path)
    t.notMatch(r.body, /"served":"admin"/, `${path} does not reach /admin (${r.status} ${r.body})`)
    t.ok(r.status < 500, `${path}: no 5xx`)
  }
  t.equal((await rawGet('/api/../admin')).status, 403, 'resolved like the client path it is, then the blocking rule applies')
  t.same(JSON.parse((await rawGet('/api/a/./b')).body), { served: 'v1', rest: 'a/b' }, 'ordinary dot segments still resolved')
  t.equal(compileRewrite(guarded)('/api/../admin'), '/blocked')
  t.equal(compileRewrite(guarded)('/f-../admin'), '/files/../admin', 'a captured .. stays a literal segment')
})

t.test('compileRewrite maps targets', async (t) => {
  const r = compileRewrite([{ from: '^/(.*)$', to: '$1' }, { from: 'x', to: '/y' }])
  t.equal(r('/abc?d=1'), '/abc?d=1', 'leading slash added')
  t.equal(r('/a//b/./c'), '/a/b/c')
  t.equal(compileRewrite({ '^/$': '/home' })('/'), '/home')
  t.equal(compileRewrite({ '^/z$': '/home' })('/'), undefined)
  t.equal(compileRewrite({ '^/(.*)$': '/x/$0' })('/q'), '/x/q', '$0 is the whole match')
  t.equal(compileRewrite({ '/old/': '/new/' })('/v1/old/x?q=1'), '/v1/new/x?q=1', 'an unanchored match keeps what is around it')
  t.equal(compileRewrite([{ from: /(?<a>o+)/, to: '0$<a>0' }])('/foo/boo'), '/f0oo0/boo', 'a pattern without g: the first match only')
  const global = compileRewrite([{ from: /o(\w)/g, to: '0$1' }])
  for (let i = 0; i < 3; i++) t.equal(global('/foo/bob'), '/f0o/b0b', `a global pattern replaces every match, call ${i + 1} as the first`)
  t.equal(global('/x'), undefined)
  t.equal(compileRewrite({ '^/a/(.*)$': '/b?from=a' })('/a/z?x=1'), '/b?from=a&x=1', 'the template\'s query goes first')
  t.equal(compileRewrite({ '^/a/(.*)$': '/b/$1' })('/a/v1.2/f.txt'), '/b/v1.2/f.txt', 'captured dots come back as dots')
})
