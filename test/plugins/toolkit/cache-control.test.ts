/**
 * cacheControl over real HTTP: the ETag is the SHA-1 of version and URL, `If-None-Match` with it (weak or in a list)
 * is a 304 without a body before the handler runs, `*` and other methods go to the handler, a new version is a new
 * ETag; the hook form and a per-request version; bad options name the option.
 */
import t from 'tap'
import Fastify from 'fastify'
import { createHash } from 'node:crypto'
import { cacheControlHook, cacheControlPlugin, cacheEtag, etagMatches } from '../../../toolkit.js'
import { OptionsError } from '../../../lib/errors.js'
import { listen } from '../../helpers/client.js'

const sha1 = (s: string): string => `"${createHash('sha1').update(s).digest('hex')}"`

t.test('If-None-Match over real HTTP: 304 before the handler, 200 otherwise', async (t) => {
  let version = 'v1'
  let runs = 0
  const { app, base } = await listen(async (app) => {
    await app.register(async (scope) => {
      await scope.register(cacheControlPlugin, { maxAge: 3600, version: () => version })
      scope.get('/items', async () => { runs++; return { items: [1, 2, 3] } })
      scope.post('/items', async () => { runs++; return { created: true } })
    })
    app.get('/hooked', { onRequest: cacheControlHook({ maxAge: 0, version: 'fixed' }) }, async () => { runs++; return 'hooked' })
    app.get('/plain', async () => 'plain')
  })
  t.teardown(() => app.close())

  const first = await fetch(`${base}/items?page=2`)
  const etag = first.headers.get('etag')!
  t.equal(first.status, 200)
  t.equal(etag, sha1('v1:/items?page=2'), 'ETag = sha1 of version:url')
  t.equal(etag, cacheEtag('v1', '/items?page=2'))
  t.equal(first.headers.get('cache-control'), 'max-age=3600, no-cache')
  t.same(await first.json(), { items: [1, 2, 3] })
  t.equal(runs, 1)

  for (const header of [etag, `W/${etag}`, `"other", ${etag}`, ` W/"x" ,${etag} `]) {
    const res = await fetch(`${base}/items?page=2`, { headers: { 'if-none-match': header } })
    t.equal(res.status, 304, `304 for If-None-Match: ${header}`)
    t.equal(await res.text(), '', 'no body')
    t.equal(res.headers.get('etag'), etag, 'the ETag is repeated')
  }
  t.equal(runs, 1, 'the handler never ran for a 304')

  const head = await fetch(`${base}/items?page=2`, { method: 'HEAD', headers: { 'if-none-match': etag } })
  t.equal(head.status, 304, 'HEAD too')
  const other: Array<[string, RequestInit]> = [
    ['*', { headers: { 'if-none-match': '*' } }],
    ['another URL', { headers: { 'if-none-match': etag } }],
    ['a garbage header', { headers: { 'if-none-match': 'W/, ,,"' } }]
  ]
  for (const [why, init] of other) {
    const res = await fetch(`${base}/items${why === 'another URL' ? '?page=3' : '?page=2'}`, init)
    t.equal(res.status, 200, `${why}: to the handler`)
  }
  const post = await fetch(`${base}/items?page=2`, { method: 'POST', headers: { 'if-none-match': etag } })
  t.equal(post.status, 200, 'POST goes to the handler (its preconditions are its own)')

  version = 'v2'
  const changed = await fetch(`${base}/items?page=2`, { headers: { 'if-none-match': etag } })
  t.equal(changed.status, 200, 'a new version: the old ETag no longer matches')
  t.equal(changed.headers.get('etag'), sha1('v2:/items?page=2'))

  const hooked = await fetch(`${base}/hooked`)
  t.equal(hooked.headers.get('cache-control'), 'max-age=0, no-cache')
  t.equal((await fetch(`${base}/hooked`, { headers: { 'if-none-match': hooked.headers.get('etag')! } })).status, 304, 'hook form')
  const plain = await fetch(`${base}/plain`)
  t.equal(plain.headers.get('etag'), null, 'scoped to its context')
})

t.test('a version function that returns no string is a 500 JSON error, not a cached answer', async (t) => {
  const app = Fastify()
  await app.register(cacheControlPlugin, { maxAge: 1, version: () => undefined as unknown as string })
  app.get('/x', async () => 'x')
  t.teardown(() => app.close())
  const res = await app.inject('/x')
  t.equal(res.statusCode, 500)
  t.equal(res.headers.etag, undefined)
})

t.test('etagMatches: weak comparison over a list, * never', async (t) => {
  t.ok(etagMatches('"a"', '"a"'))
  t.ok(etagMatches('W/"a"', '"a"'))
  t.ok(etagMatches('"a"', 'W/"a"'))
  t.ok(etagMatches('"b", W/"a"', '"a"'))
  t.notOk(etagMatches('*', '"a"'))
  t.notOk(etagMatches('', '"a"'))
  t.notOk(etagMatches(undefined, '"a"'))
  t.notOk(etagMatches('"ab"', '"a"'))
  t.notOk(etagMatches('a', '"a"'), 'quotes are part of the tag')
})

t.test('bad options: an OptionsError naming the option', async (t) => {
  const bad: Array<[unknown, string]> = [
    [{ version: 'v1' }, 'cacheControl.maxAge'],
    [{ maxAge: -1, version: 'v1' }, 'cacheControl.maxAge'],
    [{ maxAge: '1h', version: 'v1' }, 'cacheControl.maxAge'],
    [{ maxAge: 60 }, 'cacheControl.version'],
    [{ maxAge: 60, version: 3 }, 'cacheControl.version']
  ]
  for (const [opts, option] of bad) {
    const app = Fastify()
    const err = await app.register(cacheControlPlugin, opts as { maxAge: number; version: string }).ready().then(() => undefined, (e: unknown) => e)
    t.ok(err instanceof OptionsError, `${option}: an OptionsError`)
    t.equal((err as OptionsError).option, option, JSON.stringify(opts))
    await app.close()
  }
  t.throws(() => cacheControlHook({ maxAge: 1.5, version: 'v' }), { option: 'cacheControl.maxAge' })
})
