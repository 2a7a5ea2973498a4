/**
 * Audit events of sessions: logout, refresh, revocation (logout, revokeSession, revokeUser, a removed key), the
 * refusals (xsrf, expired, revoked, audience, validator, unknown key), a token of an older key (key.rotated) and a
 * state store that cannot answer, each produced by real requests.
 */
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import Fastify from 'fastify'
import { authPlugin } from '../../../auth.js'
import { MemoryStateStore } from '../../../stores/state/memory.js'
import { StateStoreError } from '../../../lib/state-store.js'
import type { AuditEvent } from '../../../lib/audit/events.js'
import { auditApp, Jar, signIn, typesOf } from './app.js'

t.test('logout revokes the session (session.revoked by logout), then logout; ?all=1 ends the user\'s sessions too', async (t) => {
  const { app, events } = await auditApp()
  t.teardown(() => app.close())
  const jar = await signIn(app)
  const userId = events[0]!.userId
  events.length = 0
  const res = await jar.inject(app, { method: 'GET', url: '/auth/logout' })
  t.equal(res.statusCode, 200)
  t.same(typesOf(events), ['session.revoked', 'logout'])
  t.match(events[0], { by: 'logout', scope: 'session', reason: 'logout', userId, aud: '' })
  t.match(events[1], { everywhere: false, reason: 'session', userId, outcome: 'success' })
  events.length = 0
  const all = await (await signIn(app)).inject(app, { method: 'POST', url: '/auth/local/logout?all=1' })
  t.equal(all.statusCode, 200)
  t.same(typesOf(events), ['login.succeeded', 'session.revoked', 'session.revoked', 'logout'])
  t.match(events[1], { by: 'logout', scope: 'user', userId })
  t.match(events[2], { by: 'logout', scope: 'session', userId })
  t.match(events[3], { everywhere: true, provider: 'local' })
})

t.test('an expired cookie session is refreshed: session.refreshed; past its lifetime it is refused', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const { app, events } = await auditApp({ session: { tokenDuration: '1m', maxAge: '1h' } })
  t.teardown(() => app.close())
  const jar = await signIn(app)
  const userId = events[0]!.userId
  events.length = 0
  clock.tick(2 * 60_000)
  t.equal((await jar.inject(app, { method: 'GET', url: '/private' })).statusCode, 200)
  t.same(typesOf(events), ['session.refreshed'])
  t.match(events[0], { reason: 'expired_token', userId, aud: '', outcome: 'success' })
  events.length = 0
  t.equal((await jar.inject(app, { method: 'GET', url: '/private' })).statusCode, 200)
  t.same(events, [], 'a live session served from the cache emits nothing')
  clock.tick(2 * 3_600_000)
  t.equal((await jar.inject(app, { method: 'GET', url: '/private' })).statusCode, 401)
  t.same(typesOf(events), ['session.refused'])
  t.match(events[0], { reason: 'session_expired', source: 'cookie', userId })
})

t.test('refusals: xsrf, an expired header token, a revoked session', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const { app, events } = await auditApp({ session: { tokenDuration: '1m' } })
  t.teardown(() => app.close())
  const jar = await signIn(app)
  const userId = events[0]!.userId
  events.length = 0
  t.equal((await jar.inject(app, { method: 'GET', url: '/private', xsrf: false })).statusCode, 401)
  t.same(typesOf(events), ['session.refused'])
  t.match(events[0], { reason: 'xsrf', source: 'cookie', userId, outcome: 'failure' })
  events.length = 0

  const token = jar.cookies.get('JWT')!
  clock.tick(2 * 60_000)
  t.equal((await app.inject({ method: 'GET', url: '/private', headers: { 'x-jwt': token } })).statusCode, 401)
  t.match(events, [{ type: 'session.refused', reason: 'expired', source: 'header', userId }])
  events.length = 0

  const fresh = await signIn(app)
  const jti = fresh.cookies.get('XSRF-TOKEN')!
  events.length = 0
  await app.auth.revokeSession(jti)
  t.same(typesOf(events), ['session.revoked'])
  t.match(events[0], { by: 'revokeSession', scope: 'session', requestId: undefined, ip: undefined })
  t.notOk(JSON.stringify(events[0]).includes(jti), 'the session id is not told (it is the XSRF value)')
  events.length = 0
  t.equal((await fresh.inject(app, { method: 'GET', url: '/private' })).statusCode, 401)
  t.same(typesOf(events), ['session.refused'])
  t.match(events[0], { reason: 'revoked', source: 'cookie', userId })
})

t.test('revokeUser emits session.revoked (by revokeUser, scope user) and the user\'s sessions are then refused', async (t) => {
  const { app, events } = await auditApp()
  t.teardown(() => app.close())
  const jar = await signIn(app, 'bob')
  const userId = events[0]!.userId!
  events.length = 0
  await app.auth.revokeUser(userId)
  t.same(typesOf(events), ['session.revoked'])
  t.match(events[0], { by: 'revokeUser', scope: 'user', userId, reason: 'revokeUser' })
  events.length = 0
  t.equal((await jar.inject(app, { method: 'GET', url: '/private' })).statusCode, 401)
  t.match(events, [{ type: 'session.refused', reason: 'revoked', userId }])
})

t.test('refusals by the audience rule and by the validator', async (t) => {
  const other = await auditApp()
  t.teardown(() => other.app.close())
  const { token } = await other.app.auth.tokens.create({ user: { name: 'eve', id: 'local_e' }, aud: 'elsewhere' })
  const { app, events } = await auditApp({ audiences: ['site1'], validator: (_token, claims) => claims.user?.name !== 'bob' })
  t.teardown(() => app.close())
  t.equal((await app.inject({ method: 'GET', url: '/private', headers: { 'x-jwt': token } })).statusCode, 401)
  t.match(events, [{ type: 'session.refused', reason: 'audience', source: 'header', userId: undefined }])
  events.length = 0
  const bob = new Jar()
  t.equal((await bob.inject(app, { method: 'POST', url: '/auth/local/login', payload: { user: 'bob', passwd: 'bob-secret', aud: 'site1' } })).statusCode, 200)
  events.length = 0
  t.equal((await bob.inject(app, { method: 'GET', url: '/private' })).statusCode, 401)
  t.same(typesOf(events), ['session.refused'])
  t.match(events[0], { reason: 'validator', aud: 'site1' })
  t.match(events[0]!.userId, /^local_/)
})

t.test('an asynchronous validator\'s refusal of a cached session is audited when it comes', async (t) => {
  let allow = true
  const { app, events } = await auditApp({ validator: async () => allow })
  t.teardown(() => app.close())
  const jar = await signIn(app)
  t.equal((await jar.inject(app, { method: 'GET', url: '/private' })).statusCode, 200)
  allow = false
  events.length = 0
  t.equal((await jar.inject(app, { method: 'GET', url: '/private' })).statusCode, 401)
  t.match(events, [{ type: 'session.refused', reason: 'validator', source: 'cookie' }])
})

t.test('a token of an older key: key.rotated; once that key is removed: session.revoked (key_removed), session.refused', async (t) => {
  const k1 = { kid: 'k1', secret: 'site-a-old-0123456789abcdef0123456789' }
  const k2 = { kid: 'k2', secret: 'site-a-key-0123456789abcdef0123456789' }
  let ring = [k1]
  const { app, events } = await auditApp({ secret: () => ring })
  t.teardown(() => app.close())
  const jar = await signIn(app)
  const userId = events[0]!.userId
  events.length = 0
  ring = [k2, k1]
  t.equal((await jar.inject(app, { method: 'GET', url: '/private' })).statusCode, 200)
  t.same(typesOf(events), ['key.rotated'])
  t.match(events[0], { kid: 'k1', currentKid: 'k2', userId, reason: 'older_key' })
  events.length = 0
  t.equal((await jar.inject(app, { method: 'GET', url: '/private' })).statusCode, 200)
  t.same(events, [], 'told once, not on every request the cache serves')
  ring = [k2]
  t.equal((await jar.inject(app, { method: 'GET', url: '/private' })).statusCode, 401)
  t.same(typesOf(events), ['session.revoked', 'session.refused'])
  t.match(events[0], { by: 'key_removed', scope: 'session', userId })
  t.match(events[1], { reason: 'unknown_key', userId })
})

/** A memory store that fails like a Redis that went away, once `down` is set. */
class FailingStore extends MemoryStateStore {
  down = false
  override async get (key: string): Promise<string | undefined> {
    if (this.down) throw new StateStoreError('connection refused')
    return await super.get(key)
  }

  override async increment (...args: Parameters<MemoryStateStore['increment']>): ReturnType<MemoryStateStore['increment']> {
    if (this.down) throw new StateStoreError('connection refused')
    return await super.increment(...args)
  }
}

t.test('a state store that cannot answer: state_store.unavailable, once per failure', async (t) => {
  const store = new FailingStore()
  const { app, events } = await auditApp({ stateStore: store })
  t.teardown(() => app.close())
  // A session this instance has not seen yet is looked up in the store (revocation).
  const other = Fastify()
  await other.register(authPlugin, { secret: () => 'audit-tests-secret-0123456789abcdef', url: 'http://127.0.0.1' })
  t.teardown(() => other.close())
  const { token } = await other.auth.tokens.create({ user: { name: 'carol', id: 'local_c' } })
  store.down = true
  const res = await app.inject({ method: 'GET', url: '/private', headers: { 'x-jwt': token } })
  t.equal(res.statusCode, 503)
  t.same(typesOf(events), ['state_store.unavailable'])
  t.match(events[0], { reason: 'unavailable', outcome: 'failure', ip: '127.0.0.1' })
  events.length = 0
  const user = await app.inject({ method: 'GET', url: '/auth/user', headers: { 'x-jwt': token } })
  t.equal(user.statusCode, 503)
  t.same(typesOf(events), ['state_store.unavailable'], 'the session reader and the routes\' error handler tell it once')
  events.length = 0
  const login = await app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'alice', passwd: 'x' } })
  t.equal(login.statusCode, 503, login.body)
  t.same(typesOf(events).sort(), ['login.failed', 'state_store.unavailable'])
  t.match(events.find((e) => e.type === 'login.failed'), { reason: 'state_store_unavailable', status: 503 })
})

t.test('the session list\'s DELETE emits session.revoked (by revokeSession) per ended session', async (t) => {
  const { app, events } = await auditApp()
  t.teardown(() => app.close())
  const a = await signIn(app)
  await signIn(app)
  const userId = events[0]!.userId
  events.length = 0
  const res = await a.inject(app, { method: 'DELETE', url: '/auth/sessions' })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { revoked: 1 })
  t.same(typesOf(events), ['session.revoked'])
  t.match(events[0], { by: 'revokeSession', reason: 'session_list', userId })
})

t.test('events carry no token, password, secret or session id', async (t) => {
  const seen: AuditEvent[] = []
  const { app, events } = await auditApp()
  t.teardown(() => app.close())
  const jar = await signIn(app)
  await jar.inject(app, { method: 'GET', url: '/private', xsrf: false })
  await jar.inject(app, { method: 'GET', url: '/auth/logout' })
  seen.push(...events)
  const text = JSON.stringify(seen)
  t.ok(seen.length >= 3)
  t.notOk(/eyJ/.test(text), 'no JWT')
  t.notOk(text.includes('audit-pw-correct-horse'))
  t.notOk(text.includes('audit-tests-secret'))
})
