/**
 * Spans of the registered clients' endpoints with a real OpenTelemetry SDK (in-memory exporter) and @fastify/otel:
 * one span per request of `/token` (with its grant type), `/revoke`, `/device/code` and `/authorize`, a child of
 * Fastify's request span, with the client id, the outcome and the RFC 6749 error code; never a token, a code, a
 * user code or a PKCE verifier (checked here and by the suite-wide secret check on every span).
 */
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import type {} from '../../../augment.js'
import { authPlugin } from '../../../auth.js'
import { pkceChallenge } from '../../../lib/pkce.js'
import { resetTelemetry } from '../../../lib/telemetry/index.js'
import { emittedTexts, otelFastify, parentOf, spansNamed, startSdk } from '../../helpers/otel-sdk.js'

const SECRET = 'test-secret-0123456789-0123456789abcdef'
const REDIRECT = 'com.example.app:/callback'
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'

const sdk = startSdk()
t.teardown(async () => { resetTelemetry(); await sdk.shutdown() })

const app: FastifyInstance = await otelFastify(sdk)
await app.register(authPlugin, {
  secret: () => SECRET,
  url: 'http://127.0.0.1',
  providers: [{ kind: 'direct', name: 'local', checker: () => true }],
  clients: [{ id: 'mobile', kind: 'native', redirectUris: [REDIRECT] }, { id: 'cli', kind: 'device' }]
})
app.post<{ Body: { name: string } }>('/app/pair', async (req) => await app.auth.tokens.issuePair(req, 'mobile', { user: { id: `u-${req.body.name}`, name: req.body.name } }))
await app.ready()
t.teardown(() => app.close())

/** Every value a test must never find in a span. */
const secrets: string[] = []

/** A request; resolves once its spans have ended (a turn of the event loop after the answer). */
async function send (method: 'GET' | 'POST', url: string, fields?: Record<string, string>, headers: Record<string, string> = {}) {
  const r = await app.inject({ method, url, headers: fields === undefined ? headers : { ...FORM, ...headers }, ...(fields === undefined ? {} : { payload: new URLSearchParams(fields).toString() }) })
  await new Promise((resolve) => setImmediate(resolve))
  return r
}

/** No attribute of the spans finished so far holds any value of `secrets`; called before each test's spans are reset. */
function noSecrets (t: Test): void {
  const texts = emittedTexts(sdk.spans.getFinishedSpans(), [])
  t.ok(texts.length > 0 && secrets.length > 0, `${secrets.length} values checked against ${texts.length} attribute values`)
  for (const secret of secrets) t.notOk(texts.some((v) => v.includes(secret)), `no attribute holds ${secret.slice(0, 6)}…`)
}

/** The one span `name` of the last request, checked to be a child of @fastify/otel's request span. */
function lastSpan (t: Test, name: string): ReadableSpan {
  const spans = spansNamed(sdk.spans, name)
  const span = spans[spans.length - 1]!
  const parent = sdk.spans.getFinishedSpans().find((s) => s.spanContext().spanId === parentOf(span))
  t.equal(parent?.instrumentationScope.name, '@fastify/otel', `${name}: a child of the request's span`)
  return span
}

t.test('/token: a span per grant with its grant type, client and outcome; refusals carry the RFC 6749 code', async (t) => {
  sdk.spans.reset()
  const pair = (await app.inject({ method: 'POST', url: '/app/pair', payload: { name: 'ann' } })).json()
  secrets.push(pair.access_token, pair.refresh_token)
  const ok = await send('POST', '/auth/token', { grant_type: 'refresh_token', client_id: 'mobile', refresh_token: pair.refresh_token })
  t.equal(ok.statusCode, 200)
  secrets.push(ok.json().access_token, ok.json().refresh_token)
  let span = lastSpan(t, 'gatehouse.token')
  t.same(span.attributes, { 'gatehouse.outcome': 'success', 'gatehouse.client.id': 'mobile', 'gatehouse.grant_type': 'refresh_token' })
  t.equal(span.status.code, 0, 'status unset: the grant succeeded')

  const reused = await send('POST', '/auth/token', { grant_type: 'refresh_token', client_id: 'mobile', refresh_token: pair.refresh_token })
  t.equal(reused.json().error, 'invalid_grant')
  span = lastSpan(t, 'gatehouse.token')
  t.same(span.attributes, { 'gatehouse.outcome': 'failure', 'gatehouse.client.id': 'mobile', 'gatehouse.grant_type': 'refresh_token', 'error.type': 'invalid_grant' })
  t.equal(span.status.code, 2, 'status ERROR')

  await send('POST', '/auth/token', { grant_type: 'password', client_id: 'mobile', username: 'ann', password: 'x' })
  t.same(lastSpan(t, 'gatehouse.token').attributes, { 'gatehouse.outcome': 'failure', 'gatehouse.client.id': 'mobile', 'gatehouse.grant_type': '_OTHER', 'error.type': 'unsupported_grant_type' }, 'an unsupported grant type is not echoed')
  await send('POST', '/auth/token', { grant_type: 'refresh_token', client_id: 'who-knows', refresh_token: 'x' })
  t.same(lastSpan(t, 'gatehouse.token').attributes, { 'gatehouse.outcome': 'failure', 'error.type': 'invalid_client' }, 'an unknown client id is not echoed')
  noSecrets(t)
})

t.test('/revoke and the device grant: spans with their results', async (t) => {
  sdk.spans.reset()
  const pair = (await app.inject({ method: 'POST', url: '/app/pair', payload: { name: 'bob' } })).json()
  secrets.push(pair.access_token, pair.refresh_token)
  await send('POST', '/auth/revoke', { client_id: 'mobile', token: pair.refresh_token })
  t.same(lastSpan(t, 'gatehouse.revoke').attributes, { 'gatehouse.outcome': 'success', 'gatehouse.client.id': 'mobile', 'gatehouse.result': 'revoked' })
  await send('POST', '/auth/revoke', { client_id: 'mobile', token: 'never-issued' })
  t.same(lastSpan(t, 'gatehouse.revoke').attributes, { 'gatehouse.outcome': 'success', 'gatehouse.client.id': 'mobile', 'gatehouse.result': 'unknown_token' })

  const started = (await send('POST', '/auth/device/code', { client_id: 'cli' })).json()
  secrets.push(started.device_code, started.user_code, started.user_code.replace('-', ''))
  t.same(lastSpan(t, 'gatehouse.device.code').attributes, { 'gatehouse.outcome': 'success', 'gatehouse.client.id': 'cli' })
  await send('POST', '/auth/token', { grant_type: DEVICE_GRANT, client_id: 'cli', device_code: started.device_code })
  t.same(lastSpan(t, 'gatehouse.token').attributes, { 'gatehouse.outcome': 'failure', 'gatehouse.client.id': 'cli', 'gatehouse.grant_type': DEVICE_GRANT, 'error.type': 'authorization_pending' })
  await send('POST', '/auth/device/code', { client_id: 'mobile' })
  t.same(lastSpan(t, 'gatehouse.device.code').attributes, { 'gatehouse.outcome': 'failure', 'gatehouse.client.id': 'mobile', 'error.type': 'unauthorized_client' })
  noSecrets(t)
})

t.test('/authorize: the code, the confirmation and the error each a span; the code grant one too', async (t) => {
  sdk.spans.reset()
  const login = await app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'cy', passwd: 'x' } })
  const cookie = login.cookies.map((c) => `${c.name}=${c.value}`).join('; ')
  secrets.push(...login.cookies.map((c) => c.value))
  const verifier = 'w'.repeat(43)
  secrets.push(verifier)
  const query = (extra: Record<string, string> = {}) => `/auth/authorize?${new URLSearchParams({ response_type: 'code', client_id: 'mobile', redirect_uri: REDIRECT, code_challenge: pkceChallenge(verifier), code_challenge_method: 'S256', state: 'st', ...extra }).toString()}`

  const r = await send('GET', query(), undefined, { cookie, 'sec-fetch-site': 'none' })
  const code = new URL(r.headers.location as string).searchParams.get('code')!
  secrets.push(code)
  t.same(lastSpan(t, 'gatehouse.authorize').attributes, { 'gatehouse.outcome': 'success', 'gatehouse.client.id': 'mobile', 'gatehouse.result': 'code' })
  await send('GET', query(), undefined, { cookie, 'sec-fetch-site': 'cross-site' })
  t.same(lastSpan(t, 'gatehouse.authorize').attributes, { 'gatehouse.outcome': 'success', 'gatehouse.client.id': 'mobile', 'gatehouse.result': 'confirmation' })
  await send('GET', query(), undefined, {})
  t.same(lastSpan(t, 'gatehouse.authorize').attributes, { 'gatehouse.outcome': 'success', 'gatehouse.client.id': 'mobile', 'gatehouse.result': 'sign_in' }, 'no session: sent to sign in')
  await send('GET', query({ code_challenge_method: 'plain' }), undefined, { cookie })
  const refused = lastSpan(t, 'gatehouse.authorize')
  t.same(refused.attributes, { 'gatehouse.outcome': 'failure', 'gatehouse.client.id': 'mobile', 'error.type': 'invalid_request' })
  t.equal(refused.status.code, 2)

  const exchanged = await send('POST', '/auth/token', { grant_type: 'authorization_code', client_id: 'mobile', code, redirect_uri: REDIRECT, code_verifier: verifier })
  secrets.push(exchanged.json().access_token, exchanged.json().refresh_token)
  t.same(lastSpan(t, 'gatehouse.token').attributes, { 'gatehouse.outcome': 'success', 'gatehouse.client.id': 'mobile', 'gatehouse.grant_type': 'authorization_code' })
  noSecrets(t)
})

