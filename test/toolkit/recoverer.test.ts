import t from 'tap'
import { listen } from '../helpers/client.js'
import { recovererErrorHandler, recovererPlugin } from '../../plugins/toolkit/recoverer.js'
import { funcLogger } from '../../lib/logger.js'
import Fastify from 'fastify'
import { ErrorCodes, HttpError } from '../../lib/errors.js'

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
