import t from 'tap'
import { injectApp } from '../../helpers/app.js'
import {
  decodeJSON, encodeJSON, errorLogger, renderJSON, renderJSONFromBytes, renderJSONWithHTML, sendErrorJSON, wrap, type JSONObject
} from '../../../plugins/toolkit/helpers.js'
import { funcLogger } from '../../../lib/logging/logger.js'
import { recovererPlugin } from '../../../plugins/toolkit/recoverer.js'
import { reject } from '../../../plugins/toolkit/maybe.js'
import { ErrorCodes, HttpError } from '../../../lib/errors.js'
import { Writable } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'

const html = { text: '<script>alert("x")</script> & \u2028 ü' }

t.test('helpers over HTTP', async (t) => {
  const order: string[] = []
  const pinoLines: string[] = []
  const loggerLines: string[] = []
  const logStream = new Writable({ write (chunk, _enc, cb) { pinoLines.push(chunk.toString()); cb() } })
  const errLog = errorLogger(funcLogger((line) => loggerLines.push(line)))
  const step = (name: string) => async (): Promise<void> => { order.push(name) }
  const { app, base, fetch } = await injectApp(async (app) => {
    await app.register(recovererPlugin)
    app.get('/wrapped', wrap(async () => { order.push('handler'); return 'done' }, step('a'), step('b'),
      (_req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) => { order.push('c'); done() }))
    app.get('/wrapped-stop', wrap(async () => { order.push('never'); return 'x' }, step('first'),
      reject(() => true, 401, 'stop'), step('never-hook')))
    app.get('/render', async (_req, reply) => renderJSON(reply.code(201), html))
    app.get('/render-html', async (_req, reply) => renderJSONWithHTML(reply, html))
    app.get('/render-undefined', async (_req, reply) => renderJSON(reply, undefined))
    app.get('/render-cycle', async (_req, reply) => { const o: JSONObject = {}; o.self = o; return renderJSON(reply, o) })
    app.get('/bytes', async (_req, reply) => renderJSONFromBytes(reply, new TextEncoder().encode('{"cached":"ü"}')))
    app.get('/encode', async (_req, reply) => encodeJSON(reply, 202, { accepted: true }))
    app.post('/decode', async (req) => ({ got: decodeJSON(req) }))
    app.post('/decode-shape', async (req) => decodeJSON(req, (v): v is { n: number } => typeof (v as { n?: unknown })?.n === 'number'))
    app.get('/err-4xx', async (req, reply) => sendErrorJSON(reply, req, 409, new Error('already exists'), 'user alice'))
    app.get('/err-5xx', async (req, reply) => sendErrorJSON(reply, req, 503, new Error('db at 10.0.0.5 down'), 'try later'))
    app.get('/err-http', async (req, reply) => sendErrorJSON(reply, req, 502, new HttpError(502, 'upstream failed'), 'provider'))
    app.get('/err-http-code', async (req, reply) =>
      sendErrorJSON(reply, req, 504, new HttpError(504, 'upstream slow', undefined, ErrorCodes.UPSTREAM_TIMEOUT), 'provider'))
    app.get('/err-http-other-status', async (req, reply) =>
      sendErrorJSON(reply, req, 400, new HttpError(403, 'refused', undefined, ErrorCodes.CREDENTIALS)))
    app.get('/err-logger', async (req, reply) => errLog.log(reply, req, 400, 'bad\ninput', 'forged\nline'))
  }, { logger: { level: 'warn', stream: logStream } })
  t.teardown(() => app.close())

  let r = await fetch(`${base}/wrapped`)
  t.equal(await r.text(), 'done')
  t.same(order, ['a', 'b', 'c', 'handler'], 'hooks in the given order, then the handler')
  order.length = 0
  r = await fetch(`${base}/wrapped-stop`)
  t.equal(r.status, 401)
  t.same(await r.json(), { error: 'stop', code: 'GATEHOUSE_UNAUTHORIZED' })
  t.same(order, ['first'], 'a hook that answers stops the chain')

  r = await fetch(`${base}/render`)
  t.equal(r.status, 201, 'status kept')
  t.equal(r.headers.get('content-type'), 'application/json; charset=utf-8')
  const escaped = await r.text()
  t.notMatch(escaped, /[<>&\u2028]/, 'HTML-significant characters escaped')
  t.match(escaped, /\\u003cscript\\u003e/)
  t.same(JSON.parse(escaped), html, 'still the same JSON value')

  r = await fetch(`${base}/render-html`)
  t.equal(r.headers.get('content-type'), 'application/json; charset=utf-8')
  const raw = await r.text()
  t.match(raw, /<script>alert\(\\"x\\"\)<\/script> & \u2028 ü/, 'no HTML escaping, UTF-8')

  r = await fetch(`${base}/render-undefined`)
  t.equal(await r.text(), 'null')
  r = await fetch(`${base}/render-cycle`)
  t.equal(r.status, 500, 'unserialisable data is a server error, not a crash')
  t.same(await r.json(), { error: 'internal server error', code: 'GATEHOUSE_INTERNAL' })

  r = await fetch(`${base}/bytes`)
  t.equal(r.headers.get('content-type'), 'application/json; charset=utf-8')
  t.same(await r.json(), { cached: 'ü' })

  r = await fetch(`${base}/encode`)
  t.equal(r.status, 202)
  t.match(r.headers.get('content-type'), /^application\/json/)
  t.same(await r.json(), { accepted: true })

  const post = (path: string, body: string, type = 'application/json'): Promise<Response> =>
    fetch(base + path, { method: 'POST', headers: { 'content-type': type }, body })
  r = await post('/decode', '{"a":[1,2]}')
  t.same(await r.json(), { got: { a: [1, 2] } })
  r = await post('/decode', '{"a":1}', 'text/plain')
  t.same(await r.json(), { got: { a: 1 } }, 'a text body is parsed too')
  for (const [body, type] of [['{"a":', 'text/plain'], ['not json', 'text/plain'], ['   ', 'text/plain'], ['{"a":', 'application/json'], ["{'a':1}", 'application/json']]) {
    r = await post('/decode', body!, type)
    t.equal(r.status, 400, `invalid: ${JSON.stringify(body)} as ${type}`)
    const b = await r.json() as { error: string, code: string }
    t.type(b.error, 'string')
    t.equal(b.code, 'GATEHOUSE_BAD_REQUEST')
    t.match(r.headers.get('content-type'), /application\/json/)
  }
  r = await post('/decode', '{"a":', 'text/plain')
  t.match(await r.json(), { error: 'invalid JSON', details: /JSON/, code: 'GATEHOUSE_BAD_REQUEST' })
  r = await fetch(`${base}/decode`, { method: 'POST' })
  t.equal(r.status, 400, 'no body')
  t.same(await r.json(), { error: 'invalid JSON', details: 'the request body is empty', code: 'GATEHOUSE_BAD_REQUEST' })
  r = await post('/decode-shape', '{"n":1}')
  t.same(await r.json(), { n: 1 })
  r = await post('/decode-shape', '{"n":"1"}')
  t.equal(r.status, 400)
  t.same(await r.json(), { error: 'invalid JSON', details: 'the body does not have the expected shape', code: 'GATEHOUSE_BAD_REQUEST' })

  r = await fetch(`${base}/err-4xx?token=SECRET`)
  t.equal(r.status, 409)
  t.same(await r.json(), { error: 'already exists', details: 'user alice', code: 'GATEHOUSE_CONFLICT' }, 'a 4xx without its own code answers its status code')
  r = await fetch(`${base}/err-5xx`)
  t.equal(r.status, 503)
  t.same(await r.json(), { error: 'internal server error', details: 'try later', code: 'GATEHOUSE_UNAVAILABLE' }, 'internal message not exposed')
  r = await fetch(`${base}/err-http`)
  t.same(await r.json(), { error: 'upstream failed', details: 'provider', code: 'GATEHOUSE_UPSTREAM' }, 'HttpError messages are public')
  r = await fetch(`${base}/err-http-code`)
  t.equal(r.status, 504)
  t.same(await r.json(), { error: 'upstream slow', details: 'provider', code: 'GATEHOUSE_UPSTREAM_TIMEOUT' }, 'an HttpError keeps its own code')
  r = await fetch(`${base}/err-http-other-status`)
  t.equal(r.status, 400)
  t.same(await r.json(), { error: 'refused', code: 'GATEHOUSE_BAD_REQUEST' }, 'the code follows the status sent when it differs from the error\'s')
  const logged = pinoLines.map((l) => JSON.parse(l) as Record<string, unknown>)
  const conflict = logged.find((l) => l.status === 409)
  t.match(conflict, { level: 40, method: 'GET', path: '/err-4xx', error: 'already exists', details: 'user alice', ip: '127.0.0.1' })
  t.notMatch(pinoLines.join(''), /SECRET/, 'query string not logged')
  t.match(logged.find((l) => l.status === 503), { error: 'db at 10.0.0.5 down' }, 'the log keeps the real message')

  r = await fetch(`${base}/err-logger?passwd=SECRET`)
  t.equal(r.status, 400)
  t.same(await r.json(), { error: 'bad\ninput', details: 'forged\nline', code: 'GATEHOUSE_BAD_REQUEST' })
  t.equal(loggerLines.length, 1)
  t.equal(loggerLines[0], '[WARN] forged line - bad input - 400 (127.0.0.1) - GET /err-logger', 'one line, no query')
})

t.test('bad arguments', async (t) => {
  t.throws(() => wrap(null as never), { code: 'GATEHOUSE_OPTION', option: 'wrap.handler' })
  t.throws(() => wrap(async () => 1, async () => {}, 'x' as never), { code: 'GATEHOUSE_OPTION', option: 'wrap.hooks[1]' })
  t.throws(() => errorLogger({} as never), { code: 'GATEHOUSE_OPTION', option: 'errorLogger.logger' })
  t.throws(() => encodeJSON({} as never, 99, {}), { code: 'GATEHOUSE_OPTION', option: 'encodeJSON.status' })
  t.throws(() => sendErrorJSON({} as never, {} as never, 600, new Error('x')), { code: 'GATEHOUSE_OPTION', option: 'sendErrorJSON.status' })
  t.throws(() => errorLogger(funcLogger(() => {})).log({} as never, {} as never, 99, 'x'), { code: 'GATEHOUSE_OPTION', option: 'errorLogger.log.status' })
})
