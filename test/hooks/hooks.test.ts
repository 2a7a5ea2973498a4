import t from 'tap'
import { authPlugin } from '../../auth.js'
import { User } from '../../lib/user.js'
import { type Client } from '../helpers/client.js'
import { injectApp } from '../helpers/app.js'

const roles: Record<string, string> = { alice: 'editor', bob: 'viewer' }

const { app, client } = await injectApp(async (app) => {
  await app.register(authPlugin, {
    secret: () => 'hooks-secret-123456-0123456789abcdef',
    url: 'http://127.0.0.1',
    claimsUpdater: (c) => {
      const name = c.user!.name
      c.user = { ...c.user!, ...(roles[name] ? { role: roles[name] } : {}), ...(name === 'root' ? { attrs: { admin: true } } : {}) }
      return c
    },
    userUpdater: (u) => u.setStrAttr('seen', 'yes'),
    providers: [{ kind: 'direct', name: 'local', checker: () => true }]
  })
  const { auth } = app
  app.get('/admin', { preHandler: auth.admin }, async (req) => ({ name: req.user!.name }))
  app.get('/editor', { preHandler: auth.rbac(['editor', 'owner']) }, async (req) => ({ name: req.user!.name, role: req.user!.role }))
  app.get('/trace', { preHandler: auth.trace }, async (req) => ({ user: auth.getUser(req)?.name ?? null }))
  app.get('/must', { preHandler: auth.trace }, async (req) => ({ name: auth.mustGetUser(req).name }))
  app.post('/form', { preHandler: auth.xsrf }, async () => ({ ok: true }))
  app.get('/updated', { preHandler: auth.updateUser() }, async (req) => ({ seen: req.user?.strAttr('seen') ?? null }))
  app.get('/updated2', { preHandler: [auth.authenticate, auth.updateUser({ update: (u) => u.setBoolAttr('vip', true) })] }, async (req) => ({ vip: req.user!.boolAttr('vip') }))
  app.setErrorHandler((err: { statusCode?: number; message: string }, _req, reply) => reply.code(err.statusCode ?? 500).send({ error: err.message }))
})
t.teardown(() => app.close())

async function login (name: string): Promise<Client> {
  const c = client()
  await c.fetch('/auth/local/login', { method: 'POST', form: { user: name, passwd: 'x' } })
  return c
}
const get = (c: Client, path: string): Promise<Response> => c.fetch(path, { headers: { 'x-xsrf-token': c.jar.get('XSRF-TOKEN') ?? '' } })

t.test('admin allows admins, 403 for others, 401 without a user', async (t) => {
  t.equal((await get(await login('root'), '/admin')).status, 200)
  const r = await get(await login('alice'), '/admin')
  t.equal(r.status, 403)
  // This app has an error handler: it sees the guard's error first and answers its own shape (issue 23 item 3).
  t.same(await r.json(), { error: 'forbidden' })
  t.equal((await get(client(), '/admin')).status, 401)
})

t.test('the login answer carries the user as the claims updater shaped it', async (t) => {
  const r = await client().fetch('/auth/local/login', { method: 'POST', form: { user: 'alice', passwd: 'x' } })
  t.equal((await r.json()).role, 'editor')
})

t.test('rbac allows listed roles, 403 for others', async (t) => {
  const r = await get(await login('alice'), '/editor')
  t.same(await r.json(), { name: 'alice', role: 'editor' })
  t.equal((await get(await login('bob'), '/editor')).status, 403)
  t.equal((await get(await login('nobody'), '/editor')).status, 403, 'no role at all')
  t.equal((await get(client(), '/editor')).status, 401)
  t.throws(() => app.auth.rbac([]), TypeError, 'empty role list is a programming error')
})

t.test('trace attaches the user when present and never rejects', async (t) => {
  t.same(await (await get(await login('alice'), '/trace')).json(), { user: 'alice' })
  t.same(await (await get(client(), '/trace')).json(), { user: null })
  const r = await client().fetch('/trace', { headers: { 'x-jwt': 'garbage' } })
  t.equal(r.status, 200)
  t.same(await r.json(), { user: null })
})

t.test('the two getters: getUser never throws, mustGetUser throws 401', async (t) => {
  t.same(await (await get(await login('alice'), '/must')).json(), { name: 'alice' })
  const r = await get(client(), '/must')
  t.equal(r.status, 401)
})

t.test('updateUser replaces the user on every request', async (t) => {
  const c = await login('alice')
  t.same(await (await get(c, '/updated')).json(), { seen: 'yes' })
  t.same(await (await get(client(), '/updated')).json(), { seen: null }, 'no user: passes through')
  t.same(await (await get(c, '/updated2')).json(), { vip: true })
})

t.test('xsrf hook: header must equal cookie on session-less routes', async (t) => {
  t.equal((await client().fetch('/form', { method: 'POST' })).status, 403)
  t.equal((await client().fetch('/form', { method: 'POST', headers: { cookie: 'XSRF-TOKEN=abc', 'x-xsrf-token': 'abd' } })).status, 403)
  t.equal((await client().fetch('/form', { method: 'POST', headers: { cookie: 'XSRF-TOKEN=abc', 'x-xsrf-token': 'abc' } })).status, 200)
})

t.test('User attribute helpers', async (t) => {
  const u = new User({ name: 'n', id: 'p_1', attrs: { s: 'v', b: true, l: ['a', 'b'], bad: 3 } })
  t.equal(u.strAttr('s'), 'v')
  t.equal(u.strAttr('bad'), '')
  t.equal(u.boolAttr('b'), true)
  t.equal(u.boolAttr('s'), false)
  t.same(u.listAttr('l'), ['a', 'b'])
  t.same(u.listAttr('bad'), [])
  t.equal(u.isAdmin(), false)
  u.setAdmin(true).setListAttr('tags', ['x'])
  t.equal(u.isAdmin(), true)
  t.same(JSON.parse(JSON.stringify(u)), { name: 'n', id: 'p_1', attrs: { s: 'v', b: true, l: ['a', 'b'], bad: 3, admin: true, tags: ['x'] } })
})

t.test('basic auth with basicAuth.adminPasswd: user admin', async (t) => {
  const { app: a, client: clientB } = await injectApp(async (a) => {
    await a.register(authPlugin, { secret: () => 'x-secret-x-secret-0123456789abcdef', url: 'http://127.0.0.1', basicAuth: { adminPasswd: 'open sesame' } })
    a.get('/admin', { preHandler: a.auth.admin }, async (req) => req.user)
  })
  t.teardown(() => a.close())
  const basic = (s: string): Record<string, string> => ({ authorization: 'Basic ' + Buffer.from(s).toString('base64') })
  let r = await clientB().fetch('/admin', { headers: basic('admin:open sesame') })
  t.equal(r.status, 200)
  t.same(await r.json(), { name: 'admin', id: 'admin', attrs: { admin: true } })
  for (const bad of [basic('admin:wrong'), basic('root:open sesame'), basic('nocolon'), { authorization: 'Basic !!!' }]) {
    r = await clientB().fetch('/admin', { headers: bad })
    t.equal(r.status, 401, `rejected: ${bad.authorization}`)
    t.equal((await r.json()).error, 'unauthorized')
  }
  t.equal((await clientB().fetch('/admin')).status, 401, 'no header, no session')
})

t.test('basic auth with a checker: its user lands in request.user; adminPasswd ignored', async (t) => {
  const { app: a, client: clientB } = await injectApp(async (a) => {
    await a.register(authPlugin, {
      secret: () => 'x-secret-x-secret-0123456789abcdef',
      url: 'http://127.0.0.1',
      basicAuth: {
        adminPasswd: 'ignored',
        checker: async (user, passwd) => user === 'svc' && passwd === 'pw' ? { ok: true, user: { name: 'svc', id: 'basic_svc', role: 'robot' } } : { ok: false }
      }
    })
    a.get('/robots', { preHandler: a.auth.rbac(['robot']) }, async (req) => req.user)
  })
  t.teardown(() => a.close())
  const basic = (s: string): Record<string, string> => ({ authorization: 'Basic ' + Buffer.from(s).toString('base64') })
  let r = await clientB().fetch('/robots', { headers: basic('svc:pw') })
  t.same(await r.json(), { name: 'svc', id: 'basic_svc', role: 'robot' })
  r = await clientB().fetch('/robots', { headers: basic('admin:ignored') })
  t.equal(r.status, 401, 'adminPasswd ignored when a checker is set')
  r = await clientB().fetch('/robots', { headers: basic('svc:nope') })
  t.equal(r.status, 401)
})
