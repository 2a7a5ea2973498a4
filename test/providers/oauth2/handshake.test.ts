/** A callback without a usable handshake names the route to start again at (issue 23 item 15). */
import t from 'tap'
import Fastify from 'fastify'
import { authPlugin } from '../../../auth.js'

t.test('the handshake errors name the provider\'s own login route', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(authPlugin, {
    secret: () => 'handshake-test-secret-0123456789-0123456789',
    url: 'http://127.0.0.1',
    authPrefix: '/api/auth',
    providers: [{ kind: 'oauth2', name: 'github', cid: 'id', csecret: 'secret' }]
  })
  const missing = await app.inject('/api/auth/github/callback?code=c&state=s')
  t.equal(missing.statusCode, 400)
  t.same(missing.json(), {
    error: 'no login in progress',
    details: 'the login handshake cookie is missing; start again at /api/auth/github/login',
    code: 'GATEHOUSE_HANDSHAKE'
  })
  const forged = await app.inject({ url: '/api/auth/github/callback?code=c&state=s', cookies: { 'gatehouse-oauth2-github': 'forged' } })
  t.equal(forged.statusCode, 403)
  t.same(forged.json(), { error: 'login handshake expired or invalid', details: 'start again at /api/auth/github/login', code: 'GATEHOUSE_HANDSHAKE' })
})
