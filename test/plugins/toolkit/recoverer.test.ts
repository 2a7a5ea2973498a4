import t from 'tap'
import { rawExchange } from '../../helpers/raw-socket.js'
import { listen } from '../../helpers/client.js'
import { recovererErrorHandler, recovererPlugin } from '../../../plugins/toolkit/recoverer.js'
import { funcLogger } from '../../../lib/logging/logger.js'
import Fastify from 'fastify'
import { ErrorCodes, HttpError } from '../../../lib/errors.js'

t.test('recoverer: throwing handlers are logged with a stack and answered 500', async (t) => {
  const lines: string[] = []
  const { app, base } = await listen(async (app) => {
    await app.register(async (scope) => {
      await scope.register(recovererPlugin, { logger: funcLogger((l) => lines.push(l)) })
      scope.get('/sync', () => { throw new Error('secret db password in message') })
      scope.get('/async', async () => { await Promise.resolve(); throw new RangeError('async failure') })
      scope.get('/string', async () => { throw 'not an error' as unknown as Error }) // eslint-disable-line no-throw-literal
      scope.get('/client', async () => { throw new HttpError(418, 'teapot', 'short and stout') })
      scope.get('/client-code', async () => { throw new HttpError(429, 'slow down', undefined, ErrorCodes.RATE_LIMITED) })
      scope.get('/client-precise', async () => { throw new HttpError(403, 'forbidden', 'wrong password', ErrorCodes.CREDENTIALS) })
      scope.get('/fastify-code', async () => { throw Object.assign(new Error('not acceptable'), { statusCode: 406, code: 'FST_SOMETHING' }) })
      scope.get('/valid', { schema: { querystring: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } } } }, async () => 'ok')
      scope.get('/fine', async () => 'fine')
    })
  })
  t.teardown(() => app.close())

  const s = await fetch(`${base}/sync`)
  t.equal(s.status, 500)
  t.same(await s.json(), { error: 'internal server error', code: 'GATEHOUSE_INTERNAL' }, 'no internal message leaks')
  t.equal(lines.length, 1)
  t.match(lines[0], /request panic GET \/sync: Error: secret db password in message/)
  t.match(lines[0], /at .*recoverer\.test\.ts/, 'stack logged')
  t.notMatch(lines[0], /\n/, 'one log record')

  const a = await fetch(`${base}/async`)
  t.equal(a.status, 500)
  t.same(await a.json(), { error: 'internal server error', code: 'GATEHOUSE_INTERNAL' })
  t.match(lines[1], /RangeError: async failure/)

  const str = await fetch(`${base}/string`)
  t.equal(str.status, 500)
  t.same(await str.json(), { error: 'internal server error', code: 'GATEHOUSE_INTERNAL' })

  const c = await fetch(`${base}/client`)
  t.equal(c.status, 418, 'client errors keep their status')
  t.same(await c.json(), { error: 'teapot', details: 'short and stout', code: 'GATEHOUSE_BAD_REQUEST' })
  const cc = await fetch(`${base}/client-code`)
  t.equal(cc.status, 429)
  t.same(await cc.json(), { error: 'slow down', code: 'GATEHOUSE_RATE_LIMITED' })
  const cp = await fetch(`${base}/client-precise`)
  t.equal(cp.status, 403)
  t.same(await cp.json(), { error: 'forbidden', details: 'wrong password', code: 'GATEHOUSE_CREDENTIALS' }, 'an HttpError keeps its precise code')
  const fc = await fetch(`${base}/fastify-code`)
  t.equal(fc.status, 406)
  t.same(await fc.json(), { error: 'not acceptable', code: 'GATEHOUSE_BAD_REQUEST' }, 'codes of other errors are not passed on')

  const v = await fetch(`${base}/valid?n=abc`)
  t.equal(v.status, 400)
  const vb = await v.json() as { error: string, code: string }
  t.match(vb.error, /must be integer/)
  t.equal(vb.code, 'GATEHOUSE_BAD_REQUEST')
  t.equal(lines.length, 3, 'client errors are not logged as crashes')

  t.equal(await (await fetch(`${base}/fine`)).text(), 'fine')
})

t.test('recoverer refuses a logger without logf', async (t) => {
  t.throws(() => recovererErrorHandler({} as never), { code: 'GATEHOUSE_OPTION', option: 'recoverer.logger' })
  const app = Fastify()
  app.register(recovererPlugin, { logger: 'stderr' as never })
  await t.rejects(async () => { await app.ready() }, { code: 'GATEHOUSE_OPTION', option: 'recoverer.logger' })
  await app.close()
})

/** Fails the test instead of waiting forever: `what` must settle within `ms`. */
function within<T> (ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const limit = new Promise<never>((_resolve, reject) => { timer = setTimeout(() => { reject(new Error(`${what}: still pending after ${ms} ms`)) }, ms) })
  return Promise.race([p, limit]).finally(() => { clearTimeout(timer) })
}

/** One keep-alive request on a raw socket; resolves with what arrived once the server closed the connection. */
const cutAnswer = (port: number, path: string): Promise<string> =>
  rawExchange(port, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n`)

t.test('recoverer: a throw after the answer started closes the connection, and app.close() completes', async (t) => {
  const lines: string[] = []
  const app = Fastify()
  await app.register(recovererPlugin, { logger: funcLogger((l) => lines.push(l)) })
  app.get('/sync', (_req, reply) => {
    reply.raw.writeHead(200, { 'content-type': 'text/plain', 'content-length': '1000' })
    reply.raw.write('first part')
    throw new Error('broke mid-body')
  })
  app.get('/async', async (_req, reply) => {
    reply.raw.writeHead(200, { 'content-type': 'text/plain' }) // chunked: the end would be a zero-length chunk
    reply.raw.write('first part')
    await new Promise((resolve) => setImmediate(resolve))
    throw new HttpError(400, 'too late for a client error')
  })
  app.get('/headers-only', async (_req, reply) => {
    reply.raw.writeHead(200, { 'content-type': 'application/json', 'content-length': '50' })
    reply.raw.flushHeaders()
    throw new Error('nothing of the body')
  })
  app.get('/fine', async () => 'fine')
  await app.listen({ port: 0, host: '127.0.0.1' })
  let closed = false
  t.teardown(async () => {
    if (closed) return
    app.server.closeAllConnections() // only after a failure above: do not hang the run
    await app.close()
  })
  const { port } = app.server.address() as { port: number }

  for (const path of ['/sync', '/async', '/headers-only']) {
    const got = await within(5000, `connection of ${path}`, cutAnswer(port, path))
    // Bytes still queued when the connection is cut are dropped (a slow reader must not keep it open).
    if (path === '/async') t.match(got, /^HTTP\/1\.1 200 [^]*first part/, `${path}: what was sent before the throw arrived`)
    t.notMatch(got, /internal server error|GATEHOUSE/, `${path}: no second answer mixed into the body`)
  }
  t.equal(lines.length, 3, 'each logged once')
  t.match(lines[0], /request panic GET \/sync after the answer started \(connection closed\): Error: broke mid-body/)
  t.match(lines[1], /GET \/async after the answer started.*too late for a client error/)

  // Many at once, as a route under load would see them: all closed, none left for app.close() to wait on.
  const all = await within(10000, '30 cut connections', Promise.all(Array.from({ length: 30 }, async () => await cutAnswer(port, '/sync'))))
  t.equal(all.length, 30)
  t.equal(await (await fetch(`http://127.0.0.1:${port}/fine`)).text(), 'fine', 'the server goes on serving')
  await within(5000, 'app.close()', app.close())
  closed = true
  t.pass('app.close() completed')
})
