/**
 * Token sources for clients without cookies: `Authorization: Bearer` (RFC 6750) on by default with its
 * `WWW-Authenticate` challenge, the query token off by default (ASVS 5.0 14.2.1) and back on with
 * `tokenSources.query`, the app's own extractor, and header refresh (go-pkgz `SendJWTHeader`).
 */
import t from 'tap'
import Fastify from 'fastify'
import FakeTimers from '@sinonjs/fake-timers'
import { authPlugin } from '../../../auth.js'
import { SECRET, sessionApp, tokenOf } from '../../helpers/session-app.js'

const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })

t.test('a bearer token signs the request in without the XSRF header; a refused one answers the RFC 6750 challenge', async (t) => {
  const s = await sessionApp({}, (app) => {
    app.get('/admin', { preHandler: app.auth.admin }, async () => ({ ok: true }))
  })
  t.teardown(s.close)
  const token = tokenOf(await s.login('ann'))
  let r = await s.app.inject({ url: '/private', headers: bearer(token) })
  t.equal(r.statusCode, 200)
  t.same(r.json(), { name: 'ann' })
  t.equal(r.headers['www-authenticate'], undefined)
  r = await s.app.inject({ url: '/private', headers: { authorization: `bearer ${token}` } })
  t.equal(r.statusCode, 200, 'the scheme is case-insensitive')

  r = await s.app.inject({ url: '/private', headers: bearer(`${token.slice(0, -2)}xx`) })
  t.equal(r.statusCode, 401)
  t.equal(r.headers['www-authenticate'], 'Bearer error="invalid_token"')
  t.equal(r.headers['cache-control'], 'no-store')
  t.equal(r.json().code, 'GATEHOUSE_TOKEN_INVALID')

  r = await s.app.inject({ url: '/private', headers: { authorization: 'Bearer not a token' } })
  t.equal(r.statusCode, 401, 'a malformed bearer value is no token')
  t.equal(r.headers['www-authenticate'], 'Bearer error="invalid_token"')

  r = await s.app.inject({ url: '/admin', headers: bearer(token) })
  t.equal(r.statusCode, 403, 'a non-admin bearer token on an admin route')
  t.equal(r.headers['www-authenticate'], 'Bearer error="insufficient_scope"')

  r = await s.app.inject({ url: '/private', cookies: { JWT: token } })
  t.equal(r.statusCode, 401, 'the cookie still needs its XSRF header')
  t.equal(r.headers['www-authenticate'], 'Bearer realm="fastify-gatehouse"', 'a cookie request gets the challenge without an error code')

  await s.app.auth.revokeSession((await s.tokens.parse(token)).jti)
  r = await s.app.inject({ url: '/private', headers: bearer(token) })
  t.equal(r.statusCode, 401, 'a revoked session is refused as a bearer token at once')
  t.equal(r.json().code, 'GATEHOUSE_SESSION_REVOKED')
  t.equal(r.headers['www-authenticate'], 'Bearer error="invalid_token"')
})

t.test('tokenSources.bearer: false reads no Authorization header', async (t) => {
  const s = await sessionApp({ tokenSources: { bearer: false } })
  t.teardown(s.close)
  const token = tokenOf(await s.login('ann'))
  t.equal((await s.app.inject({ url: '/private', headers: bearer(token) })).statusCode, 401)
  t.equal((await s.app.inject({ url: '/private', headers: { 'x-jwt': token } })).statusCode, 200)
})

t.test('the query token is off by default; tokenSources.query turns it back on', async (t) => {
  const off = await sessionApp()
  t.teardown(off.close)
  const token = tokenOf(await off.login('ann'))
  let r = await off.app.inject({ url: `/whoami?token=${token}` })
  t.same(r.json(), { user: null }, 'a token in the URL is not read')
  t.equal((await off.app.inject({ url: `/private?token=${token}` })).statusCode, 401)

  for (const query of [true, 'jwt'] as const) {
    const on = await sessionApp({ tokenSources: { query } })
    t.teardown(on.close)
    const name = query === true ? 'token' : query
    r = await on.app.inject({ url: `/private?${name}=${tokenOf(await on.login('bob'))}` })
    t.equal(r.statusCode, 200, `query: ${String(query)}`)
  }
})

t.test('tokenSources.extract finds the token where the app keeps it, before any other source', async (t) => {
  const s = await sessionApp({ tokenSources: { extract: (request) => request.headers['x-app-session'] as string | undefined } })
  t.teardown(s.close)
  const ann = tokenOf(await s.login('ann'))
  const bob = tokenOf(await s.login('bob'))
  let r = await s.app.inject({ url: '/private', headers: { 'x-app-session': ann, ...bearer(bob) } })
  t.same(r.json(), { name: 'ann' })
  r = await s.app.inject({ url: '/private', headers: { 'x-app-session': '', ...bearer(bob) } })
  t.same(r.json(), { name: 'bob' }, 'an empty answer falls through to the next source')
})

t.test('an expired header or bearer token is refused unless headerRefresh; then its successor comes back in X-JWT', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const session = { tokenDuration: '15m', maxAge: '1d', idleTimeout: '1h' }
  const plain = await sessionApp({ session })
  t.teardown(plain.close)
  const refreshing = await sessionApp({ session, tokenSources: { headerRefresh: true } })
  t.teardown(refreshing.close)
  const expired = tokenOf(await plain.login('ann'))
  const login = await refreshing.app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'ann', passwd: 'x' } })
  const issued = login.headers['x-jwt'] as string
  t.ok(issued, 'a login answers the token in X-JWT under headerRefresh')
  // A refresh spends the token it refreshes: one session for each header.
  const issuedToo = (await refreshing.app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'ann', passwd: 'x' } })).headers['x-jwt'] as string
  t.equal(login.headers['cache-control'], 'no-store')
  t.notOk((await plain.app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'ann', passwd: 'x' } })).headers['x-jwt'], 'and not without it')
  clock.tick(20 * 60_000)

  let r = await plain.app.inject({ url: '/private', headers: bearer(expired) })
  t.equal(r.statusCode, 401)
  t.equal(r.json().code, 'GATEHOUSE_TOKEN_EXPIRED')
  t.equal(r.headers['x-jwt'], undefined)

  for (const [token, headers] of [[issued, bearer(issued)], [issuedToo, { 'x-jwt': issuedToo }]] as const) {
    r = await refreshing.app.inject({ url: '/private', headers })
    t.equal(r.statusCode, 200, `refreshed: ${Object.keys(headers)[0]!}`)
    const next = r.headers['x-jwt'] as string
    t.ok(next !== undefined && next !== token, 'the new token in X-JWT')
    t.equal(r.headers['cache-control'], 'no-store')
    t.same(r.headers['set-cookie'], undefined, 'no cookie for a header client')
    const claims = await refreshing.tokens.parse(next)
    t.equal(claims.jti, (await refreshing.tokens.parse(token, { allowExpired: true })).jti, 'the same session')
  }
  r = await refreshing.app.inject({ url: `/private?token=${issued}`, headers: {} })
  t.equal(r.statusCode, 401, 'the query source stays off')

  const idle = (await refreshing.app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'ann', passwd: 'x' } })).headers['x-jwt'] as string
  clock.tick(2 * 3_600_000)
  r = await refreshing.app.inject({ url: '/private', headers: bearer(idle) })
  t.equal(r.statusCode, 401, 'idle past session.idleTimeout: no refresh')
  t.equal(r.json().code, 'GATEHOUSE_SESSION_EXPIRED')
})

t.test('the query token stays unrefreshable under headerRefresh', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const s = await sessionApp({ session: { tokenDuration: '15m' }, tokenSources: { headerRefresh: true, query: true } })
  t.teardown(s.close)
  const token = tokenOf(await s.login('ann'))
  clock.tick(20 * 60_000)
  const r = await s.app.inject({ url: `/private?token=${token}` })
  t.equal(r.statusCode, 401)
  t.equal(r.json().code, 'GATEHOUSE_TOKEN_EXPIRED')
})

t.test('bad tokenSources options are refused at registration, naming the option', async (t) => {
  for (const [tokenSources, option] of [
    [{ bearer: 'yes' }, 'tokenSources.bearer'],
    [{ extract: 'x-session' }, 'tokenSources.extract'],
    [{ headerRefresh: 1 }, 'tokenSources.headerRefresh'],
    [{ query: 5 }, 'tokenSources.query'],
    [{ cookie: 'JWT' }, 'tokenSources.cookie']
  ] as const) {
    const app = Fastify()
    t.teardown(() => app.close())
    await t.rejects(app.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1', tokenSources } as never).ready(), { code: 'GATEHOUSE_OPTION', option }, option)
  }
})

t.test('a malformed Authorization: Bearer value is no token, cached session or not: the cookie session is read, with its XSRF rule', async (t) => {
  const s = await sessionApp()
  t.teardown(s.close)
  const c = await s.login('ann')
  const token = tokenOf(c)
  const xsrf = c.jar.get('XSRF-TOKEN')!
  // The cookie's token is in the verified-session cache (the login put it there); each value below is not a
  // b64token (RFC 6750 §2.1), whether what follows "Bearer " is that cached token spoiled or not a token at all.
  for (const value of [`Bearer ${token} x`, `Bearer ${token}"`, `Bearer  ${token}`, 'Bearer a b', `Bearer ${token.slice(0, 20)} ${token.slice(20)}`]) {
    const cookie = `JWT=${token}; XSRF-TOKEN=${xsrf}`
    let r = await s.app.inject({ url: '/private', headers: { authorization: value, cookie, 'x-xsrf-token': xsrf } })
    t.equal(r.statusCode, 200, `signed in by the cookie: ${value.slice(0, 24)}…`)
    r = await s.app.inject({ url: '/private', headers: { authorization: value, cookie } })
    t.equal(r.statusCode, 401, 'and the cookie needs its XSRF header')
    t.equal(r.json().code, 'GATEHOUSE_XSRF')
  }
  const r = await s.app.inject({ url: '/private', headers: { authorization: `BEARER ${token}` } })
  t.equal(r.statusCode, 200, 'the cached token itself, the scheme in capitals: a Bearer session, no XSRF header')
})
