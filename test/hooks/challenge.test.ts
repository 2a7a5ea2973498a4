/**
 * Every 401 the hooks give carries a `WWW-Authenticate` challenge (RFC 9110 §11.6.1, RFC 6750 §3; issue 43, item
 * 12): `Bearer realm="<issuer>"` without credentials or with a cookie, `Basic realm` to refused basic credentials,
 * the RFC 6750 error forms to a bearer token; in both hook stages and through the app's own error handler.
 */
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { authPlugin, type AuthOptions } from '../../auth.js'

const SECRET = 'challenge-tests-secret-0123456789abcdef-0123'
const GUARDS = ['authenticate', 'admin', 'rbac', 'recent'] as const

async function app (opts: Partial<AuthOptions> = {}, errorHandler = false): Promise<FastifyInstance> {
  const a = Fastify()
  await a.register(authPlugin, { secret: SECRET, url: 'http://127.0.0.1', providers: [{ kind: 'direct', name: 'local', checker: () => true }], ...opts } as AuthOptions)
  if (errorHandler) a.setErrorHandler((err: { statusCode?: number, code?: string }, _req, reply) => reply.code(err.statusCode ?? 500).send({ mine: true, code: err.code }))
  const guards = { authenticate: a.auth.authenticate, admin: a.auth.admin, rbac: a.auth.rbac(['editor']), recent: a.auth.recent({ within: '5m' }) }
  for (const name of GUARDS) {
    a.get(`/onRequest/${name}`, { onRequest: guards[name] }, async () => 'ok')
    a.get(`/preHandler/${name}`, { preHandler: guards[name] }, async () => 'ok')
  }
  await a.ready()
  return a
}

t.test('a 401 without credentials names the Bearer scheme and the realm, for every guard in both stages', async (t) => {
  for (const handled of [false, true]) {
    const a = await app({}, handled)
    t.teardown(() => a.close())
    for (const stage of ['onRequest', 'preHandler']) {
      for (const name of GUARDS) {
        const r = await a.inject(`/${stage}/${name}`)
        const where = `${name} (${stage}${handled ? ', app error handler' : ''})`
        t.equal(r.statusCode, 401, where)
        t.equal(r.headers['www-authenticate'], 'Bearer realm="fastify-gatehouse"', `${where}: the challenge`)
      }
    }
  }
})

t.test('the realm is the issuer, quoted; a bad basic credential gets the Basic challenge; a bearer token its error', async (t) => {
  const a = await app({ issuer: 'acme "auth"', basicAuth: { adminPasswd: 'admin-secret-0123456789' } })
  t.teardown(() => a.close())
  let r = await a.inject('/preHandler/authenticate')
  t.equal(r.headers['www-authenticate'], 'Bearer realm="acme \\"auth\\""')
  r = await a.inject({ url: '/preHandler/admin', headers: { authorization: `Basic ${Buffer.from('admin:wrong').toString('base64')}` } })
  t.equal(r.statusCode, 401)
  t.equal(r.headers['www-authenticate'], 'Basic realm="acme \\"auth\\""', 'refused basic credentials: the Basic challenge')
  const off = await app()
  t.teardown(() => off.close())
  r = await off.inject({ url: '/preHandler/admin', headers: { authorization: `Basic ${Buffer.from('admin:wrong').toString('base64')}` } })
  t.equal(r.headers['www-authenticate'], 'Bearer realm="fastify-gatehouse"', 'basic auth off: a Basic header is no credential of ours, no Basic prompt')
  r = await a.inject({ url: '/onRequest/rbac', headers: { authorization: 'Bearer not-a-token' } })
  t.equal(r.headers['www-authenticate'], 'Bearer error="invalid_token"', 'the RFC 6750 form stays')
  r = await a.inject({ url: '/onRequest/rbac', cookies: { JWT: 'garbage' } })
  t.equal(r.statusCode, 401)
  t.equal(r.headers['www-authenticate'], 'Bearer realm="acme \\"auth\\""', 'a refused cookie: no error code')
})

t.test('step-up (recent): a signed-in request without a recent factor gets the challenge too', async (t) => {
  const a = await app()
  t.teardown(() => a.close())
  const { token } = await a.auth.tokens.create({ user: { id: 'u-ann', name: 'ann' } })
  let r = await a.inject({ url: '/preHandler/recent', headers: { authorization: `Bearer ${token}` } })
  t.equal(r.statusCode, 401)
  t.equal(r.json().code, 'GATEHOUSE_STEP_UP')
  t.equal(r.headers['www-authenticate'], 'Bearer realm="fastify-gatehouse", error="insufficient_user_authentication"', 'RFC 9470 for a bearer token')
  r = await a.inject({ url: '/preHandler/recent', headers: { 'x-jwt': token } })
  t.equal(r.statusCode, 401)
  t.equal(r.headers['www-authenticate'], 'Bearer realm="fastify-gatehouse"')
})
