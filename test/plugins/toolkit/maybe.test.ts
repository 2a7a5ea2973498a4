import t from 'tap'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import { listen } from '../../helpers/client.js'
import { maybe, maybePlugin, reject, rejectPlugin } from '../../../plugins/toolkit/maybe.js'
import { headersHook } from '../../../plugins/toolkit/headers.js'

t.test('maybe and reject', async (t) => {
  const seen: string[] = []
  const callbackHook = (req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void => { seen.push(req.url); done() }
  const failing = (_req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void => { done(Object.assign(new Error('nope'), { statusCode: 409 })) }
  const { app, base } = await listen(async (app) => {
    app.get('/m', { onRequest: maybe((req) => req.headers['x-tag'] === 'on', headersHook(['X-Tagged:1'])) }, async () => 'm')
    app.get('/async-pred', { preHandler: maybe(async (req) => (req.query as { q?: string }).q === '1', callbackHook) }, async () => 'a')
    app.get('/cb-error', { onRequest: maybe(() => true, failing) }, async () => 'never')
    app.get('/r', { onRequest: reject((req) => req.headers['x-bad'] !== undefined, 451, 'unavailable for legal reasons') }, async () => 'r')
    await app.register(async (scope) => {
      await scope.register(rejectPlugin, { when: (req) => req.url.includes('secret'), status: 403, message: 'forbidden path' })
      await scope.register(rejectPlugin, { when: (req) => (req.body as { kill?: boolean } | undefined)?.kill === true, status: 422, message: 'no kill', stage: 'preHandler' })
      await scope.register(maybePlugin, { when: (req) => req.method === 'POST', hook: headersHook(['X-Post:yes']) })
      scope.get('/scoped/:p', async () => 'fine')
      scope.post('/scoped/body', async () => 'posted')
    })
  })
  t.teardown(() => app.close())

  let r = await fetch(`${base}/m`, { headers: { 'x-tag': 'on' } })
  t.equal(r.headers.get('x-tagged'), '1')
  r = await fetch(`${base}/m`)
  t.equal(r.headers.get('x-tagged'), null, 'skipped when the predicate is false')
  t.equal(await r.text(), 'm')

  await fetch(`${base}/async-pred?q=1`)
  await fetch(`${base}/async-pred?q=2`)
  t.same(seen, ['/async-pred?q=1'], 'async predicate; callback-style hook runs')

  r = await fetch(`${base}/cb-error`)
  t.equal(r.status, 409, 'callback hook error propagates')

  r = await fetch(`${base}/r`, { headers: { 'x-bad': '1' } })
  t.equal(r.status, 451)
  t.match(r.headers.get('content-type'), /application\/json/)
  t.same(await r.json(), { error: 'unavailable for legal reasons', code: 'GATEHOUSE_BAD_REQUEST' }, 'a 4xx without a code of its own')
  r = await fetch(`${base}/r`)
  t.equal(await r.text(), 'r')

  r = await fetch(`${base}/scoped/secret`)
  t.equal(r.status, 403)
  t.same(await r.json(), { error: 'forbidden path', code: 'GATEHOUSE_FORBIDDEN' })
  r = await fetch(`${base}/scoped/open`)
  t.equal(await r.text(), 'fine')
  t.equal(r.headers.get('x-post'), null)
  r = await fetch(`${base}/scoped/body`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"kill":true}' })
  t.equal(r.status, 422, 'preHandler stage sees the body')
  t.same(await r.json(), { error: 'no kill', code: 'GATEHOUSE_BAD_REQUEST' })
  r = await fetch(`${base}/scoped/body`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"kill":false}' })
  t.equal(await r.text(), 'posted')
  t.equal(r.headers.get('x-post'), 'yes', 'maybePlugin')
})

// Fastify's rule for callback hooks: one that answers does not call done. maybe and wrap must not then wait
// for done forever: every such rejected request would hold its request, reply and closures for good.
t.test('a callback hook that answers without calling done settles maybe and wrap', async (t) => {
  const { wrap } = await import('../../../plugins/toolkit/helpers.js')
  let reached = 0
  let settled = 0
  const answering = (_req: FastifyRequest, reply: FastifyReply, _done: (err?: Error) => void): void => {
    reply.code(403).send({ error: 'no' })
  }
  const guarded = maybe(() => true, answering)
  let bothSettled!: () => void
  const settledTwice = new Promise<void>((resolve) => { bothSettled = resolve })
  const settle = (): void => { if (++settled === 2) bothSettled() }
  const { app, base } = await listen(async (app) => {
    app.addHook('onSend', async (_req, _reply, payload) => { await new Promise((resolve) => setImmediate(resolve)); return payload })
    app.get('/maybe', {
      preHandler: async function (req, reply) { await guarded.call(this, req, reply); settle() }
    }, async () => { reached++; return 'never' })
    const wrapped = wrap(async () => { reached++; return 'never' }, answering)
    app.get('/wrap', async function (req, reply) { const out = await wrapped.call(this, req, reply); settle(); return out })
  })
  t.teardown(() => app.close())
  for (const path of ['/maybe', '/wrap']) {
    const r = await fetch(base + path)
    t.equal(r.status, 403, path)
    t.same(await r.json(), { error: 'no' })
  }
  // The response is out before the hook promise settles: wait for both settlements (tap's timeout bounds it).
  await settledTwice
  t.equal(settled, 2, 'maybe and wrap settled once the answer was sent')
  t.equal(reached, 0, 'the handler never ran')
})

t.test('a client that goes away while a callback hook decides never gets the handler run', async (t) => {
  const { request } = await import('node:http')
  let reached = 0
  let started!: () => void
  const hookStarted = new Promise<void>((resolve) => { started = resolve })
  let decide!: () => void
  const decided = new Promise<void>((resolve) => { decide = resolve })
  let finished!: () => void
  const hookDone = new Promise<void>((resolve) => { finished = resolve })
  let sawClose!: () => void
  const serverSawClose = new Promise<void>((resolve) => { sawClose = resolve })
  const slowDeny = (_req: FastifyRequest, reply: FastifyReply, _done: (err?: Error) => void): void => {
    reply.raw.once('close', () => sawClose())
    started()
    void decided.then(() => { reply.code(403).send({ error: 'no' }); finished() })
  }
  const { app, base } = await listen(async (app) => {
    app.post('/slow', { preHandler: maybe(() => true, slowDeny) }, async () => { reached++; return 'never' })
  })
  t.teardown(() => app.close())
  const { port } = new URL(base)
  const req = request({ host: '127.0.0.1', port, path: '/slow', method: 'POST', headers: { 'content-length': '0' } })
  req.on('error', () => {})
  req.end()
  await hookStarted
  const closed = new Promise((resolve) => { req.once('close', resolve) })
  req.destroy()
  await closed
  // The server has seen the closed connection before the hook decides.
  await serverSawClose
  decide()
  await hookDone
  // A handler wrongly let through would be called by the continuations of the close or of the answer, all
  // queued by now: one turn of the event loop runs every one of them.
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(reached, 0, 'the handler did not run for the unchecked request')
})

t.test('bad arguments fail at setup', async (t) => {
  const option = (name: string): { name: string, code: string, option: string } => ({ name: 'OptionsError', code: 'GATEHOUSE_OPTION', option: name })
  t.throws(() => maybe('x' as never, async () => {}), option('maybe.predicate'))
  t.throws(() => maybe(() => true, null as never), option('maybe.hook'))
  t.throws(() => reject('x' as never, 400, 'x'), option('reject.predicate'))
  t.throws(() => reject(() => true, 99, 'x'), option('reject.status'))
  t.throws(() => reject(() => true, 404.5, 'x'), option('reject.status'))
  t.throws(() => reject(() => true, 404, ''), option('reject.message'))
  const plugins: Array<[(app: FastifyInstance) => unknown, string]> = [
    [(app) => app.register(rejectPlugin, { when: () => true, status: 400, message: 'm', stage: 'onSend' as never }), 'reject.stage'],
    [(app) => app.register(rejectPlugin, { when: undefined as never, status: 400, message: 'm' }), 'reject.when'],
    [(app) => app.register(rejectPlugin, { when: () => true, status: 700, message: 'm' }), 'reject.status'],
    [(app) => app.register(maybePlugin, { when: () => true, hook: async () => {}, stage: 'onResponse' as never }), 'maybe.stage'],
    [(app) => app.register(maybePlugin, { when: 1 as never, hook: async () => {} }), 'maybe.when'],
    [(app) => app.register(maybePlugin, { when: () => true, hook: undefined as never }), 'maybe.hook']
  ]
  for (const [register, name] of plugins) {
    const app = Fastify()
    register(app)
    await t.rejects(async () => { await app.ready() }, option(name), name)
    await app.close()
  }
})
