/**
 * Traces and metrics of a password login, a lockout and a revocation with a real OpenTelemetry SDK (in-memory
 * exporters) registered before the app, and @fastify/otel registered first in the app: every login span is a
 * child of Fastify's request span, state-store calls are children of the login, the attributes follow the
 * semantic conventions and none carries the password, the token or the secret.
 */
import t, { type Test } from 'tap'
import { subscribe } from 'node:diagnostics_channel'
import type { FastifyInstance } from 'fastify'
import type {} from '../../../augment.js'
import { authPlugin } from '../../../auth.js'
import { MemoryStateStore } from '../../../stores/state/memory.js'
import { StateStoreError } from '../../../lib/state-store.js'
import { resetTelemetry } from '../../../lib/telemetry/index.js'
import { AUDIT_CHANNEL, type AuditEvent } from '../../../lib/audit/events.js'
import { emittedTexts, otelFastify, parentOf, spansNamed, startSdk } from '../../helpers/otel-sdk.js'

// From the suite's list (test/helpers/secrets.ts): the suite-wide check looks for them too.
const SECRET = 'test-secret-0123456789-0123456789abcdef'
const PASSWORD = 'alice-secret'
const WRONG = 'wrong-secret'

const sdk = startSdk()
/** Every audit event of the file, in order (a subscriber of the channel, as a SIEM shipper would be). */
const events: AuditEvent[] = []
subscribe(AUDIT_CHANNEL, (e) => { events.push(e as AuditEvent) })
t.teardown(async () => { resetTelemetry(); await sdk.shutdown() })

async function build (extra: Record<string, unknown> = {}): Promise<FastifyInstance> {
  const app = await otelFastify(sdk)
  await app.register(authPlugin, {
    secret: () => SECRET,
    url: 'http://127.0.0.1',
    providers: [{ kind: 'direct', name: 'local', checker: (u: string, p: string) => u === 'alice' && p === PASSWORD }],
    ...extra
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

/** The sum of the counter `name`'s data points whose labels include `labels`. */
async function counter (name: string, labels: Record<string, string>): Promise<number> {
  const points = (await sdk.collect()).get(name) ?? []
  return points.filter((p) => Object.entries(labels).every(([k, v]) => p.attributes[k] === v)).reduce((n, p) => n + (p.value as number), 0)
}

/** The types of the events published since `from`, with their reasons. */
function eventsSince (from: number): string[] {
  return events.slice(from).map((e) => `${e.type}:${e.reason}`)
}

/** Asserts that no span attribute or metric label holds any of `secrets`. */
async function noSecrets (t: Test, secrets: string[]): Promise<void> {
  const texts = emittedTexts(sdk.spans.getFinishedSpans(), (await sdk.collect()).values())
  for (const secret of secrets) t.notOk(texts.some((v) => v.includes(secret)), `no attribute or label holds ${secret.slice(0, 6)}…`)
}

t.test('a password login: its span under Fastify\'s request span, state-store spans under it, its audit event and metrics', async (t) => {
  sdk.spans.reset()
  const app = await build()
  const from = events.length
  const succeeded = await counter('gatehouse.logins', { 'gatehouse.provider': 'local', 'gatehouse.outcome': 'success' })
  const res = await login(app, PASSWORD)
  t.equal(res.statusCode, 200, res.body)
  t.same(eventsSince(from), ['login.succeeded:session_issued'], 'one audit event')
  const user = JSON.parse(res.body) as { id: string }
  t.match(events[from], { type: 'login.succeeded', provider: 'local', outcome: 'success', userId: user.id, requestId: String, ip: String, sessionOnly: false })
  t.equal(await counter('gatehouse.logins', { 'gatehouse.provider': 'local', 'gatehouse.outcome': 'success', 'gatehouse.reason': 'session_issued' }) - succeeded, 1, 'gatehouse.logins counted it')
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

t.test('a lockout: refused logins are failed spans with the error code, the 429 too; the audit events and counters', async (t) => {
  sdk.spans.reset()
  const app = await build()
  const from = events.length
  const before = {
    failed: await counter('gatehouse.logins', { 'gatehouse.outcome': 'failure', 'gatehouse.reason': 'bad_credentials' }),
    locked: await counter('gatehouse.logins', { 'gatehouse.outcome': 'failure', 'gatehouse.reason': 'locked' }),
    lockouts: await counter('gatehouse.lockouts', { 'gatehouse.lockout.scope': 'account' }),
    limited: await counter('gatehouse.rate_limited', { 'gatehouse.reason': 'locked' })
  }
  const statuses: number[] = []
  for (let i = 0; i < 6; i++) statuses.push((await login(app, WRONG)).statusCode)
  t.same(statuses, [403, 403, 403, 403, 403, 429], 'five refusals, then the lockout')
  t.same(eventsSince(from), [
    'login.failed:bad_credentials', 'login.failed:bad_credentials', 'login.failed:bad_credentials', 'login.failed:bad_credentials',
    'lockout.started:failures_on_account', 'login.failed:bad_credentials', 'rate_limited:locked', 'login.failed:locked'
  ], 'the audit events in order: the fifth failure starts the lockout, the sixth attempt is rate limited')
  t.match(events.find((e, i) => i >= from && e.type === 'lockout.started'), { scope: 'account', durationMs: 60_000 })
  t.equal(await counter('gatehouse.logins', { 'gatehouse.outcome': 'failure', 'gatehouse.reason': 'bad_credentials' }) - before.failed, 5, 'five bad credentials counted')
  t.equal(await counter('gatehouse.logins', { 'gatehouse.outcome': 'failure', 'gatehouse.reason': 'locked' }) - before.locked, 1, 'one locked login counted')
  t.equal(await counter('gatehouse.lockouts', { 'gatehouse.lockout.scope': 'account' }) - before.lockouts, 1, 'one lockout counted')
  t.equal(await counter('gatehouse.rate_limited', { 'gatehouse.reason': 'locked' }) - before.limited, 1, 'one 429 counted')
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
  const from = events.length
  const refused = await counter('gatehouse.refusals', { 'gatehouse.event': 'session.refused', 'gatehouse.reason': 'revoked' })
  const res = await login(app, PASSWORD)
  const { header, token, xsrf } = cookiesOf(res)
  const user = JSON.parse(res.body) as { id: string }
  t.equal((await app.inject({ url: '/private', headers: { cookie: header, 'x-xsrf-token': xsrf } })).statusCode, 200)
  sdk.spans.reset()
  const eventsBefore = events.length
  for (let i = 0; i < 3; i++) t.equal((await app.inject({ url: '/private', headers: { cookie: header, 'x-xsrf-token': xsrf } })).statusCode, 200)
  await new Promise((resolve) => setImmediate(resolve))
  t.same(sdk.spans.getFinishedSpans().filter((s) => s.instrumentationScope.name === 'fastify-gatehouse').map((s) => s.name), [],
    'a cached session starts no span of the package (and calls no state store)')
  t.equal(events.length, eventsBefore, 'and publishes no event')
  sdk.spans.reset()
  await app.auth.revokeUser(user.id)
  const calls = sdk.spans.getFinishedSpans().filter((s) => s.name.startsWith('gatehouse.state_store.'))
  t.ok(calls.length > 0, 'revokeUser wrote to the state store')
  t.ok(calls.every((s) => s.status.code !== 2), 'and every call succeeded')
  const after = await app.inject({ url: '/private', headers: { cookie: header, 'x-xsrf-token': xsrf } })
  t.equal(after.statusCode, 401, 'the revoked session is refused')
  t.same(eventsSince(from), ['login.succeeded:session_issued', 'session.revoked:revokeUser', 'session.refused:revoked'], 'the audit events in order')
  t.match(events.at(-2), { by: 'revokeUser', scope: 'user', userId: user.id })
  t.match(events.at(-1), { source: 'cookie', userId: user.id })
  t.equal(await counter('gatehouse.refusals', { 'gatehouse.event': 'session.refused', 'gatehouse.reason': 'revoked' }) - refused, 1, 'the refusal counted')
  await noSecrets(t, [PASSWORD, SECRET, token, xsrf, user.id.slice(6)])
})

t.test('a state store that is down: a 503, its failed span, the unavailable counter', async (t) => {
  const store = new MemoryStateStore()
  let down = false
  const increment = store.increment.bind(store)
  store.increment = async (...args) => {
    if (down) throw new StateStoreError('connection refused')
    return await increment(...args)
  }
  t.teardown(() => store.close())
  const app = await build({ stateStore: store })
  const from = events.length
  const before = await counter('gatehouse.state_store.unavailable', {})
  down = true
  sdk.spans.reset()
  const res = await login(app, PASSWORD)
  t.equal(res.statusCode, 503, res.body)
  t.equal(res.json().code, 'GATEHOUSE_STATE_STORE')
  t.same(eventsSince(from).filter((e) => e.startsWith('state_store.')), ['state_store.unavailable:unavailable'], 'the audit event')
  t.equal(await counter('gatehouse.state_store.unavailable', {}) - before, 1, 'one 503 counted')
  const [failed] = spansNamed(sdk.spans, 'gatehouse.state_store.increment')
  t.equal(failed?.attributes['error.type'], 'GATEHOUSE_STATE_STORE', 'the failed call is an error span')
  t.equal(failed?.status.code, 2)
  const [span] = spansNamed(sdk.spans, 'gatehouse.login.start')
  t.equal(span?.attributes['error.type'], 'GATEHOUSE_STATE_STORE', 'and so is the login')
  const durations = (await sdk.collect()).get('gatehouse.state_store.duration') ?? []
  t.ok(durations.some((p) => p.attributes['error.type'] === 'GATEHOUSE_STATE_STORE'), 'the failed call timed with its error.type')
})

t.test('a verified (e-mail) login: the send is a span under /login, free of the address and the link; the link\'s login too', async (t) => {
  const outbox: string[] = []
  const app = await build({
    providers: [{ kind: 'verify', name: 'mail', template: 'link {{.Token}}', sender: (_a: string, text: string) => { outbox.push(text) } }]
  })
  sdk.spans.reset()
  const from = events.length
  const sent = await app.inject('/auth/mail/login?user=carol&address=carol.private@example.com')
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(sent.statusCode, 200, sent.body)
  const [send] = spansNamed(sdk.spans, 'gatehouse.verify.send')
  const [start] = spansNamed(sdk.spans, 'gatehouse.login.start')
  t.same(send?.attributes, { 'gatehouse.provider': 'mail' }, 'the provider only')
  t.equal(send?.kind, 2, 'CLIENT')
  t.equal(parentOf(send!), start!.spanContext().spanId, 'a child of the /login span')
  const token = outbox.at(-1)!.replace('link ', '')
  const done = await app.inject(`/auth/mail/login?token=${token}`)
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(done.statusCode, 200, done.body)
  t.same(eventsSince(from), ['confirmation.sent:sent', 'login.succeeded:session_issued'])
  const texts = emittedTexts(sdk.spans.getFinishedSpans(), (await sdk.collect()).values())
  for (const secret of [token, 'carol.private', '@example.com']) t.notOk(texts.some((v) => v.includes(secret)), `no attribute or label holds ${secret.slice(0, 8)}…`)
})
