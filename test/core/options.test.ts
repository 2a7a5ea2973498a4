import t from 'tap'
import Fastify from 'fastify'
import { authPlugin } from '../../plugins/auth.js'
import { client, listen } from '../helpers/client.js'

const base = { secret: () => 'abc-abc-abc-0123456789abcdef-0123456789abcdef', url: 'http://localhost:8080' }

t.test('bad options are startup errors naming the option', async (t) => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ url: 'http://x' }, 'secret'],
    [{ secret: () => 's' }, 'url'],
    [{ ...base, url: 'not a url' }, 'url'],
    [{ ...base, url: 'ftp://x' }, 'url'],
    [{ ...base, secret: 42 }, 'secret'],
    [{ ...base, tokenDuration: -5 }, 'tokenDuration'],
    [{ ...base, cookieDuration: '3 weeks' }, 'cookieDuration'],
    [{ ...base, validator: 'yes' }, 'validator'],
    [{ ...base, sameSite: 'loose' }, 'sameSite'],
    [{ ...base, sameSite: 'None' }, 'sameSite'],
    [{ ...base, audiences: 'a' }, 'audiences'],
    [{ ...base, authPrefix: 'auth' }, 'authPrefix'],
    [{ ...base, xsrf: { ignoreMethods: 'GET' } }, 'xsrf.ignoreMethods'],
    [{ ...base, xsrf: { headerKye: 'X' } }, 'xsrf.headerKye'],
    [{ ...base, logger: console }, 'logger'],
    [{ ...base, tokenDurationn: 5 }, 'tokenDurationn'],
    [{ ...base, avatarFetch: { maxBytes: -1 } }, 'avatar.fetch.maxBytes'],
    [{ ...base, avatarMaxAge: 'long' }, 'avatar.maxAge'],
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
    await a.register(authPlugin, { ...base, avatarMaxAge: 60, avatarPrefix: '/pics', providers: [{ kind: 'direct', name: 'local', checker: () => true }] })
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
      tokenDuration: 60_000,
      cookieDuration: '2h',
      authPrefix: '/login-api',
      jwtCookieName: 'SID',
      xsrf: { cookieName: 'CSRF', headerKey: 'X-CSRF' },
      sameSite: 'Strict',
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
