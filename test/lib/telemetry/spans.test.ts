/**
 * The outbound span (lib/http/request.ts through lib/telemetry/spans.ts) with a real SDK: one CLIENT span per
 * call with the semantic-convention attributes, `url.full` without user info or query values, the Bot API's
 * token kept out of the path, `error.type` from the status or the failure; and no span, no API loaded, when the
 * API is not installed.
 */
import t from 'tap'
import { createServer } from 'node:http'
import { Deadline, outboundRequest } from '../../../lib/http/request.js'
import { driverResolution } from '../../../lib/optional-driver.js'
import { enableTelemetry, errorType, loginStep, resetTelemetry, telemetry, traceUrl } from '../../../lib/telemetry/index.js'
import { httpClientAttributes } from '../../../lib/telemetry/spans.js'
import { TelegramBotApi } from '../../../providers/telegram/bot-api.js'
import { spansNamed, startSdk } from '../../helpers/otel-sdk.js'

const sdk = startSdk()
t.teardown(async () => { resetTelemetry(); await sdk.shutdown() })
t.ok(enableTelemetry(), 'telemetry on: an SDK is registered')

const server = createServer((req, res) => {
  if (req.url!.startsWith('/missing')) { res.statusCode = 404; res.end('no'); return }
  res.setHeader('content-type', 'application/json')
  res.end(JSON.stringify({ ok: true, result: { id: 1, is_bot: true, first_name: 'bot' } }))
})
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
const port = (server.address() as { port: number }).port
t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))

async function call (url: string, span?: string): Promise<number> {
  const deadline = new Deadline(5000)
  try {
    return (await outboundRequest(new URL(url), { deadline, maxBytes: 1 << 16, ...(span === undefined ? {} : { span }) })).status
  } finally {
    deadline.clear()
  }
}

t.test('traceUrl: no user info, no query value, no fragment; a given path replaces the real one', async (t) => {
  t.equal(traceUrl(new URL('https://user:pw@idp.example:8443/token?code=abc&state=xyz#frag')), 'https://idp.example:8443/token?code=REDACTED&state=REDACTED')
  t.equal(traceUrl(new URL('http://127.0.0.1/bot123:SECRET/getMe'), '/botREDACTED/getMe'), 'http://127.0.0.1/botREDACTED/getMe')
  t.equal(traceUrl(new URL('http://h/p')), 'http://h/p')
})

t.test('httpClientAttributes: the default port of the scheme', async (t) => {
  t.same(httpClientAttributes(new URL('https://idp.example/token'), 'POST'), { 'http.request.method': 'POST', 'url.full': 'https://idp.example/token', 'server.address': 'idp.example', 'server.port': 443 })
  t.equal(httpClientAttributes(new URL('http://[::1]/x'), 'GET')['server.port'], 80)
  t.equal(httpClientAttributes(new URL('http://[::1]/x'), 'GET')['server.address'], '::1', 'an IPv6 address without its brackets')
})

t.test('a login step answered with a 4xx without throwing is a failed span', async (t) => {
  sdk.spans.reset()
  t.equal(await loginStep('local', 'start', { statusCode: 404 }, async () => 'answered'), 'answered')
  const [span] = spansNamed(sdk.spans, 'gatehouse.login.start')
  t.equal(span?.attributes['error.type'], '404')
  t.equal(span?.status.code, 2)
})

t.test('errorType: outbound reason, package code, class name, _OTHER', async (t) => {
  const { OutboundError } = await import('../../../lib/http/deadline.js')
  const { HttpError } = await import('../../../lib/errors.js')
  t.equal(errorType(new OutboundError('timeout', 'x')), 'timeout')
  t.equal(errorType(new HttpError(502, 'bad', undefined, 'GATEHOUSE_UPSTREAM')), 'GATEHOUSE_UPSTREAM')
  t.equal(errorType(new TypeError('x')), 'TypeError')
  t.equal(errorType('string'), '_OTHER')
})

t.test('one CLIENT span per outbound call, with the semantic-convention attributes and the query values redacted', async (t) => {
  sdk.spans.reset()
  t.equal(await call(`http://127.0.0.1:${port}/token?code=one-time-code-81f2&client_secret=shh-5a1c`, 'gatehouse.oauth2.token'), 200)
  const [span] = spansNamed(sdk.spans, 'gatehouse.oauth2.token')
  t.ok(span)
  t.equal(span!.kind, 2, 'CLIENT')
  t.same(span!.attributes, {
    'http.request.method': 'GET',
    'url.full': `http://127.0.0.1:${port}/token?code=REDACTED&client_secret=REDACTED`,
    'server.address': '127.0.0.1',
    'server.port': port,
    'http.response.status_code': 200
  })
})

t.test('a 404 answer and an unreachable peer set error.type', async (t) => {
  sdk.spans.reset()
  t.equal(await call(`http://127.0.0.1:${port}/missing`), 404)
  const [notFound] = spansNamed(sdk.spans, 'gatehouse.http')
  t.equal(notFound!.attributes['error.type'], '404')
  t.equal(notFound!.status.code, 2)
  sdk.spans.reset()
  const closed = createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const deadPort = (closed.address() as { port: number }).port
  await new Promise<void>((resolve) => closed.close(() => resolve()))
  await t.rejects(call(`http://127.0.0.1:${deadPort}/`), { name: 'OutboundError' })
  const [failed] = spansNamed(sdk.spans, 'gatehouse.http')
  t.equal(failed!.attributes['error.type'], 'unreachable')
})

t.test('the Bot API: the span shows the method, never the token in the path', async (t) => {
  sdk.spans.reset()
  const token = '123456:bot-token-secret-9d8e'
  const api = new TelegramBotApi({ token, apiUrl: `http://127.0.0.1:${port}`, requestTimeoutMs: 5000 })
  await api.getMe()
  const [span] = spansNamed(sdk.spans, 'gatehouse.telegram.bot_api')
  t.equal(span!.attributes['url.full'], `http://127.0.0.1:${port}/botREDACTED/getMe`)
  t.notOk(JSON.stringify(span!.attributes).includes('bot-token-secret'), 'no attribute holds the token')
})

t.test('without the API installed: telemetry stays off, nothing is loaded, calls are untraced', async (t) => {
  resetTelemetry()
  const resolve = driverResolution.resolve
  driverResolution.resolve = (name) => { throw Object.assign(new Error(`Cannot find module '${name}'`), { code: 'MODULE_NOT_FOUND' }) }
  t.teardown(() => { driverResolution.resolve = resolve; enableTelemetry() })
  t.equal(enableTelemetry(), undefined)
  t.equal(telemetry.state, undefined)
  sdk.spans.reset()
  t.equal(await call(`http://127.0.0.1:${port}/x`), 200)
  t.equal(sdk.spans.getFinishedSpans().length, 0, 'no span')
})
