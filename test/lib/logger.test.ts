import t from 'tap'
import { Writable } from 'node:stream'
import Fastify from 'fastify'
import { funcLogger, noopLogger, pinoLogger, stdLogger } from '../../lib/logging/logger.js'
import { authPlugin } from '../../auth.js'
import { client, listen } from '../helpers/client.js'
import { coreOf } from '../../plugins/core/signin/internals.js'

function sink (): { stream: Writable; text: () => string } {
  const chunks: string[] = []
  return { stream: new Writable({ write (c, _e, cb) { chunks.push(String(c)); cb() } }), text: () => chunks.join('') }
}

t.test('adapters format printf-style and keep one record per call', async (t) => {
  const lines: string[] = []
  const f = funcLogger((l) => lines.push(l))
  f.logf('[INFO] %s logged in from %v, %d tries, %j', 'alice', '10.0.0.1', '3', { a: 1 })
  f.logf('extra args', 1, 'two')
  f.logf('100%% done')
  f.logf('forged\n[ERROR] admin logged in\r\nreally')
  t.same(lines, [
    '[INFO] alice logged in from 10.0.0.1, 3 tries, {"a":1}',
    'extra args 1 two',
    '100% done',
    'forged [ERROR] admin logged in really'
  ])
  const s = sink()
  stdLogger(s.stream).logf('hello %s', 'world')
  t.equal(s.text(), 'hello world\n')
  noopLogger.logf('nothing %s', 'at all')

  const p = sink()
  const app = Fastify({ logger: { level: 'info', stream: p.stream } })
  pinoLogger(app.log).logf('via %s', 'pino')
  await app.close()
  t.match(JSON.parse(p.text().trim().split('\n').find((l) => l.includes('via'))!), { level: 30, msg: 'via pino' })
})

t.test('the logger option receives the package\'s log lines, never a password', async (t) => {
  const lines: string[] = []
  const { app, base } = await listen(async (a) => {
    await a.register(authPlugin, { secret: () => 'logger-secret-1-0123456789abcdef', url: 'http://127.0.0.1', logger: funcLogger((l) => lines.push(l)) })
    a.auth.addDirectProvider('boom', () => { throw new Error('database unreachable') })
  })
  t.teardown(() => app.close())
  const r = await client(base).fetch('/auth/boom/login', { method: 'POST', json: { user: 'alice', passwd: 'hunter2-secret' } })
  t.equal(r.status, 503)
  t.ok(lines.some((l) => l.includes('database unreachable')), 'failure logged')
  t.notOk(lines.some((l) => l.includes('hunter2-secret')), 'password not logged')
})

t.test('an avatar proxy that throws costs the picture, not the login', async (t) => {
  const lines: string[] = []
  const { app, base } = await listen(async (a) => {
    await a.register(authPlugin, { secret: () => 'avatar-throws-1-0123456789abcdef', url: 'http://127.0.0.1', logger: funcLogger((l) => lines.push(l)), providers: [{ kind: 'direct', name: 'local', checker: () => true }] })
    coreOf(a).avatar = { save: async () => { throw new Error('disk full') } }
  })
  t.teardown(() => app.close())
  const r = await client(base).fetch('/auth/local/login', { method: 'POST', json: { user: 'ann', passwd: 'x' } })
  t.equal(r.status, 200)
  const body = await r.json() as { name: string; picture?: string }
  t.equal(body.name, 'ann')
  t.equal(body.picture, undefined)
  t.ok(lines.some((l) => l.includes('disk full')), 'failure logged')
})
