/**
 * The spans of an OIDC login against a real OpenID Provider (`oidc-provider` on 127.0.0.1, PKCE required, RS256
 * ID tokens, its development login pages), with a real OpenTelemetry SDK and @fastify/otel: `/login` and
 * `/callback` are children of Fastify's request spans; the token exchange, the JWKS fetch, the userinfo call and
 * the avatar fetch are CLIENT children of the callback, with `url.full` free of the code, the state and the
 * client secret; discovery is traced at start.
 */
import t from 'tap'
import { subscribe } from 'node:diagnostics_channel'
import { randomBytes } from 'node:crypto'
import Fastify from 'fastify'
import { FastifyOtelInstrumentation } from '@fastify/otel'
import type {} from '../../../augment.js'
import { authPlugin } from '../../../auth.js'
import { oidcProvider } from '../../../providers/index.js'
import { otelRequestHook, resetTelemetry } from '../../../lib/telemetry/index.js'
import { Browser } from '../../helpers/oauth2-browser.js'
import { png } from '../../helpers/pictures.js'
import { startOidcServer } from '../../helpers/oidc-server.js'
import { AUDIT_CHANNEL, type AuditEvent } from '../../../lib/audit/events.js'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { emittedTexts, parentOf, spansNamed, startSdk } from '../../helpers/otel-sdk.js'

const sdk = startSdk()
const events: AuditEvent[] = []
subscribe(AUDIT_CHANNEL, (e) => { events.push(e as AuditEvent) })
t.teardown(async () => { resetTelemetry(); await sdk.shutdown() })

const APP_URL = 'http://app.test'
const CLIENT = { cid: 'gatehouse-otel', csecret: randomBytes(24).toString('base64url') }
const PICTURE = await png(8, 8)

const oidc = await startOidcServer((issuer) => ({
  clients: [{ client_id: CLIENT.cid, client_secret: CLIENT.csecret, redirect_uris: [`${APP_URL}/auth/oidc/callback`], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' }],
  claims: { openid: ['sub'], profile: ['name', 'picture'] },
  findAccount: async (_ctx: unknown, id: string) => ({ accountId: id, claims: async () => ({ sub: id, name: 'Alice Liddell', picture: `${issuer}/picture.png?sig=picture-signature-77aa` }) })
}), (req, res) => {
  if (!req.url!.startsWith('/picture.png')) return false
  res.setHeader('content-type', 'image/png')
  res.end(PICTURE)
  return true
})
t.teardown(oidc.close)
const ISSUER = oidc.issuer

const app = Fastify({ forceCloseConnections: true })
// The package's hook: @fastify/otel's own request span would record the callback's code and state in `url.path`.
const otel = new FastifyOtelInstrumentation({ requestHook: otelRequestHook })
otel.setTracerProvider(sdk.tracerProvider)
await app.register(otel.plugin())
await app.register(authPlugin, {
  secret: () => 'oauth2-test-secret-0123456789abcdef',
  url: APP_URL,
  avatar: { fetch: { allowPrivate: ['127.0.0.1'] } }
})
await app.register(oidcProvider, { name: 'oidc', ...CLIENT, issuer: ISSUER })
await app.listen({ port: 0, host: '127.0.0.1' })
t.teardown(() => app.close())

function browser (): Browser {
  const b = new Browser()
  b.hosts.set('app.test', `http://127.0.0.1:${(app.server.address() as { port: number }).port}`)
  return b
}

t.test('an OIDC login: one trace per request, the provider calls under the callback', async (t) => {
  t.equal(spansNamed(sdk.spans, 'gatehouse.oauth2.discovery').length, 1, 'discovery traced at start')
  sdk.spans.reset()
  const b = browser()
  let nav = await b.navigate(`${APP_URL}/auth/oidc/login`)
  const authorize = new URL(nav.hops[0]!.location!)
  for (let step = 0; step < 4 && nav.res.status === 200 && nav.url.startsWith(ISSUER); step++) {
    nav = await b.submitForm(nav.url, nav.body, /name="login"/.test(nav.body) ? { login: 'alice', password: 'any' } : {})
  }
  t.equal(nav.url.split('?')[0], `${APP_URL}/auth/oidc/callback`)
  t.equal(nav.res.status, 200, nav.body)
  const callbackUrl = new URL(nav.url)
  const code = callbackUrl.searchParams.get('code')!
  const state = authorize.searchParams.get('state')!
  t.ok(code !== '' && state !== '', 'the code and the state of the login')
  await new Promise((resolve) => setImmediate(resolve))
  t.same(events.map((e) => `${e.type}:${e.reason}`), ['login.succeeded:session_issued'], 'one audit event: the login')
  t.match(events[0], { provider: 'oidc', outcome: 'success', userId: JSON.parse(nav.body).id })
  const logins = (await sdk.collect()).get('gatehouse.logins')
  t.same(logins?.map((p) => [p.attributes, p.value]), [[{ 'gatehouse.provider': 'oidc', 'gatehouse.outcome': 'success', 'gatehouse.reason': 'session_issued' }, 1]], 'gatehouse.logins')

  const all = sdk.spans.getFinishedSpans()
  const byId = new Map(all.map((s) => [s.spanContext().spanId, s]))
  const [start] = spansNamed(sdk.spans, 'gatehouse.login.start')
  const [callback] = spansNamed(sdk.spans, 'gatehouse.login.callback')
  t.equal(byId.get(parentOf(start!)!)?.instrumentationScope.name, '@fastify/otel', '/login under its request span')
  t.equal(byId.get(parentOf(callback!)!)?.instrumentationScope.name, '@fastify/otel', '/callback under its request span')
  t.same(callback!.attributes, { 'gatehouse.provider': 'oidc', 'gatehouse.login.step': 'callback' })

  /** The span named `name`, asserted a CLIENT child of the callback's trace with the given path. */
  const call = (name: string, method: string, path: string): void => {
    const [span, ...more] = spansNamed(sdk.spans, name)
    t.ok(span, `${name} traced`)
    t.equal(more.length, 0, `${name} once`)
    t.equal(span!.kind, 2, `${name} is a CLIENT span`)
    t.equal(span!.spanContext().traceId, callback!.spanContext().traceId, `${name} in the callback's trace`)
    let up: ReadableSpan | undefined = span
    while (up !== undefined && up !== callback) up = byId.get(parentOf(up) ?? '')
    t.equal(up, callback, `${name} descends from the callback span`)
    t.equal(span!.attributes['http.request.method'], method)
    t.equal(span!.attributes['url.full'], `${ISSUER}${path}`)
    t.equal(span!.attributes['server.address'], '127.0.0.1')
    t.equal(span!.attributes['http.response.status_code'], 200)
  }
  call('gatehouse.oauth2.token', 'POST', '/token')
  call('gatehouse.oauth2.jwks', 'GET', '/jwks')
  call('gatehouse.oauth2.userinfo', 'GET', '/me')
  call('gatehouse.avatar.fetch', 'GET', '/picture.png?sig=REDACTED')

  const requestSpan = all.find((s) => s.name === 'request' && s.spanContext().traceId === callback!.spanContext().traceId)
  t.equal(requestSpan?.attributes['url.path'], '/auth/oidc/callback', "@fastify/otel's request span: the path alone (otelRequestHook)")
  t.equal(requestSpan?.attributes['url.query'], 'code=REDACTED&state=REDACTED&iss=REDACTED', '… and the query names only')
  const texts = emittedTexts(all, (await sdk.collect()).values())
  texts.push(...events.flatMap((e) => Object.values(e).map(String)))
  for (const secret of [code, state, CLIENT.csecret, 'picture-signature-77aa']) {
    t.notOk(texts.some((v) => v.includes(secret)), `no attribute, label or event field holds ${secret.slice(0, 6)}…`)
  }
})
