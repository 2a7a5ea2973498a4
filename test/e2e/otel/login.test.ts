/**
 * Traces and metrics of a password login, a lockout and a revocation with a real OpenTelemetry SDK (in-memory
 * exporters) registered before the app, and @fastify/otel registered first in the app: every login span is a
 * child of Fastify's request span, state-store calls are children of the login, the attributes follow the
 * semantic conventions and none carries the password, the token or the secret.
 */
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import FastifyOtelInstrumentation from '@fastify/otel'
import type {} from '../../../augment.js'
import { authPlugin } from '../../../plugins/auth.js'
import { resetTelemetry } from '../../../lib/telemetry/index.js'
import { emittedTexts, parentOf, spansNamed, startSdk } from '../../helpers/otel-sdk.js'

const SECRET = 'otel-login-test-secret-0123456789abcdef'
const PASSWORD = 'alice-password-7f3a9c'
const WRONG = 'wrong-guess-5d1e'

const sdk = startSdk()
t.teardown(async () => { resetTelemetry(); await sdk.shutdown() })

async function build (): Promise<FastifyInstance> {
  const app = Fastify()
  const otel = new FastifyOtelInstrumentation()
  otel.setTracerProvider(sdk.tracerProvider)
  await app.register(otel.plugin())
  await app.register(authPlugin, {
    secret: () => SECRET,
    url: 'http://127.0.0.1',
    providers: [{ kind: 'direct', name: 'local', checker: (u: string, p: string) => u === 'alice' && p === PASSWORD }]
  })
  app.get('/private', { preHandler: app.auth.authenticate }, async (req) => ({ name: req.user!.name }))
  await app.ready()
  t.teardown(() => app.close())
  return app
}

/**
 * A login; resolves once its spans have ended too (a span ends when the handler's promise settles, which can be
 * after inject has the answer: one turn of the event loop later).
 */
async function login (app: FastifyInstance, passwd: string) {
  const res = await app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'alice', passwd } })
  await new Promise((resolve) => setImmediate(resolve))
  return res
}

/** The cookie header of a login answer. */
function cookiesOf (res: Awaited<ReturnType<typeof login>>): { header: string, token: string, xsrf: string } {
  const jar = Object.fromEntries(res.cookies.map((c) => [c.name, c.value]))
  return { header: res.cookies.map((c) => `${c.name}=${c.value}`).join('; '), token: jar.JWT!, xsrf: jar['XSRF-TOKEN']! }
}

/** Asserts that no span attribute or metric label holds any of `secrets`. */
async function noSecrets (t: Tap.Test, secrets: string[]): Promise<void> {
  const texts = emittedTexts(sdk.spans.getFinishedSpans(), (await sdk.collect()).values())
  for (const secret of secrets) t.notOk(texts.some((v) => v.includes(secret)), `no attribute or label holds ${secret.slice(0, 6)}…`)
}

t.test('a password login: its span under Fastify\'s request span, state-store spans under it, the duration metric', async (t) => {
  sdk.spans.reset()
  const app = await build()
  const res = await login(app, PASSWORD)
  t.equal(res.statusCode, 200, res.body)
  const [span, ...others] = spansNamed(sdk.spans, 'gatehouse.login.start')
  t.equal(others.length, 0, 'one login span')
  t.same(span!.attributes, { 'gatehouse.provider': 'local', 'gatehouse.login.step': 'start' })
  t.equal(span!.status.code, 0, 'status unset: the login succeeded')
  const parent = sdk.spans.getFinishedSpans().find((s) => s.spanContext().spanId === parentOf(span!))
  t.ok(parent, 'the login span has a parent among the finished spans')
  t.equal(parent!.instrumentationScope.name, '@fastify/otel', 'the parent is a span of @fastify/otel')
  t.equal(parent!.spanContext().traceId, span!.spanContext().traceId, 'one trace per request')

  const store = sdk.spans.getFinishedSpans().filter((s) => s.name.startsWith('gatehouse.state_store.'))
  t.ok(store.length > 0, 'the login called the state store')
  t.ok(store.some((s) => parentOf(s) === span!.spanContext().spanId), 'a state-store span is a child of the login span')
  for (const s of store) {
    t.same(Object.keys(s.attributes), ['db.operation.name'], `${s.name}: the operation only, never the key`)
    t.equal(s.name, `gatehouse.state_store.${String(s.attributes['db.operation.name'])}`)
  }

  const points = (await sdk.collect()).get('gatehouse.login.duration')
  const success = points?.find((p) => p.attributes['gatehouse.outcome'] === 'success' && p.attributes['gatehouse.provider'] === 'local')
  t.ok(success, 'a login duration point for the successful login')
  t.equal((success!.value as { count: number }).count, 1, 'one login timed')
  t.ok((await sdk.collect()).has('gatehouse.state_store.duration'), 'state-store latency recorded')
  const { token, xsrf } = cookiesOf(res)
  await noSecrets(t, [PASSWORD, SECRET, token, xsrf])
})

t.test('a lockout: refused logins are failed spans with the error code, the 429 too', async (t) => {
  sdk.spans.reset()
  const app = await build()
  const statuses: number[] = []
  for (let i = 0; i < 6; i++) statuses.push((await login(app, WRONG)).statusCode)
  t.same(statuses, [403, 403, 403, 403, 403, 429], 'five refusals, then the lockout')
  const spans = spansNamed(sdk.spans, 'gatehouse.login.start')
  t.equal(spans.length, 6)
  t.ok(spans.every((s) => s.status.code === 2), 'every refused login is an error span')
  t.equal(spans[0]!.attributes['error.type'], 'GATEHOUSE_CREDENTIALS', 'bad credentials: the 403 code')
  t.equal(spans[5]!.attributes['error.type'], 'GATEHOUSE_RATE_LIMITED', 'locked: the 429 code')
  const points = (await sdk.collect()).get('gatehouse.login.duration') ?? []
  const failed = points.filter((p) => p.attributes['gatehouse.outcome'] === 'failure')
  t.equal(failed.reduce((n, p) => n + (p.value as { count: number }).count, 0), 6, 'six failed logins timed')
  await noSecrets(t, [WRONG, SECRET])
})

t.test('a revocation: the state-store calls of revokeUser are traced, the revoked session refused', async (t) => {
  sdk.spans.reset()
  const app = await build()
  const res = await login(app, PASSWORD)
  const { header, token, xsrf } = cookiesOf(res)
  const user = JSON.parse(res.body) as { id: string }
  t.equal((await app.inject({ url: '/private', headers: { cookie: header, 'x-xsrf-token': xsrf } })).statusCode, 200)
  sdk.spans.reset()
  await app.auth.revokeUser(user.id)
  const calls = sdk.spans.getFinishedSpans().filter((s) => s.name.startsWith('gatehouse.state_store.'))
  t.ok(calls.length > 0, 'revokeUser wrote to the state store')
  t.ok(calls.every((s) => s.status.code !== 2), 'and every call succeeded')
  const refused = await app.inject({ url: '/private', headers: { cookie: header, 'x-xsrf-token': xsrf } })
  t.equal(refused.statusCode, 401, 'the revoked session is refused')
  await noSecrets(t, [PASSWORD, SECRET, token, xsrf, user.id.slice(6)])
})
