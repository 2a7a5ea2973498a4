import t from 'tap'
import { listen } from '../helpers/client.js'
import { recovererPlugin } from '../../plugins/toolkit/recoverer.js'
import { funcLogger } from '../../lib/logger.js'
import { HttpError } from '../../lib/errors.js'

t.test('recoverer: throwing handlers are logged with a stack and answered 500', async (t) => {
  const lines: string[] = []
  const { app, base } = await listen(async (app) => {
    await app.register(async (scope) => {
      await scope.register(recovererPlugin, { logger: funcLogger((l) => lines.push(l)) })
      scope.get('/sync', () => { throw new Error('secret db password in message') })
      scope.get('/async', async () => { await Promise.resolve(); throw new RangeError('async failure') })
      scope.get('/string', async () => { throw 'not an error' as unknown as Error }) // eslint-disable-line no-throw-literal
      scope.get('/client', async () => { throw new HttpError(418, 'teapot', 'short and stout') })
      scope.get('/valid', { schema: { querystring: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } } } }, async () => 'ok')
      scope.get('/fine', async () => 'fine')
    })
  })
  t.teardown(() => app.close())

  const s = await fetch(`${base}/sync`)
  t.equal(s.status, 500)
  t.same(await s.json(), { error: 'internal server error' }, 'no internal message leaks')
  t.equal(lines.length, 1)
  t.match(lines[0], /request panic GET \/sync: Error: secret db password in message/)
  t.match(lines[0], /at .*recoverer\.test\.ts/, 'stack logged')
  t.notMatch(lines[0], /\n/, 'one log record')

  const a = await fetch(`${base}/async`)
  t.equal(a.status, 500)
  t.same(await a.json(), { error: 'internal server error' })
  t.match(lines[1], /RangeError: async failure/)

  const str = await fetch(`${base}/string`)
  t.equal(str.status, 500)
  await str.arrayBuffer()

  const c = await fetch(`${base}/client`)
  t.equal(c.status, 418, 'client errors keep their status')
  t.same(await c.json(), { error: 'teapot', details: 'short and stout' })

  const v = await fetch(`${base}/valid?n=abc`)
  t.equal(v.status, 400)
  const vb = await v.json() as { error: string }
  t.match(vb.error, /must be integer/)
  t.equal(lines.length, 3, 'client errors are not logged as crashes')

  t.equal(await (await fetch(`${base}/fine`)).text(), 'fine')
})
