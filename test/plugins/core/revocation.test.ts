import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { MemoryStateStore } from '../../../stores/state/memory.js'
import type { StateStore } from '../../../lib/state-store.js'
import { client, type Client } from '../../helpers/client.js'
import { RedisServer, redisMissingReason } from '../../helpers/redis-server.js'
import { sessionApp, tokenOf, type SessionApp } from '../../helpers/session-app.js'
import { eventually } from '../../helpers/eventually.js'

const REVOKED = { error: 'unauthorized', details: 'session revoked', code: 'GATEHOUSE_SESSION_REVOKED' }

/** The three ways a token travels: cookie (with XSRF), X-JWT header, ?token= query. */
async function everySource (s: SessionApp, c: Client, token = tokenOf(c), jti = c.jar.get('XSRF-TOKEN')!): Promise<number[]> {
  const byCookie = await s.client().fetch('/private', { headers: { cookie: `JWT=${token}; XSRF-TOKEN=${jti}`, 'x-xsrf-token': jti } })
  const byHeader = await s.client().fetch('/private', { headers: { 'x-jwt': token } })
  const byQuery = await s.client().fetch(`/private?token=${token}`)
  return [byCookie.status, byHeader.status, byQuery.status]
}

/** The basic methods of an in-memory store, without publish/subscribe or increment. */
function plainStore (inner: MemoryStateStore): StateStore {
  return {
    setIfAbsent: (k, v, ttl) => inner.setIfAbsent(k, v, ttl),
    set: (k, v, ttl) => inner.set(k, v, ttl),
    get: (k) => inner.get(k),
    take: (k) => inner.take(k),
    delete: (k) => inner.delete(k),
    close: () => inner.close()
  }
}

/** Routes through which the host ends sessions (e.g. on a password change or when an account is disabled). */
function adminRoutes (s: { post: (path: string, h: (req: { body: unknown }) => Promise<unknown>) => unknown }, auth: () => { revokeSession(jti: string): Promise<void>; revokeUser(id: string): Promise<void> }): void {
  s.post('/admin/revoke-session', async (req) => { await auth().revokeSession((req.body as { jti: string }).jti); return { ok: true } })
  s.post('/admin/revoke-user', async (req) => { await auth().revokeUser((req.body as { id: string }).id); return { ok: true } })
}

t.test('logout revokes the session: the old token is refused by cookie, header and query', async (t) => {
  const s = await sessionApp({ tokenSources: { query: true } })
  t.teardown(s.close)
  const c = await s.login('alice')
  const token = tokenOf(c)
  const jti = c.jar.get('XSRF-TOKEN')!
  t.same(await everySource(s, c), [200, 200, 200], 'control: the session works from every source (and is now cached)')
  t.equal(s.tokens.cache.size > 0, true, 'the session is in the verified-session cache')

  const out = await s.get(c, '/auth/logout')
  t.equal(out.status, 200)
  t.same(await out.json(), { status: 'logged out' })
  t.same(await everySource(s, c, token, jti), [401, 401, 401], 'the copied token is dead everywhere')
  const r = await s.client().fetch('/private', { headers: { 'x-jwt': token } })
  t.same(await r.json(), REVOKED)
  const status = await s.client().fetch('/auth/status', { headers: { 'x-jwt': token } })
  t.same(await status.json(), { status: 'not logged in' }, '/status agrees')

  const other = await s.login('alice')
  t.equal((await s.get(other)).status, 200, 'a new login of the same user is not affected')
})

t.test('revokeUser ends every session of that user, not another user\'s, not a later one', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const s = await sessionApp({}, (app) => adminRoutes(app, () => app.auth))
  t.teardown(s.close)
  const a1 = await s.login('alice')
  const a2 = await s.login('alice')
  const bob = await s.login('bob')
  for (const c of [a1, a2, bob]) t.equal((await s.get(c)).status, 200, 'control')
  clock.tick(1)
  const id = (await (await s.get(a1, '/auth/user')).json()).id as string
  const r = await s.client().fetch('/admin/revoke-user', { method: 'POST', json: { id } })
  t.equal(r.status, 200)
  clock.tick(1)
  const later = await s.login('alice')
  t.equal((await s.get(a1)).status, 401, 'first session of alice ended')
  t.equal((await s.get(a2)).status, 401, 'second session of alice ended')
  t.equal((await s.get(bob)).status, 200, 'bob untouched')
  t.equal((await s.get(later)).status, 200, 'a login after the call is not affected')
})

t.test('logout with all=1 ends every session of the user ("sign out everywhere")', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const s = await sessionApp()
  t.teardown(s.close)
  const phone = await s.login('carol')
  const laptop = await s.login('carol')
  const dave = await s.login('dave')
  clock.tick(1)
  const r = await laptop.fetch('/auth/logout?all=1', { method: 'POST', headers: { 'x-xsrf-token': laptop.jar.get('XSRF-TOKEN') ?? '' } })
  t.equal(r.status, 200)
  t.equal((await s.get(phone)).status, 401, 'the other device is signed out')
  t.equal((await s.client().fetch('/private', { headers: { 'x-jwt': tokenOf(laptop) } })).status, 401, 'this one too')
  t.equal((await s.get(dave)).status, 200, 'another user is not')
})

t.test('a token that can no longer authenticate cannot sign its user out everywhere', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const store = new MemoryStateStore()
  // Without the session list, whose login entries would be in the store too: the store then holds revocations only.
  const s = await sessionApp({ stateStore: store, revocation: { sessionList: false }, tokenSources: { query: true } })
  t.teardown(s.close)
  const phone = await s.login('gina')
  const leaked = tokenOf(await s.login('gina'))
  t.equal((await s.client().fetch(`/private?token=${leaked}`)).status, 200, 'control: the token works while live')
  clock.tick(16 * 60_000) // past the token's 15 minutes; the cookie session lives on (refreshed)
  const dead = await s.client().fetch(`/private?token=${leaked}`)
  t.equal(dead.status, 401, 'the expired query token authenticates nothing')
  t.equal((await dead.json()).code, 'GATEHOUSE_TOKEN_EXPIRED')
  for (const headers of [{}, { 'x-jwt': leaked }]) {
    const path = Object.keys(headers).length === 0 ? `/auth/logout?all=1&token=${leaked}` : '/auth/logout?all=1'
    const r = await s.client().fetch(path, { method: 'POST', headers })
    t.equal(r.status, 401, `${path.slice(0, 30)}: refused`)
    t.equal((await r.json()).code, 'GATEHOUSE_TOKEN_EXPIRED')
  }
  t.equal(store.size, 0, 'nothing was revoked')
  t.equal((await s.get(phone)).status, 200, 'the user\'s other session is still signed in')
})

t.test('bad revocation input: 400 JSON with a code, nothing stored', async (t) => {
  const store = new MemoryStateStore()
  const s = await sessionApp({ stateStore: store }, (app) => adminRoutes(app, () => app.auth))
  t.teardown(s.close)
  const c = await s.login('erin')
  t.equal((await s.get(c)).status, 200)
  const before = store.size
  for (const [path, body] of [
    ['/admin/revoke-session', { jti: 'x'.repeat(257) }],
    ['/admin/revoke-session', { jti: '' }],
    ['/admin/revoke-session', { jti: ['a', 'b'] }],
    ['/admin/revoke-user', { id: 'u'.repeat(100_000) }],
    ['/admin/revoke-user', { id: 42 }]
  ] as const) {
    const r = await s.client().fetch(path, { method: 'POST', json: body })
    t.equal(r.status, 400, `${path} ${JSON.stringify(body).slice(0, 40)}`)
    t.equal((await r.json()).code, 'GATEHOUSE_BAD_REQUEST')
  }
  const bad = await s.get(c, '/auth/logout?all=maybe')
  t.equal(bad.status, 400, 'all must be a flag')
  t.equal((await bad.json()).code, 'GATEHOUSE_BAD_REQUEST')
  t.equal(store.size, before, 'nothing was stored')
  t.equal((await s.get(c)).status, 200, 'the session still works')
})

t.test('an unauthenticated client cannot make the server store anything through logout', async (t) => {
  const store = new MemoryStateStore()
  const s = await sessionApp({ stateStore: store })
  t.teardown(s.close)
  const forged = 'eyJhbGciOiJIUzI1NiJ9.eyJqdGkiOiJ4In0.' + 'A'.repeat(43)
  for (const headers of [{}, { 'x-jwt': forged }, { cookie: `JWT=${forged}` }, { 'x-jwt': 'garbage' }]) {
    const r = await s.client().fetch('/auth/logout', { headers })
    t.equal(r.status, 200, 'logout without a valid session just clears the cookies')
  }
  const all = await s.client().fetch('/auth/logout?all=1', { method: 'POST', headers: { 'x-jwt': forged } })
  t.equal(all.status, 401, 'ending every session needs a valid one')
  t.equal(store.size, 0, 'nothing was stored')
})

t.test('a store without publish/subscribe: revocation is looked up on every request', async (t) => {
  const plain = plainStore(new MemoryStateStore())
  // Without increment() the login limits cannot count in this store: they are off here (tested in test/lib/throttle).
  const a = await sessionApp({ stateStore: plain, rateLimit: false })
  const b = await sessionApp({ stateStore: plain, rateLimit: false })
  t.teardown(async () => { await a.close(); await b.close() })
  const c = await a.login('frank')
  const token = tokenOf(c)
  t.equal((await b.client().fetch('/private', { headers: { 'x-jwt': token } })).status, 200, 'instance B caches the session')
  t.equal((await a.get(c, '/auth/logout')).status, 200)
  t.equal((await b.client().fetch('/private', { headers: { 'x-jwt': token } })).status, 401, 'instance B refuses it at once')
})

t.test('a subscription that is not live: a revocation is published without waiting, and looked up meanwhile', async (t) => {
  const inner = new MemoryStateStore()
  const published: Array<Record<string, unknown>> = []
  const deaf: StateStore = {
    ...plainStore(inner),
    // Delivery never reported live (a subscriber still connecting): acknowledgements could not be heard.
    subscribe: async () => ({ close: async () => {} }),
    publish: async (channel, message) => { published.push(JSON.parse(message) as Record<string, unknown>); return await inner.publish(channel, message) }
  }
  const a = await sessionApp({ stateStore: deaf, rateLimit: false })
  const b = await sessionApp({ stateStore: deaf, rateLimit: false })
  t.teardown(async () => { await a.close(); await b.close() })
  const c = await a.login('hank')
  const token = tokenOf(c)
  t.equal((await b.client().fetch('/private', { headers: { 'x-jwt': token } })).status, 200)
  t.equal((await a.get(c, '/auth/logout')).status, 200)
  t.equal(published.length, 1, 'the revocation was published')
  // A message with an id (`i`) asks every instance for an acknowledgement, and its sender waits for them.
  t.same(Object.keys(published[0]!), ['s'], 'without asking for acknowledgements it cannot hear (no id): nothing to wait for')
  t.equal((await b.client().fetch('/private', { headers: { 'x-jwt': token } })).status, 401, 'B, not live either, looked it up')
})

t.test('two instances sharing one in-process store hear revocations at once', async (t) => {
  const store = new MemoryStateStore()
  const a = await sessionApp({ stateStore: store })
  const b = await sessionApp({ stateStore: store })
  t.teardown(async () => { await a.close(); await b.close() })
  const c = await a.login('gina')
  const token = tokenOf(c)
  t.equal((await b.client().fetch('/private', { headers: { 'x-jwt': token } })).status, 200, 'B has it cached')
  t.equal((await a.get(c, '/auth/logout')).status, 200)
  const r = await b.client().fetch('/private', { headers: { 'x-jwt': token } })
  t.equal(r.status, 401)
  t.same(await r.json(), REVOKED)
})

t.test('a revocation whose message was missed holds after recheckInterval (fake clock)', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const store = new MemoryStateStore()
  const s = await sessionApp({ stateStore: store, revocation: { recheckInterval: '10s' } })
  t.teardown(s.close)
  const c = await s.login('hank')
  t.equal((await s.get(c)).status, 200, 'cached')
  // Written straight into the store, as another instance would, but the message never arrives.
  await store.set(`revoked:${c.jar.get('XSRF-TOKEN')!}`, '1', 60_000)
  t.equal((await s.get(c)).status, 200, 'served from the cache until the re-check is due')
  clock.tick(10_001)
  t.equal((await s.get(c)).status, 401, 'refused once the re-check interval has passed')
})

t.test('revocation: false turns it off (logout only clears cookies)', async (t) => {
  const store = new MemoryStateStore()
  // Login limits off, so that the store holds only what revocation would write (nothing).
  const s = await sessionApp({ stateStore: store, revocation: false, rateLimit: false })
  t.teardown(s.close)
  const c = await s.login('ivy')
  const token = tokenOf(c)
  t.equal((await s.get(c, '/auth/logout')).status, 200)
  t.equal((await s.client().fetch('/private', { headers: { 'x-jwt': token } })).status, 200, 'the token lives on')
  t.equal(store.size, 0)
  await t.rejects(s.app.auth.revokeSession('x'), { code: 'GATEHOUSE_OPTION', option: 'revocation' })
})

t.test('Redis: logout on one instance is refused on the next request on another', { skip: redisMissingReason() }, async (t) => {
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())
  const a = await sessionApp({ stateStore: redis.url, tokenSources: { query: true } })
  const b = await sessionApp({ stateStore: redis.url, tokenSources: { query: true } })
  t.teardown(async () => { await a.close(); await b.close() })
  const c = await a.login('judy')
  const token = tokenOf(c)
  const jti = c.jar.get('XSRF-TOKEN')!
  t.same(await everySource(b, c), [200, 200, 200], 'B serves the session (and caches it)')
  t.equal((await a.get(c, '/auth/logout')).status, 200, 'logout on A')
  t.same(await everySource(b, c, token, jti), [401, 401, 401], 'B refuses every source at once')
  t.same(await everySource(a, c, token, jti), [401, 401, 401], 'and so does A')

  // revokeUser on B reaches a session cached on A.
  const k1 = await a.login('kim')
  t.equal((await a.get(k1)).status, 200)
  const id = (await (await a.get(k1, '/auth/user')).json()).id as string
  await b.app.auth.revokeUser(id)
  t.equal((await a.get(k1)).status, 401, 'A refuses the user\'s session on its next request')
})

t.test('Redis: while the subscription is down, cached sessions are looked up in the store', { skip: redisMissingReason() }, async (t) => {
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())
  const a = await sessionApp({ stateStore: redis.url })
  t.teardown(() => a.close())
  const c = await a.login('leo')
  t.equal((await a.get(c)).status, 200, 'cached')
  await redis.stop()
  // The subscriber notices the closed connection on its own schedule; from then on every request asks the store.
  const r = await eventually(async () => await a.get(c), (r) => r.status !== 200)
  t.equal(r.status, 503, 'no store, no answer: a revocation could have been missed')
  t.equal((await r.json()).code, 'GATEHOUSE_STATE_STORE')
  await redis.start()
  // Back, but empty (this Redis keeps nothing across a restart): the cache was dropped, the session is looked up
  // again and refused, since a revocation of it may have been lost with the data; a new login is served.
  const { status } = await eventually(async () => await a.get(c), (r) => r.status !== 503)
  t.equal(status, 401, 'a session of before the restart is refused once Redis is back')
  t.equal((await a.get(await a.login('leo'))).status, 200, 'a new session is served')
})
