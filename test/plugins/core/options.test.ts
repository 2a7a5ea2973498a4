import t from 'tap'
import Fastify from 'fastify'
import { authPlugin } from '../../../auth.js'
import { client, listen } from '../../helpers/client.js'

const base = { secret: () => 'abc-abc-abc-0123456789abcdef-0123456789abcdef', url: 'http://localhost:8080' }

t.test('bad options are startup errors naming the option', async (t) => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ url: 'http://x' }, 'secret'],
    [{ secret: () => 's' }, 'url'],
    [{ ...base, url: 'not a url' }, 'url'],
    [{ ...base, url: 'ftp://x' }, 'url'],
    [{ ...base, secret: 42 }, 'secret'],
    [{ ...base, session: { tokenDuration: -5 } }, 'session.tokenDuration'],
    [{ ...base, session: { maxAge: '3 weeks' } }, 'session.maxAge'],
    [{ ...base, validator: 'yes' }, 'validator'],
    [{ ...base, cookies: { sameSite: 'loose' } }, 'cookies.sameSite'],
    [{ ...base, cookies: { sameSite: 'None' } }, 'cookies.sameSite'],
    [{ ...base, audiences: 'a' }, 'audiences'],
    [{ ...base, authPrefix: 'auth' }, 'authPrefix'],
    [{ ...base, xsrf: { ignoreMethods: 'GET' } }, 'xsrf.ignoreMethods'],
    [{ ...base, xsrf: { headerKye: 'X' } }, 'xsrf.headerKye'],
    [{ ...base, cookies: { samesite: 'Lax' } }, 'cookies.samesite'],
    [{ ...base, xsrf: { cookieName: 'X' } }, 'xsrf.cookieName'],
    [{ ...base, sameSite: 'Lax' }, 'sameSite'],
    [{ ...base, session: { prefix: '/x' } }, 'session.prefix'],
    [{ ...base, rateLimit: { prefix: '/x' } }, 'rateLimit.prefix'],
    [{ ...base, rateLimit: { login: { logLevel: 'x' } } }, 'rateLimit.login.logLevel'],
    [{ ...base, crossSite: { prefix: '/x' } }, 'crossSite.prefix'],
    [{ ...base, session: 5 }, 'session'],
    [{ ...base, tokenSources: { cookie: 'x' } }, 'tokenSources.cookie'],
    [{ ...base, basicAuth: { adminPassword: 'x' } }, 'basicAuth.adminPassword'],
    [{ ...base, avatarStore: 'memory://' }, 'avatarStore'],
    [{ ...base, avatar: { store: 'memory://', prefx: '/a' } }, 'avatar.prefx'],
    [{ ...base, avatar: true }, 'avatar'],
    [{ ...base, url: 'https://x.example.com', cookies: { domain: 'example.com', sessionName: '__Host-S' } }, 'cookies.sessionName'],
    [{ ...base, cookies: { domain: 'a b' } }, 'cookies.domain'],
    [{ ...base, tokenSources: { header: '' } }, 'tokenSources.header'],
    [{ ...base, logger: console }, 'logger'],
    [{ ...base, tokenDurationn: 5 }, 'tokenDurationn'],
    [{ ...base, avatar: { fetch: { maxBytes: -1 } } }, 'avatar.fetch.maxBytes'],
    [{ ...base, avatar: { maxAge: 'long' } }, 'avatar.maxAge'],
    [{ ...base, providers: {} }, 'providers'],
    [{ ...base, providers: [{ kind: 'nope' }] }, 'providers']
  ]
  for (const [opts, option] of cases) {
    const app = Fastify()
    await t.rejects(app.register(authPlugin, opts as never).ready(), { name: 'OptionsError', code: 'GATEHOUSE_OPTION', option }, option)
    await app.close()
  }
})

t.test('the root hands avatar options to the avatar plugin (maxAge included)', async (t) => {
  const { app, base: b } = await listen(async (a) => {
    await a.register(authPlugin, { ...base, avatar: { maxAge: 60_000, prefix: '/pics' }, providers: [{ kind: 'direct', name: 'local', checker: () => true }] })
  })
  t.teardown(() => app.close())
  const c = client(b)
  const user = await (await c.fetch('/auth/local/login', { method: 'POST', json: { user: 'u', passwd: 'p' } })).json() as { picture: string }
  t.match(user.picture, /^http:\/\/localhost:8080\/pics\/[0-9a-f]{40}\.image$/)
  const pic = await c.fetch(new URL(user.picture).pathname)
  t.equal(pic.status, 200)
  t.match(pic.headers.get('cache-control'), /max-age=60\b/)
})

t.test('durations accept ms and strings; Secure cookies on https urls; custom names and prefix', async (t) => {
  const { app, base: b } = await listen(async (a) => {
    await a.register(authPlugin, {
      secret: () => 'abc-abc-abc-0123456789abcdef-0123456789abcdef',
      url: 'https://example.test',
      session: { tokenDuration: 60_000, maxAge: '2h' },
      authPrefix: '/login-api',
      cookies: { sessionName: 'SID', xsrfName: 'CSRF', sameSite: 'Strict' },
      xsrf: { headerName: 'X-CSRF' },
      providers: [{ kind: 'direct', name: 'local', checker: () => true }]
    })
    a.get('/p', { preHandler: a.auth.authenticate }, async () => 'ok')
  })
  t.teardown(() => app.close())
  const c = client(b)
  const r = await c.fetch('/login-api/local/login', { method: 'POST', json: { user: 'u', passwd: 'p' } })
  t.equal(r.status, 200)
  const sid = c.jar.cookies.get('SID')!
  t.ok(sid.attrs.secure, 'Secure on https url')
  t.equal(sid.attrs.samesite, 'Strict')
  t.equal(sid.attrs['max-age'], '7200')
  t.equal((await c.fetch('/p', { headers: { 'x-csrf': c.jar.get('CSRF')! } })).status, 200)
  const claims = await app.auth.tokens.parse(sid.value)
  t.equal(claims.exp - claims.iat, 60)
})

t.test('xsrf.ignoreMethods and xsrf.disable', async (t) => {
  for (const [xsrf, method, expect] of [[{ ignoreMethods: ['GET'] }, 'GET', 200], [{ ignoreMethods: ['GET'] }, 'POST', 401], [{ disable: true }, 'POST', 200]] as const) {
    const { app, base: b } = await listen(async (a) => {
      await a.register(authPlugin, { ...base, xsrf, providers: [{ kind: 'direct', name: 'local', checker: () => true }] })
      a.route({ method: ['GET', 'POST'], url: '/p', preHandler: a.auth.authenticate, handler: async () => 'ok' })
    })
    const c = client(b)
    await c.fetch('/auth/local/login', { method: 'POST', json: { user: 'u', passwd: 'p' } })
    t.equal((await c.fetch('/p', { method })).status, expect, `${JSON.stringify(xsrf)} ${method} without header → ${expect}`)
    await app.close()
  }
})

t.test('cookies.domain: both cookies carry the Domain, default names take __Secure- instead of __Host-', async (t) => {
  const { app, base: b } = await listen(async (a) => {
    await a.register(authPlugin, { ...base, url: 'https://app.example.com', cookies: { domain: 'example.com' }, providers: [{ kind: 'direct', name: 'local', checker: () => true }] })
  })
  t.teardown(() => app.close())
  const c = client(b)
  t.equal((await c.fetch('/auth/local/login', { method: 'POST', json: { user: 'u', passwd: 'p' } })).status, 200)
  t.same([...c.jar.cookies.keys()].sort(), ['__Secure-JWT', '__Secure-XSRF-TOKEN'])
  for (const name of ['__Secure-JWT', '__Secure-XSRF-TOKEN']) t.equal(c.jar.cookies.get(name)!.attrs.domain, 'example.com', name)
  const out = await c.fetch('/auth/logout', { headers: { 'x-xsrf-token': c.jar.get('__Secure-XSRF-TOKEN')! } })
  t.match(out.headers.getSetCookie().join('\n'), /__Secure-JWT=;.*Domain=example\.com/i, 'logout clears the cookie of that Domain')
})

t.test('tokenSources: renamed sources are read, a source set to false is not', async (t) => {
  const { app, base: b } = await listen(async (a) => {
    await a.register(authPlugin, { ...base, tokenSources: { header: 'X-Session', query: false } })
    a.get('/p', { preHandler: a.auth.authenticate }, async (request) => ({ name: request.user!.name }))
  })
  t.teardown(() => app.close())
  const { token } = await app.auth.tokens.create({ user: { name: 'ann', id: 'ann' } })
  t.equal((await fetch(`${b}/p`, { headers: { 'x-session': token } })).status, 200, 'the renamed header')
  t.equal((await fetch(`${b}/p`, { headers: { 'x-jwt': token } })).status, 401, 'the default header name is not read any more')
  t.equal((await fetch(`${b}/p?token=${token}`)).status, 401, 'query: false turns the query parameter off')
})
// That the reference documents every key of every group: test/docs/reference.test.ts.
