/**
 * The guards as Fastify hooks (issue 23 items 2 and 3): each one works as `onRequest` (a refused request never
 * reaches body parsing or validation) and as `preHandler`; a refusal is thrown to the app's error handler when the
 * app has one (Fastify's error shape: `statusCode`, `code`), and answered `{error, details?, code}` when it has
 * none, with today's status and headers.
 */
import t from 'tap'
import Fastify, { type FastifyInstance, type onRequestAsyncHookHandler } from 'fastify'
import { authPlugin } from '../../auth.js'
import { coreOf } from '../../plugins/core/signin/internals.js'
import { recordFactor } from '../../lib/login/step-up.js'
import { HttpError } from '../../lib/errors.js'
import { noopLogger } from '../../lib/logging/logger.js'
import { recovererPlugin } from '../../plugins/toolkit/recoverer.js'
import { signIn, type SignedIn } from '../../testing.js'

const SECRET = 'guards-secret-0123456789abcdef-0123456789'
type Guards = Record<string, onRequestAsyncHookHandler>
const HOOKS = ['onRequest', 'preHandler'] as const

/** Every guard, by name, on one app. */
function guardsOf (app: FastifyInstance): Guards {
  const { auth } = app
  return {
    authenticate: auth.authenticate,
    admin: auth.admin,
    rbac: auth.rbac(['editor']),
    recent: auth.recent({ within: '5m' }),
    updateUser: auth.updateUser((u) => u.setStrAttr('seen', 'yes')),
    trace: auth.trace,
    xsrf: auth.xsrf
  }
}

/**
 * An app with, for each guard and hook, `POST /<hook>/<guard>` validating a body `{ n: integer }`. Basic auth
 * as `admin` locks the account out after one failure (a 429 with Retry-After). `errorHandler`: the app's own, or none.
 */
async function guardedApp (errorHandler?: Parameters<FastifyInstance['setErrorHandler']>[0]): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(authPlugin, {
    secret: () => SECRET,
    url: 'http://127.0.0.1',
    basicAuth: { adminPasswd: 'right-password' },
    rateLimit: { failures: { perAccount: 1, lockout: '30s' } }
  })
  if (errorHandler !== undefined) app.setErrorHandler(errorHandler)
  const guards = guardsOf(app)
  const schema = { body: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } }
  for (const hook of HOOKS) {
    for (const [name, guard] of Object.entries(guards)) {
      app.post(`/${hook}/${name}`, { schema, [hook]: guard }, async (request) => ({ user: request.user?.name ?? null, seen: request.user?.strAttr('seen') ?? null }))
    }
  }
  return app
}

/** A wrong basic-auth password, then the answer of the locked-out account. */
async function lockedOut (app: FastifyInstance) {
  const basic = (passwd: string): string => `Basic ${Buffer.from(`admin:${passwd}`).toString('base64')}`
  await app.inject({ method: 'POST', url: '/onRequest/authenticate', headers: { authorization: basic('wrong') }, payload: { n: 1 } })
  return await app.inject({ method: 'POST', url: '/onRequest/authenticate', headers: { authorization: basic('right-password') }, payload: { n: 1 } })
}

const post = async (app: FastifyInstance, url: string, payload: unknown, as?: SignedIn) =>
  await app.inject({ method: 'POST', url, payload: payload as object, ...(as === undefined ? {} : { cookies: { ...as.cookies }, headers: { ...as.headers } }) })

t.test('each guard works as onRequest and as preHandler', async (t) => {
  const app = await guardedApp()
  t.teardown(() => app.close())
  const editor = await signIn(app, { id: 'e1', name: 'ed', role: 'editor', attrs: { admin: true } })
  await recordFactor(coreOf(app).stateStore, editor.claims.jti, 'totp')
  for (const hook of HOOKS) {
    for (const name of ['authenticate', 'admin', 'rbac', 'recent', 'updateUser', 'trace']) {
      const r = await post(app, `/${hook}/${name}`, { n: 1 }, editor)
      t.equal(r.statusCode, 200, `${hook} ${name}: signed in → 200`)
      t.equal(r.json().user, 'ed', `${hook} ${name} attached the user`)
    }
    t.equal((await post(app, `/${hook}/updateUser`, { n: 1 }, editor)).json().seen, 'yes', `${hook} updateUser ran the updater`)
    // The session-less XSRF guard compares the header with the XSRF cookie.
    t.equal((await post(app, `/${hook}/xsrf`, { n: 1 }, editor)).statusCode, 200, `${hook} xsrf: matching header → 200`)
    t.equal((await post(app, `/${hook}/xsrf`, { n: 1 })).statusCode, 403, `${hook} xsrf: no header → 403`)
    t.same((await post(app, `/${hook}/trace`, { n: 1 })).json(), { user: null, seen: null }, `${hook} trace: a guest passes`)
  }
})

t.test('a request refused by an onRequest guard never reaches body parsing or validation', async (t) => {
  const app = await guardedApp()
  t.teardown(() => app.close())
  const reader = await signIn(app, { id: 'r1', name: 'reader' })
  for (const name of ['authenticate', 'admin', 'rbac', 'recent']) {
    const r = await post(app, `/onRequest/${name}`, { n: 'not a number' })
    t.equal(r.statusCode, 401, `onRequest ${name}: invalid body, no session → 401, not 400`)
    t.equal(r.json().code, 'GATEHOUSE_UNAUTHORIZED')
    const broken = await app.inject({ method: 'POST', url: `/onRequest/${name}`, headers: { 'content-type': 'application/json' }, payload: '{broken' })
    t.equal(broken.statusCode, 401, `onRequest ${name}: unparsable body → 401`)
    // As preHandler, validation runs first: the difference the hook's place makes.
    t.equal((await post(app, `/preHandler/${name}`, { n: 'not a number' })).statusCode, 400, `preHandler ${name}: the body is validated first`)
  }
  t.equal((await post(app, '/onRequest/admin', { n: 'x' }, reader)).statusCode, 403, 'a non-admin: 403 before validation')
  t.equal((await post(app, '/onRequest/recent', { n: 'x' }, reader)).json().code, 'GATEHOUSE_STEP_UP', 'no fresh factor: 401 step-up before validation')
  t.equal((await post(app, '/onRequest/xsrf', { n: 'x' })).statusCode, 403, 'xsrf: 403 before validation')
})

t.test('without an error handler of the app\'s, refusals answer {error, details?, code} with today\'s headers', async (t) => {
  const app = await guardedApp()
  t.teardown(() => app.close())
  const reader = await signIn(app, { id: 'r1', name: 'reader' })
  const none = await post(app, '/onRequest/authenticate', { n: 1 })
  t.same(none.json(), { error: 'unauthorized', details: 'not logged in', code: 'GATEHOUSE_UNAUTHORIZED' })
  t.equal(none.headers['cache-control'], 'no-store')
  const admin = await post(app, '/preHandler/admin', { n: 1 }, reader)
  t.equal(admin.statusCode, 403)
  t.same(admin.json(), { error: 'forbidden', details: 'admin only', code: 'GATEHOUSE_FORBIDDEN' })
  const xsrf = await post(app, '/onRequest/xsrf', { n: 1 })
  t.same(xsrf.json(), { error: 'forbidden', details: 'missing or mismatched XSRF header', code: 'GATEHOUSE_XSRF' })
  const bad = await app.inject({ method: 'POST', url: '/onRequest/authenticate', headers: { 'x-jwt': 'garbage' }, payload: { n: 1 } })
  t.equal(bad.statusCode, 401)
  t.equal(bad.json().code, 'GATEHOUSE_TOKEN_INVALID')
  const limited = await lockedOut(app)
  t.equal(limited.statusCode, 429)
  t.equal(limited.json().code, 'GATEHOUSE_RATE_LIMITED')
  t.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After')
})

t.test('an app\'s error handler sees every refusal first, in Fastify\'s error shape, and may reshape it', async (t) => {
  const seen: Array<{ statusCode: unknown; code: unknown; isHttpError: boolean }> = []
  const app = await guardedApp((err: Error & { statusCode?: number; code?: string }, _request, reply) => {
    seen.push({ statusCode: err.statusCode, code: err.code, isHttpError: err instanceof HttpError })
    return reply.code(err.statusCode ?? 500).send({ problem: err.code, status: err.statusCode })
  })
  t.teardown(() => app.close())
  const reader = await signIn(app, { id: 'r1', name: 'reader' })
  for (const hook of HOOKS) {
    const r = await post(app, `/${hook}/authenticate`, { n: 1 })
    t.equal(r.statusCode, 401, `${hook}: the status the handler chose`)
    t.same(r.json(), { problem: 'GATEHOUSE_UNAUTHORIZED', status: 401 }, `${hook}: the handler's body`)
    t.equal(r.headers['cache-control'], 'no-store', `${hook}: the guard's headers are kept`)
    t.same((await post(app, `/${hook}/rbac`, { n: 1 }, reader)).json(), { problem: 'GATEHOUSE_FORBIDDEN', status: 403 })
    t.same((await post(app, `/${hook}/recent`, { n: 1 }, reader)).json(), { problem: 'GATEHOUSE_STEP_UP', status: 401 })
    t.same((await post(app, `/${hook}/xsrf`, { n: 1 })).json(), { problem: 'GATEHOUSE_XSRF', status: 403 })
  }
  t.ok(seen.length >= 8 && seen.every((s) => s.isHttpError && typeof s.statusCode === 'number' && typeof s.code === 'string'), 'each one an HttpError with statusCode and code')
  const limited = await lockedOut(app)
  t.same(limited.json(), { problem: 'GATEHOUSE_RATE_LIMITED', status: 429 })
  t.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After is on the reply the app\'s handler answers with')
})

t.test('an app\'s error handler that passes the error on keeps status and Retry-After (Fastify\'s default answer)', async (t) => {
  const app = await guardedApp((err, _request, reply) => reply.send(err))
  t.teardown(() => app.close())
  const r = await post(app, '/onRequest/authenticate', { n: 1 })
  t.equal(r.statusCode, 401)
  t.equal(r.json().code, 'GATEHOUSE_UNAUTHORIZED')
  const limited = await lockedOut(app)
  t.equal(limited.statusCode, 429)
  t.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After')
})

t.test('the toolkit\'s recoverer as the app\'s error handler answers the package\'s body', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(recovererPlugin, { logger: noopLogger })
  await app.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1', rateLimit: false })
  app.get('/admin', { onRequest: app.auth.admin }, async () => 'admin')
  const reader = await signIn(app, { id: 'r1', name: 'reader' })
  const r = await app.inject({ url: '/admin', cookies: { ...reader.cookies }, headers: { ...reader.headers } })
  t.equal(r.statusCode, 403)
  t.same(r.json(), { error: 'forbidden', details: 'admin only', code: 'GATEHOUSE_FORBIDDEN' })
  t.equal(r.headers['cache-control'], 'no-store')
})

t.test('called back by Fastify, a cached session goes on without a promise; awaited by app code, the guards answer promises', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1', avatar: false })
  type CallbackForm = (request: unknown, reply: unknown, done: (err?: Error) => void) => unknown
  const forms: string[] = []
  for (const name of ['authenticate', 'trace'] as const) {
    const hook = app.auth[name] as unknown as CallbackForm
    app.get(`/callback/${name}`, {
      onRequest (request, reply, done) {
        let called = false
        const returned = hook(request, reply, (err) => { called = true; done(err) })
        forms.push(`${name}: ${returned === undefined ? 'no promise' : 'promise'}, done ${called ? 'before' : 'after'} returning`)
      }
    }, async (request) => ({ user: request.user?.name ?? null }))
    app.get(`/awaited/${name}`, async (request, reply) => {
      const answer = app.auth[name].call(app, request, reply)
      forms.push(`${name} awaited: ${answer instanceof Promise ? 'promise' : 'no promise'}`)
      await answer
      return { user: request.user?.name ?? null }
    })
  }
  await app.ready()
  const s = await signIn(app, { id: 'u1', name: 'ann' })
  for (const name of ['authenticate', 'trace']) {
    const r = await app.inject({ url: `/callback/${name}`, cookies: { ...s.cookies }, headers: { ...s.headers } })
    t.same([r.statusCode, r.json()], [200, { user: 'ann' }], `${name}: the cached session passes`)
    const a = await app.inject({ url: `/awaited/${name}`, cookies: { ...s.cookies }, headers: { ...s.headers } })
    t.same([a.statusCode, a.json()], [200, { user: 'ann' }], `${name} awaited: the user`)
  }
  t.same(forms, [
    'authenticate: no promise, done before returning', 'authenticate awaited: promise',
    'trace: no promise, done before returning', 'trace awaited: promise'
  ])
  const refused = await app.inject({ url: '/callback/authenticate' })
  t.same([refused.statusCode, refused.json().code], [401, 'GATEHOUSE_UNAUTHORIZED'], 'no session: refused through the callback form')
})
