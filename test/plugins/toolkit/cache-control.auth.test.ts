/**
 * cacheControl behind the auth hooks (issue 43, item 1): an answer that depends on who asks gets a `private`
 * answer and an ETag bound to its user, decided after the route's hooks, so that nobody (and nobody else)
 * revalidates a user's stored answer into a 304, and a refused request gets no validator at all.
 */
import t from 'tap'
import { cacheControlHook, cacheControlPlugin, cacheEtag } from '../../../toolkit.js'
import { sessionApp, xsrfName, type SessionApp } from '../../helpers/session-app.js'
import type { Client } from '../../helpers/client.js'

let s: SessionApp
let runs = 0
t.before(async () => {
  s = await sessionApp({}, (app) => {
    void app.register(async (scope) => {
      await scope.register(cacheControlPlugin, { maxAge: 60, version: 'v1' })
      scope.get('/api/me', { preHandler: scope.auth.authenticate }, async (req) => { runs++; return { name: req.user!.name } })
      scope.get('/api/me-early', { onRequest: scope.auth.authenticate }, async (req) => { runs++; return { name: req.user!.name } })
      scope.get('/api/open', async () => { runs++; return { open: true } })
    })
    // The hook form, once before the auth hook (it cannot know), once after it.
    app.get('/hook/before', { onRequest: cacheControlHook({ maxAge: 60, version: 'v1' }), preHandler: app.auth.authenticate }, async (req) => { runs++; return { name: req.user!.name } })
    app.get('/hook/after', { preHandler: [app.auth.authenticate, cacheControlHook({ maxAge: 60, version: 'v1' })] }, async (req) => { runs++; return { name: req.user!.name } })
  })
})
t.teardown(() => s.close())

const headersOf = (c: Client, etag?: string): Record<string, string> => ({
  'x-xsrf-token': c.jar.get(xsrfName(c)) ?? '',
  ...(etag === undefined ? {} : { 'if-none-match': etag })
})

t.test('a user\'s answer is private, its ETag bound to the user, and only that user revalidates it', async (t) => {
  const alice = await s.login('alice')
  const bob = await s.login('bob')
  for (const path of ['/api/me', '/api/me-early']) {
    const first = await alice.fetch(path, { headers: headersOf(alice) })
    t.equal(first.status, 200, path)
    const etag = first.headers.get('etag')!
    t.match(first.headers.get('cache-control'), /^private, /, `${path}: private`)
    t.not(etag, cacheEtag('v1', path), `${path}: not the shared ETag of version and URL`)

    const before = runs
    const again = await alice.fetch(path, { headers: headersOf(alice, etag) })
    t.equal(again.status, 304, `${path}: Alice revalidates her own answer`)
    t.equal(runs, before, 'without running the handler')

    const nobody = await s.fetch(`${s.base}${path}`, { headers: { 'if-none-match': etag } })
    t.equal(nobody.status, 401, `${path}: a request without credentials is refused, not told "not modified"`)
    t.equal(nobody.headers.get('etag'), null, `${path}: a refused request gets no validator`)

    const other = await bob.fetch(path, { headers: headersOf(bob, etag) })
    t.equal(other.status, 200, `${path}: Bob's request with Alice's ETag gets Bob's answer`)
    t.same(await other.json(), { name: 'bob' })
    t.not(other.headers.get('etag'), etag, `${path}: Bob's ETag is his own`)
  }
})

t.test('a session ended since gets 401, never a 304 for what its browser kept', async (t) => {
  const carol = await s.login('carol')
  const first = await carol.fetch('/api/me', { headers: headersOf(carol) })
  const etag = first.headers.get('etag')!
  const token = carol.jar.get('JWT')!
  const xsrf = carol.jar.get(xsrfName(carol))!
  t.equal((await carol.fetch('/auth/logout', { method: 'POST', headers: headersOf(carol) })).status, 200)
  const replay = await s.fetch(`${s.base}/api/me`, { headers: { cookie: `JWT=${token}; XSRF-TOKEN=${xsrf}`, 'x-xsrf-token': xsrf, 'if-none-match': etag } })
  t.equal(replay.status, 401, 'the revoked session is refused by the hook before any 304')
})

t.test('the route hook: no 304 to credentials before an auth hook vouched for them; after it, the user\'s', async (t) => {
  const dave = await s.login('dave')
  const early = await dave.fetch('/hook/before', { headers: headersOf(dave) })
  const earlyTag = early.headers.get('etag')!
  t.match(early.headers.get('cache-control'), /^private, /)
  t.equal((await dave.fetch('/hook/before', { headers: headersOf(dave, earlyTag) })).status, 200, 'placed before the auth hook: no 304 for a cookie')
  const late = await dave.fetch('/hook/after', { headers: headersOf(dave) })
  t.equal((await dave.fetch('/hook/after', { headers: headersOf(dave, late.headers.get('etag')!) })).status, 304, 'placed after it: the user\'s 304')
  const eve = await s.login('eve')
  t.equal((await eve.fetch('/hook/after', { headers: headersOf(eve, late.headers.get('etag')!) })).status, 200, 'another user: no 304')
})

t.test('an answer for anyone keeps its shared ETag and 304; a request with credentials gets its own', async (t) => {
  const open = await s.fetch(`${s.base}/api/open`)
  const etag = open.headers.get('etag')!
  t.equal(etag, cacheEtag('v1', '/api/open'))
  t.equal(open.headers.get('cache-control'), 'max-age=60, no-cache', 'public')
  t.equal((await s.fetch(`${s.base}/api/open`, { headers: { 'if-none-match': etag } })).status, 304)
  const bearer = await s.fetch(`${s.base}/api/open`, { headers: { authorization: 'Bearer abc', 'if-none-match': etag } })
  t.equal(bearer.status, 200, 'credentials: the shared ETag does not match')
  t.match(bearer.headers.get('cache-control'), /^private, /)
  const own = bearer.headers.get('etag')!
  t.equal((await s.fetch(`${s.base}/api/open`, { headers: { authorization: 'Bearer abc', 'if-none-match': own } })).status, 304, 'the same credentials revalidate their own')
  t.equal((await s.fetch(`${s.base}/api/open`, { headers: { authorization: 'Bearer xyz', 'if-none-match': own } })).status, 200, 'other credentials do not')
})

t.test('a route declared before the plugin: served by the context step, as the route hook is', async (t) => {
  const { default: Fastify } = await import('fastify')
  const app = Fastify()
  app.get('/early', async () => 'early')
  await app.register(cacheControlPlugin, { maxAge: 5, version: 'v' })
  t.teardown(() => app.close())
  const first = await app.inject('/early')
  t.equal(first.headers.etag, cacheEtag('v', '/early'), 'it gets the ETag too')
  t.equal((await app.inject({ url: '/early', headers: { 'if-none-match': first.headers.etag as string } })).statusCode, 304)
  const withCookie = await app.inject({ url: '/early', headers: { cookie: 'a=b' } })
  t.equal(withCookie.headers['cache-control'], 'private, max-age=5, no-cache')
  t.equal((await app.inject({ url: '/early', headers: { cookie: 'a=b', 'if-none-match': withCookie.headers.etag as string } })).statusCode, 200, 'no 304 to credentials nothing vouched for')
})
