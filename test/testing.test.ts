/**
 * `fastify-gatehouse/testing` (issue 23 item 8): `signIn(app, user)` gives a host's tests a signed-in user for
 * `inject`, with no login; the cookie names and header follow the app's options.
 */
import t from 'tap'
import Fastify from 'fastify'
import { authPlugin } from '../auth.js'
import { signIn } from '../testing.js'

const SECRET = 'testing-secret-0123456789abcdef-0123456789'

t.test('a guarded route answers 200 with signIn\'s cookies and header, 401 without', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1' })
  app.post('/notes', { onRequest: app.auth.authenticate }, async (request) => ({ by: app.auth.mustGetUser(request).name, role: request.user?.role }))
  const { cookies, headers, token, claims } = await signIn(app, { id: 'u1', name: 'ann', role: 'editor' })
  t.same(Object.keys(cookies).sort(), ['JWT', 'XSRF-TOKEN'])
  t.same(headers, { 'x-xsrf-token': claims.jti })
  t.equal(cookies.JWT, token)
  const ok = await app.inject({ method: 'POST', url: '/notes', cookies: { ...cookies }, headers: { ...headers }, payload: { text: 'hi' } })
  t.equal(ok.statusCode, 200)
  t.same(ok.json(), { by: 'ann', role: 'editor' })
  t.equal((await app.inject({ method: 'POST', url: '/notes', payload: { text: 'hi' } })).statusCode, 401, 'no session: 401')
  t.equal((await app.inject({ method: 'POST', url: '/notes', cookies: { ...cookies }, payload: { text: 'hi' } })).statusCode, 401, 'cookies without the header: 401')
  t.equal((await app.inject({ method: 'POST', url: '/notes', headers: { 'x-jwt': token } })).statusCode, 200, 'the token as a header')
})

t.test('cookie and header names follow the options; aud must be an allowed audience', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(authPlugin, {
    secret: () => SECRET,
    url: 'https://example.com',
    audiences: ['shop'],
    xsrf: { headerName: 'X-Csrf' },
    decoratorName: 'gatehouse'
  })
  const signed = await signIn(app, { id: 'u1', name: 'ann' }, { aud: 'shop', claims: { plan: 'gold' } })
  t.same(Object.keys(signed.cookies).sort(), ['__Host-JWT', '__Host-XSRF-TOKEN'])
  t.same(Object.keys(signed.headers), ['x-csrf'])
  t.same(signed.claims.aud, ['shop'])
  t.equal(signed.claims.plan, 'gold')
  await t.rejects(signIn(app, { id: 'u1', name: 'ann' }, { aud: 'elsewhere' }), { statusCode: 403 }, 'an audience outside audiences')
})
