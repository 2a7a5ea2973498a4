/**
 * timeout: over real HTTP a slow handler gets 503 JSON at its deadline, and its late answer is dropped; a fast
 * one is untouched. With a fake clock: the deadline exactly, 504 on request, no timer left behind, the hook form.
 * Bad options name the option.
 */
import t from 'tap'
import Fastify from 'fastify'
import FakeTimers from '@sinonjs/fake-timers'
import { timeoutHook, timeoutPlugin } from '../../../toolkit.js'
import { OptionsError } from '../../../lib/errors.js'
import { listen } from '../../helpers/client.js'

t.test('over real HTTP: a slow handler is answered 503 at the deadline, a fast one as it answers', async (t) => {
  let release: () => void = () => {}
  const released = new Promise<void>((resolve) => { release = resolve })
  let lateAnswer: Promise<void> | undefined
  const { app, base } = await listen(async (app) => {
    await app.register(timeoutPlugin, { timeout: 150 })
    app.get('/slow', async (_req, reply) => {
      lateAnswer = released.then(() => undefined)
      await released
      return reply.sent ? undefined : { late: true }
    })
    app.get('/fast', async () => ({ fast: true }))
  })
  t.teardown(() => app.close())
  const started = Date.now()
  const res = await fetch(`${base}/slow`)
  const waited = Date.now() - started
  t.equal(res.status, 503)
  t.equal(res.headers.get('content-type'), 'application/json; charset=utf-8')
  t.same(await res.json(), { error: 'request timeout', details: 'no answer within 150 ms', code: 'GATEHOUSE_TIMEOUT' })
  t.ok(waited >= 140, `answered at the deadline (${waited} ms)`)
  release()
  await lateAnswer
  const fast = await fetch(`${base}/fast`)
  t.equal(fast.status, 200, 'the same connection pool still works')
  t.same(await fast.json(), { fast: true })
})

t.test('with a fake clock: exact deadline, 504, no timer left, the hook form', async (t) => {
  const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] })
  t.teardown(() => clock.uninstall())
  const app = Fastify()
  let finish: (() => void) | undefined
  await app.register(async (scope) => {
    await scope.register(timeoutPlugin, { timeout: 1000, status: 504 })
    scope.get('/slow', async () => await new Promise((resolve) => { finish = () => resolve({ late: true }) }))
    scope.get('/fast', async () => ({ fast: true }))
  })
  app.get('/hooked', { onRequest: timeoutHook(500) }, async () => await new Promise(() => {}))
  app.get('/untimed', async () => await new Promise((resolve) => setImmediate(() => resolve({ untimed: true }))))
  await app.ready()
  t.teardown(() => app.close())

  t.equal((await app.inject('/fast')).statusCode, 200)
  t.equal(clock.countTimers(), 0, 'an answered request leaves no timer')

  let settled = false
  const pending = app.inject('/slow').then((r) => { settled = true; return r })
  await new Promise((resolve) => setImmediate(resolve))
  clock.tick(999)
  await new Promise((resolve) => setImmediate(resolve))
  t.notOk(settled, 'not answered before the deadline')
  clock.tick(1)
  const res = await pending
  t.equal(res.statusCode, 504, 'status: 504')
  t.same(res.json(), { error: 'request timeout', details: 'no answer within 1000 ms', code: 'GATEHOUSE_TIMEOUT' })
  finish?.()

  const hooked = app.inject('/hooked')
  await new Promise((resolve) => setImmediate(resolve))
  clock.tick(500)
  t.equal((await hooked).statusCode, 503, 'hook form, default 503')
  t.equal((await app.inject('/untimed')).statusCode, 200, 'routes outside the context have no deadline')
})

t.test('bad options: an OptionsError naming the option', async (t) => {
  const bad: Array<[unknown, string]> = [
    [{}, 'timeout.timeout'],
    [{ timeout: 0 }, 'timeout.timeout'],
    [{ timeout: 1.5 }, 'timeout.timeout'],
    [{ timeout: '5s' }, 'timeout.timeout'],
    [{ timeout: 2 ** 31 }, 'timeout.timeout'],
    [{ timeout: 100, status: 500 }, 'timeout.status']
  ]
  for (const [opts, option] of bad) {
    const app = Fastify()
    const err = await app.register(timeoutPlugin, opts as { timeout: number }).ready().then(() => undefined, (e: unknown) => e)
    t.ok(err instanceof OptionsError, `${option}: an OptionsError`)
    t.equal((err as OptionsError).option, option, JSON.stringify(opts))
    await app.close()
  }
  t.throws(() => timeoutHook(-1), { option: 'timeout.timeout' })
})
