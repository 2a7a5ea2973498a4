/**
 * Traces of a SAML sign-in with a real OpenTelemetry SDK and @fastify/otel: the login's start and its assertion
 * consumer service are login spans (`gatehouse.login.start`, `gatehouse.login.callback`) under Fastify's request
 * span, a refused response is an error span with its code, and the login counters carry the SAML reasons.
 */
import t from 'tap'
import { authPlugin } from '../../../auth.js'
import { samlProvider } from '../../../index.js'
import { resetTelemetry } from '../../../lib/telemetry/index.js'
import { otelFastify, parentOf, spansNamed, startSdk } from '../../helpers/otel-sdk.js'
import { client } from '../../helpers/client.js'
import { injectFetch } from '../../helpers/app.js'
import { authnRequestOf, b64, IDP_ENTITY, IDP_SSO, signedResponse } from '../../helpers/saml-idp.js'
import { samlKeys } from '../../providers/saml/saml-app.js'

const sdk = startSdk()
t.teardown(async () => { resetTelemetry(); await sdk.shutdown() })
const keys = samlKeys()
const app = await otelFastify(sdk)
await app.register(authPlugin, { secret: () => 'otel-saml-secret-0123456789abcdef-0123', url: 'http://127.0.0.1' })
await app.register(samlProvider, { idp: { entityId: IDP_ENTITY, ssoUrl: IDP_SSO, certs: keys.idp.cert } })
await app.ready()
t.teardown(() => app.close())

async function signIn (key: string): Promise<number> {
  const c = client('http://127.0.0.1', undefined, injectFetch(app))
  const r = await c.fetch('/auth/saml/login')
  const { id } = authnRequestOf(r.headers.get('location')!)
  const acs = 'http://127.0.0.1/auth/saml/acs'
  const ans = await c.fetch('/auth/saml/acs', { method: 'POST', form: { SAMLResponse: b64(signedResponse({ acs, audience: 'http://127.0.0.1/auth/saml/metadata', inResponseTo: id }, key)) } })
  await new Promise((resolve) => setImmediate(resolve))
  return ans.status
}

async function logins (labels: Record<string, string>): Promise<number> {
  const points = (await sdk.collect()).get('gatehouse.logins') ?? []
  return points.filter((p) => Object.entries(labels).every(([k, v]) => p.attributes[k] === v)).reduce((n, p) => n + (p.value as number), 0)
}

t.test('a SAML sign-in: its start and its ACS are login spans under the request spans, and counted', async (t) => {
  sdk.spans.reset()
  t.equal(await signIn(keys.idp.key), 200)
  const [start] = spansNamed(sdk.spans, 'gatehouse.login.start')
  const [acs] = spansNamed(sdk.spans, 'gatehouse.login.callback')
  t.same(start!.attributes, { 'gatehouse.provider': 'saml', 'gatehouse.login.step': 'start' })
  t.same(acs!.attributes, { 'gatehouse.provider': 'saml', 'gatehouse.login.step': 'callback' })
  t.equal(acs!.status.code, 0)
  const parent = sdk.spans.getFinishedSpans().find((s) => s.spanContext().spanId === parentOf(acs!))
  t.equal(parent?.instrumentationScope.name, '@fastify/otel', 'the ACS span is a child of Fastify\'s request span')
  t.equal(await logins({ 'gatehouse.provider': 'saml', 'gatehouse.outcome': 'success' }), 1)
})

t.test('a refused response is an error span with its code, counted with its reason', async (t) => {
  sdk.spans.reset()
  t.equal(await signIn(keys.other.key), 403)
  const [acs] = spansNamed(sdk.spans, 'gatehouse.login.callback')
  t.equal(acs!.status.code, 2)
  t.equal(acs!.attributes['error.type'], 'GATEHOUSE_CREDENTIALS')
  t.equal(await logins({ 'gatehouse.provider': 'saml', 'gatehouse.outcome': 'failure', 'gatehouse.reason': 'saml_signature' }), 1)
})
