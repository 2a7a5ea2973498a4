/**
 * What the README promises a newcomer, over real HTTP: roles and admin through a claims updater, what
 * `getUser` sees with and without a hook, and the @fastify/cookie registration order.
 */
import t from 'tap'
import Fastify from 'fastify'
import cookie from '@fastify/cookie'
import { authPlugin } from '../../auth.js'
import type { Claims } from '../../plugins/core/base/types.js'
import { client, listen, type Client } from '../helpers/client.js'

const SECRET = 'readme-test-secret-0123456789abcdef-01234'

async function signIn (base: string, user: string): Promise<{ c: Client; xsrf: Record<string, string> }> {
  const c = client(base)
  const r = await c.fetch('/auth/local/login', { method: 'POST', json: { user, passwd: 'pw' } })
  if (r.status !== 200) throw new Error(`login of ${user}: ${r.status}`)
  return { c, xsrf: { 'x-xsrf-token': c.jar.get('XSRF-TOKEN')! } }
}

t.test('Roles and admin: a claims updater sets role and attrs.admin; rbac and admin read them', async (t) => {
  // The README's example: the host's own account records, keyed by the user's name here.
  const accounts = new Map([['alice', { role: 'editor', admin: false }], ['bob', { role: 'ops', admin: true }]])
  const { app, base } = await listen(async (app) => {
    await app.register(authPlugin, {
      secret: () => SECRET,
      url: 'http://127.0.0.1',
      providers: [{ kind: 'direct', name: 'local', checker: () => true }],
      claimsUpdater: async (claims: Claims) => {
        if (claims.user === undefined) return claims
        const account = accounts.get(claims.user.name)
        if (account === undefined) return claims
        claims.user = { ...claims.user, role: account.role, attrs: { ...claims.user.attrs, admin: account.admin } }
        return claims
      }
    })
    app.get('/api/reports', { preHandler: app.auth.rbac(['editor', 'ops']) }, async (req) => ({ role: req.user!.role }))
    app.get('/api/admin', { preHandler: app.auth.admin }, async (req) => ({ admin: req.user!.name }))
  })
  t.teardown(() => app.close())

  const alice = await signIn(base, 'alice')
  t.match(await (await alice.c.fetch('/auth/user', { headers: alice.xsrf })).json(), { name: 'alice', role: 'editor', attrs: { admin: false } }, 'the session carries what the updater set')
  t.equal((await alice.c.fetch('/api/reports', { headers: alice.xsrf })).status, 200)
  const denied = await alice.c.fetch('/api/admin', { headers: alice.xsrf })
  t.equal(denied.status, 403)
  t.same(await denied.json(), { error: 'forbidden', details: 'admin only', code: 'GATEHOUSE_FORBIDDEN' })

  const bob = await signIn(base, 'bob')
  t.same(await (await bob.c.fetch('/api/admin', { headers: bob.xsrf })).json(), { admin: 'bob' })
  t.same(await (await bob.c.fetch('/api/reports', { headers: bob.xsrf })).json(), { role: 'ops' })

  const carol = await signIn(base, 'carol')
  const noRole = await carol.c.fetch('/api/reports', { headers: carol.xsrf })
  t.equal(noRole.status, 403, 'no account, no role')
  t.match(await noRole.json(), { code: 'GATEHOUSE_FORBIDDEN', details: 'requires role: editor, ops' })
  t.equal((await client(base).fetch('/api/reports')).status, 401, 'signed out: 401')
})

t.test('getUser sees only what a hook attached: null without one, the user with trace', async (t) => {
  const { app, base } = await listen(async (app) => {
    await app.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1', providers: [{ kind: 'direct', name: 'local', checker: () => true }] })
    app.get('/no-hook', async (req) => ({ user: app.auth.getUser(req)?.name ?? null }))
    app.get('/optional', { preHandler: app.auth.trace }, async (req) => ({ user: app.auth.getUser(req)?.name ?? null }))
  })
  t.teardown(() => app.close())
  const { c, xsrf } = await signIn(base, 'dora')
  t.same(await (await c.fetch('/no-hook', { headers: xsrf })).json(), { user: null }, 'signed in, but no hook ran')
  t.same(await (await c.fetch('/optional', { headers: xsrf })).json(), { user: 'dora' }, 'trace attaches the user')
  t.same(await (await client(base).fetch('/optional')).json(), { user: null }, 'trace never refuses')
})

t.test('@fastify/cookie registered first keeps its options; registered after authPlugin it works too', async (t) => {
  const { app, base } = await listen(async (app) => {
    await app.register(cookie, { secret: 'cookie-signing-secret-0123456789' })
    await app.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1', providers: [{ kind: 'direct', name: 'local', checker: () => true }] })
    app.get('/signed', async (_req, reply) => reply.setCookie('pref', 'dark', { signed: true, path: '/' }).send({ ok: true }))
  })
  t.teardown(() => app.close())
  const { c } = await signIn(base, 'erin')
  t.ok(c.jar.get('JWT'), 'login sets the session cookie')
  await c.fetch('/signed')
  t.match(c.jar.get('pref'), /^dark\.[\w-]+/, "the host's cookie secret signs its cookies")

  // Issue 38: the package registers no @fastify/cookie on the app, so a later registration meets nothing.
  const late = await listen(async (app) => {
    await app.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1', providers: [{ kind: 'direct', name: 'local', checker: () => true }] })
    await app.register(cookie, { secret: 'cookie-signing-secret-0123456789' })
    app.get('/signed', async (_req, reply) => reply.setCookie('pref', 'dark', { signed: true, path: '/' }).send({ ok: true }))
  })
  t.teardown(() => late.app.close())
  const after = (await signIn(late.base, 'erin')).c
  t.ok(after.jar.get('JWT'), 'registered after: login sets the session cookie')
  await after.fetch('/signed')
  t.match(after.jar.get('pref'), /^dark\.[\w-]+/, "registered after: the host's cookie secret signs its cookies")
})
