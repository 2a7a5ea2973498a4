import t from 'tap'
import Fastify from 'fastify'
import { authPlugin } from '../../plugins/auth.js'
import { client, listen } from '../helpers/client.js'

const base = { secret: () => 'abc-abc-abc', url: 'http://localhost:8080' }

t.test('bad options are startup errors naming the option', async (t) => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ url: 'http://x' }, /option "secret" is required/],
    [{ secret: () => 's' }, /option "url" is required/],
    [{ ...base, url: 'not a url' }, /option "url" is not a valid URL/],
    [{ ...base, url: 'ftp://x' }, /option "url" must be http or https/],
    [{ ...base, secret: 42 }, /option "secret" must be a function or an object with get\(\)/],
    [{ ...base, tokenDuration: -5 }, /option "tokenDuration" must be a positive duration/],
    [{ ...base, cookieDuration: '3 weeks' }, /option "cookieDuration" must be a positive duration/],
    [{ ...base, validator: 'yes' }, /option "validator"/],
    [{ ...base, sameSite: 'loose' }, /option "sameSite"/],
    [{ ...base, sameSite: 'None' }, /"None" requires secure cookies/],
    [{ ...base, audiences: 'a' }, /option "audiences" must be a list/],
    [{ ...base, authPrefix: 'auth' }, /option "authPrefix" must be a path/],
    [{ ...base, xsrf: { ignoreMethods: 'GET' } }, /option "xsrf.ignoreMethods"/],
    [{ ...base, logger: console }, /option "logger" must have a logf/],
    [{ ...base, tokenDurationn: 5 }, /option "tokenDurationn" is not a known option/],
    [{ ...base, providers: [{ kind: 'nope' }] }, /option "providers" has an entry of unknown kind "nope"/]
  ]
  for (const [opts, re] of cases) {
    const app = Fastify()
    await t.rejects(app.register(authPlugin, opts as never).ready(), re, re.source)
    await app.close()
  }
})

t.test('durations accept ms and strings; Secure cookies on https urls; custom names and prefix', async (t) => {
  const { app, base: b } = await listen(async (a) => {
    await a.register(authPlugin, {
      secret: () => 'abc-abc-abc',
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
