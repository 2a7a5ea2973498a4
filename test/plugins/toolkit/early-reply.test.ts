import t from 'tap'
import { EventEmitter, once } from 'node:events'
import { authPlugin } from '../../../auth.js'
import { withUserPasswd, basicAuth } from '../../../plugins/toolkit/basic-auth.js'
import { maybe, reject } from '../../../plugins/toolkit/maybe.js'
import { onlyFromHook } from '../../../plugins/toolkit/only-from.js'
import { client, listen } from '../../helpers/client.js'

// Every hook that answers must stop the chain, also when an async onSend hook (gzip, logging…) delays the
// answer: otherwise the client sees 401/403 while the handler's side effects still happen.
t.test('a rejected request never reaches the handler, even with async onSend hooks', async (t) => {
  let reached = 0
  let responses = 0
  const responded = new EventEmitter()
  const { app, base } = await listen(async (app) => {
    app.addHook('onSend', async (_req, _reply, payload) => { await new Promise((resolve) => setImmediate(resolve)); return payload })
    app.addHook('onResponse', async () => { responses++; responded.emit('response') })
    await app.register(authPlugin, { secret: () => 'early-reply-secret-0123456789abcdef', url: 'http://127.0.0.1', providers: [{ kind: 'direct', name: 'local', checker: () => true }] })
    const hooks = {
      '/authenticate': app.auth.authenticate,
      '/admin': app.auth.admin,
      '/rbac': app.auth.rbac(['x']),
      '/xsrf': app.auth.xsrf,
      '/basic-fixed': withUserPasswd('u', 'p'),
      '/basic-checker': basicAuth(() => false),
      '/reject': reject(() => true, 429, 'slow down'),
      '/maybe': maybe(() => true, app.auth.authenticate),
      '/only-from': onlyFromHook(['10.0.0.1'])
    }
    for (const [path, hook] of Object.entries(hooks)) {
      app.post(path, { preHandler: hook as never }, async () => { reached++; return { reached } })
    }
  })
  t.teardown(() => app.close())
  const c = client(base)
  await c.fetch('/auth/local/login', { method: 'POST', json: { user: 'u', passwd: 'p' } })
  const expected: Record<string, number> = {
    '/authenticate': 401, '/admin': 401, '/rbac': 401, '/xsrf': 403, '/basic-fixed': 401, '/reject': 429, '/maybe': 401, '/only-from': 403
  }
  for (const [path, status] of Object.entries(expected)) {
    const r = await client(base).fetch(path, { method: 'POST' })
    t.equal(r.status, status, `${path} → ${status}`)
  }
  const basicBad = { authorization: 'Basic ' + Buffer.from('u:wrong').toString('base64') }
  t.equal((await client(base).fetch('/basic-fixed', { method: 'POST', headers: basicBad })).status, 403)
  t.equal((await client(base).fetch('/basic-checker', { method: 'POST', headers: basicBad })).status, 403)
  const r = await c.fetch('/admin', { method: 'POST', headers: { 'x-xsrf-token': c.jar.get('XSRF-TOKEN')! } })
  t.equal(r.status, 403, 'signed in but not admin')
  // A handler that wrongly went on would run within its request's lifecycle, before the server is done with the
  // response (the hook's answer waits for the async onSend): so wait until the server has finished all twelve.
  while (responses < 12) await once(responded, 'response')
  t.equal(reached, 0, 'no handler ran')
})
