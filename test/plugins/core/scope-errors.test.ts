/**
 * Errors of the auth routes and the app's error handler (issue 23 item 3): the app's handler sees them first,
 * as HttpErrors (`statusCode`, `code`), even when it is set after the package was registered; without one, the
 * answer is `{error, details?, code}` as before.
 */
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { authPlugin } from '../../../auth.js'
import { HttpError } from '../../../lib/errors.js'

const SECRET = 'scope-secret-0123456789abcdef-0123456789ab'

async function app (withHandler: boolean): Promise<{ app: FastifyInstance; seen: unknown[] }> {
  const seen: unknown[] = []
  const app = Fastify()
  await app.register(authPlugin, {
    secret: () => SECRET,
    url: 'http://127.0.0.1',
    rateLimit: false,
    providers: [{ kind: 'direct', name: 'local', checker: (user, passwd) => user === 'ann' && passwd === 'right' }]
  })
  // Set after the package's routes exist: the routes still hand their errors to it.
  if (withHandler) {
    app.setErrorHandler((err: Error & { statusCode?: number; code?: string }, _request, reply) => {
      seen.push(err)
      return reply.code(err.statusCode ?? 500).send({ reshaped: true, code: err.code })
    })
  }
  return { app, seen }
}

t.test('without an app error handler, auth routes answer {error, details?, code}', async (t) => {
  const { app: a } = await app(false)
  t.teardown(() => a.close())
  const bad = await a.inject({ method: 'POST', url: '/auth/logout?all=maybe' })
  t.equal(bad.statusCode, 400)
  t.same(bad.json(), { error: 'bad request', details: 'all must be 1, 0, true or false', code: 'GATEHOUSE_BAD_REQUEST' })
  t.equal(bad.headers['cache-control'], 'no-store')
  const wrong = await a.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'ann', passwd: 'wrong' } })
  t.equal(wrong.statusCode, 403)
  t.equal(wrong.json().code, 'GATEHOUSE_CREDENTIALS')
  t.notOk('reshaped' in wrong.json())
})

t.test('an app error handler sees the auth routes\' errors first, as HttpErrors', async (t) => {
  const { app: a, seen } = await app(true)
  t.teardown(() => a.close())
  const bad = await a.inject({ method: 'POST', url: '/auth/logout?all=maybe' })
  t.equal(bad.statusCode, 400)
  t.same(bad.json(), { reshaped: true, code: 'GATEHOUSE_BAD_REQUEST' })
  t.equal(bad.headers['cache-control'], 'no-store', 'the auth routes\' headers stay')
  const wrong = await a.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'ann', passwd: 'wrong' } })
  t.same(wrong.json(), { reshaped: true, code: 'GATEHOUSE_CREDENTIALS' })
  t.equal(wrong.statusCode, 403)
  const status = await a.inject({ method: 'POST', url: '/auth/local/login', headers: { 'content-type': 'application/json' }, payload: '{broken' })
  t.equal(status.statusCode, 400, 'a body Fastify cannot parse: 400')
  t.same(status.json(), { reshaped: true, code: 'GATEHOUSE_BAD_REQUEST' }, 'as an HttpError of the package\'s code')
  t.ok(seen.length === 3 && seen.every((e) => e instanceof HttpError), 'each one an HttpError')
})
