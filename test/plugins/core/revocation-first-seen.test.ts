/**
 * A token seen for the first time by an instance: its revocation marks are read from the in-memory store without
 * a promise (plugins/core/sessions/revocation.ts `revoked`), and with a promise from any other store, including a subclass
 * of the memory store; a verification with an asynchronous secret reader takes the promise path. Either way a
 * revoked session, or one older than its user's "not before" mark, is refused, and a good one is answered.
 */
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import Fastify, { type FastifyInstance } from 'fastify'
import { authPlugin, type AuthOptions } from '../../../auth.js'
import { MemoryStateStore } from '../../../stores/state/memory.js'

const SECRET = 'first-seen-tests-secret-0123456789abcdef-01'

async function app (stateStore: MemoryStateStore, opts: Partial<AuthOptions> = {}): Promise<FastifyInstance> {
  const a = Fastify()
  await a.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1', avatar: false, stateStore, ...opts })
  a.get('/private', { preHandler: a.auth.authenticate }, async (req) => ({ name: req.user!.name }))
  await a.ready()
  return a
}

/** Counts reads, so that a test can tell which path asked the store. */
class CountingStore extends MemoryStateStore {
  gets = 0
  override async get (key: string): Promise<string | undefined> {
    this.gets++
    return await super.get(key)
  }
}

type Variant = [label: string, store: () => MemoryStateStore, opts: Partial<AuthOptions>]
const variants: Variant[] = [
  ['memory store (read without a promise)', () => new MemoryStateStore(), {}],
  ['a subclass of the memory store (read through get)', () => new CountingStore(), {}],
  ['an asynchronous secret reader', () => new MemoryStateStore(), { secret: async () => SECRET }]
]

for (const [label, makeStore, opts] of variants) {
  t.test(`${label}: revoked sessions and users are refused at first sight`, async (t) => {
    const store = makeStore()
    // `issuer` signs and revokes; `fresh` shares its store, starts afterwards (so it heard none of the
    // revocations: only the store knows them) and has never seen the tokens.
    const issuer = await app(store, opts)
    t.teardown(() => issuer.close())
    const get = async (a: FastifyInstance, token: string) => await a.inject({ url: '/private', headers: { 'x-jwt': token } })
    const good = await issuer.auth.tokens.create({ user: { name: 'good', id: 'local_good' } })
    const revoked = await issuer.auth.tokens.create({ user: { name: 'gone', id: 'local_gone' } })
    const older = await issuer.auth.tokens.create({ user: { name: 'old', id: 'local_old' } })
    await issuer.auth.revokeSession(revoked.claims.jti)
    // The user's mark must come after the session started (it is compared in milliseconds).
    const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() + 1000 })
    t.teardown(() => clock.uninstall())
    await issuer.auth.revokeUser('local_old')
    const fresh = await app(store, opts)
    t.teardown(() => fresh.close())

    const ok = await get(fresh, good.token)
    t.equal(ok.statusCode, 200)
    t.same(ok.json(), { name: 'good' })
    const r1 = await get(fresh, revoked.token)
    t.equal(r1.statusCode, 401)
    t.equal(r1.json().code, 'GATEHOUSE_SESSION_REVOKED')
    const r2 = await get(fresh, older.token)
    t.equal(r2.statusCode, 401)
    t.equal(r2.json().code, 'GATEHOUSE_SESSION_REVOKED')
    if (store instanceof CountingStore) t.ok(store.gets > 0, 'the subclass was asked through its get')
    const bad = await get(fresh, good.token.slice(0, -2) + (good.token.endsWith('AA') ? 'BB' : 'AA'))
    t.equal(bad.statusCode, 401, 'a bad signature is refused')
  })
}

t.test('revokeUser ends a session that started in the same millisecond: from the cache and at first sight', async (t) => {
  // Both times are milliseconds; a login and a revokeUser can share one (a fast machine did, in CI).
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const store = new MemoryStateStore()
  const issuer = await app(store, { providers: [{ kind: 'direct', name: 'local', checker: () => true }] })
  t.teardown(() => issuer.close())
  const login = await issuer.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'same', passwd: 'x' } })
  t.equal(login.statusCode, 200)
  const cookies = Object.fromEntries(login.cookies.map((c) => [c.name, c.value]))
  const xsrf = { 'x-xsrf-token': cookies['XSRF-TOKEN']! }
  t.equal((await issuer.inject({ url: '/private', cookies, headers: xsrf })).statusCode, 200, 'served, and now cached')
  const token = await issuer.auth.tokens.create({ user: { name: 'same', id: login.json().id } })
  await issuer.auth.revokeUser(login.json().id)
  const cached = await issuer.inject({ url: '/private', cookies, headers: xsrf })
  t.equal(cached.statusCode, 401, 'the cached session is refused')
  t.equal(cached.json().code, 'GATEHOUSE_SESSION_REVOKED')
  const fresh = await app(store)
  t.teardown(() => fresh.close())
  const first = await fresh.inject({ url: '/private', headers: { 'x-jwt': token.token } })
  t.equal(first.statusCode, 401, 'refused at first sight on another instance (the store\'s mark)')
  t.equal(first.json().code, 'GATEHOUSE_SESSION_REVOKED')
})
