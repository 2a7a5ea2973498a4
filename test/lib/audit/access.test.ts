/**
 * Failed authorization is a security event (ASVS 5.0 16.3.2): a signed-in user refused a route by `admin` or
 * `rbac(roles)` (403) is told as `access.denied`, with the user, the method, the route's pattern (never the URL's
 * values) and the roles that were required; a request without a user (401) and a user let in are no such event.
 */
import t from 'tap'
import { authPlugin } from '../../../auth.js'
import type { AuditEvent } from '../../../lib/audit/events.js'
import { userId } from '../../../lib/user.js'
import { injectApp } from '../../helpers/app.js'
import type { Client } from '../../helpers/client.js'

const roles: Record<string, string> = { alice: 'editor', bob: 'viewer' }
const events: AuditEvent[] = []
const { app, client } = await injectApp(async (app) => {
  await app.register(authPlugin, {
    secret: () => 'access-audit-secret-0123456789abcdef',
    url: 'http://127.0.0.1',
    onEvent: (e) => { events.push(e) },
    claimsUpdater: (c) => {
      const name = c.user!.name
      c.user = { ...c.user!, ...(roles[name] ? { role: roles[name] } : {}), ...(name === 'root' ? { attrs: { admin: true } } : {}) }
      return c
    },
    providers: [{ kind: 'direct', name: 'local', checker: () => true }]
  })
  app.get('/admin/users/:id', { onRequest: app.auth.admin }, async () => ({ ok: true }))
  app.delete('/docs/:doc', { preHandler: app.auth.rbac(['editor', 'owner']) }, async () => ({ ok: true }))
})
t.teardown(() => app.close())

async function login (name: string): Promise<Client> {
  const c = client()
  await c.fetch('/auth/local/login', { method: 'POST', form: { user: name, passwd: 'x' } })
  return c
}
const call = async (c: Client, method: string, path: string): Promise<number> =>
  (await c.fetch(path, { method, headers: { 'x-xsrf-token': c.jar.get('XSRF-TOKEN') ?? '' } })).status
const denied = (): AuditEvent[] => events.filter((e) => e.type === 'access.denied')

t.test('a 403 from admin or rbac is an access.denied event naming the route, the method and the roles required', async (t) => {
  const alice = await login('alice')
  events.length = 0
  t.equal(await call(alice, 'GET', '/admin/users/42?tab=secret-value'), 403)
  t.equal(await call(await login('bob'), 'DELETE', '/docs/plan-b'), 403)
  const [admin, rbac] = denied()
  t.match(admin, { type: 'access.denied', outcome: 'failure', reason: 'admin', userId: userId('local', 'alice'), method: 'GET', route: '/admin/users/:id', required: ['admin'], ip: '127.0.0.1' })
  t.match(rbac, { type: 'access.denied', outcome: 'failure', reason: 'role', method: 'DELETE', route: '/docs/:doc', required: ['editor', 'owner'] })
  // The URL's values (the path's `42`, `plan-b`, the query's secret) are not in any field: only the route's pattern.
  // (Not a bare '42': a timestamp or a random id may hold those digits.)
  const fields = denied().flatMap((e) => Object.values(e)).filter((v): v is string => typeof v === 'string')
  t.notOk(fields.some((v) => /(^|\/)42($|[/?])|plan-b|secret-value/.test(v)), 'no value of the URL in the events')
  t.equal(denied().length, 2)
})

t.test('let in, or without a user (401), is no access.denied event', async (t) => {
  events.length = 0
  t.equal(await call(await login('root'), 'GET', '/admin/users/1'), 200)
  t.equal(await call(await login('alice'), 'DELETE', '/docs/a'), 200)
  t.equal(await call(client(), 'GET', '/admin/users/1'), 401)
  t.equal(await call(client(), 'DELETE', '/docs/a'), 401)
  t.same(denied(), [])
})
