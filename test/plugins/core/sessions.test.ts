/**
 * "Where you're signed in" over real HTTP on the in-memory store: the list, ending one session or all others,
 * every bad input refused with a code and nothing revoked, the host API, the bound, last-seen times.
 */
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { client } from '../../helpers/client.js'
import { tokenOf } from '../../helpers/session-app.js'
import { FIREFOX_LINUX, SAFARI_IPHONE, listApp } from '../../helpers/sessions-app.js'
import { MemoryStateStore } from '../../../stores/state/memory.js'
import { indexKey } from '../../../stores/state/session-index.js'

interface Listed { id: string; current: boolean; provider: string | null; createdAt: string; lastSeenAt: string; expiresAt: string; device: string; ip: string | null }
const NOT_FOUND = { error: 'not found', details: 'no such session', code: 'GATEHOUSE_NOT_FOUND' }

t.test('GET /auth/sessions lists the user\'s sessions: current first, provider, device, address, times', async (t) => {
  const s = await listApp()
  t.teardown(s.close)
  const laptop = await s.loginAs('alice', FIREFOX_LINUX)
  const phone = await s.loginAs('alice', SAFARI_IPHONE)
  await s.loginAs('bob')
  const r = await s.list(phone)
  t.equal(r.status, 200)
  const list = await r.json() as Listed[]
  t.equal(list.length, 2, 'alice\'s two sessions, not bob\'s')
  t.same(list.map((e) => [e.current, e.device, e.provider, e.ip]), [[true, 'Safari on iOS', 'local', '127.0.0.1'], [false, 'Firefox on Linux', 'local', '127.0.0.1']])
  t.equal(list[0]!.id, phone.jar.get('XSRF-TOKEN'), 'the id is the session\'s jti')
  t.equal(list[1]!.id, laptop.jar.get('XSRF-TOKEN'))
  for (const e of list) {
    t.notOk(JSON.stringify(e).includes(tokenOf(laptop)) || JSON.stringify(e).includes(tokenOf(phone)), 'no token in the list')
    t.ok(Date.parse(e.createdAt) <= Date.parse(e.lastSeenAt) && Date.parse(e.lastSeenAt) < Date.parse(e.expiresAt), 'ISO times in order')
    t.equal(Date.parse(e.expiresAt) - Date.parse(e.createdAt) >= 31 * 86_400_000 - 1000, true, 'expires with the session\'s lifetime (31 days)')
  }
  const anonymous = await s.client().fetch('/auth/sessions')
  t.equal(anonymous.status, 401)
  t.equal((await anonymous.json()).code, 'GATEHOUSE_UNAUTHORIZED')
  const noXsrf = await laptop.fetch('/auth/sessions')
  t.equal(noXsrf.status, 401, 'a session route: the XSRF header is required')
  t.equal((await noXsrf.json()).code, 'GATEHOUSE_XSRF')
})

t.test('DELETE /auth/sessions/:id ends that session from its next request on; the list drops it', async (t) => {
  const s = await listApp()
  t.teardown(s.close)
  const laptop = await s.loginAs('alice')
  const phone = await s.loginAs('alice', SAFARI_IPHONE)
  t.equal((await s.get(phone)).status, 200, 'control: the phone is signed in (and cached)')
  const r = await s.end(laptop, phone.jar.get('XSRF-TOKEN'))
  t.equal(r.status, 204)
  t.equal(await r.text(), '')
  const refused = await s.get(phone)
  t.equal(refused.status, 401)
  t.equal((await refused.json()).code, 'GATEHOUSE_SESSION_REVOKED')
  t.equal((await s.get(laptop)).status, 200, 'the laptop stays signed in')
  const list = await (await s.list(laptop)).json() as Listed[]
  t.same(list.map((e) => e.id), [laptop.jar.get('XSRF-TOKEN')])
  const again = await s.end(laptop, phone.jar.get('XSRF-TOKEN'))
  t.equal(again.status, 404, 'an ended session is not found again')
  t.same(await again.json(), NOT_FOUND)
})

t.test('DELETE /auth/sessions/:id of the current session signs this browser out', async (t) => {
  const s = await listApp()
  t.teardown(s.close)
  const laptop = await s.loginAs('alice')
  const jti = laptop.jar.get('XSRF-TOKEN')!
  const token = tokenOf(laptop)
  const r = await s.end(laptop, jti)
  t.equal(r.status, 204)
  t.equal(laptop.jar.get('JWT'), undefined, 'the session cookie is cleared')
  const replay = await s.client().fetch('/private', { headers: { cookie: `JWT=${token}; XSRF-TOKEN=${jti}`, 'x-xsrf-token': jti } })
  t.equal(replay.status, 401, 'and the token is revoked')
})

t.test('DELETE /auth/sessions ends every session but the current one', async (t) => {
  const s = await listApp()
  t.teardown(s.close)
  const here = await s.loginAs('alice')
  const others = [await s.loginAs('alice'), await s.loginAs('alice', SAFARI_IPHONE)]
  const bob = await s.loginAs('bob')
  const r = await s.end(here)
  t.equal(r.status, 200)
  t.same(await r.json(), { revoked: 2 })
  for (const c of others) t.equal((await s.get(c)).status, 401, 'another session of alice ended')
  t.equal((await s.get(here)).status, 200, 'the current one lives')
  t.equal((await s.get(bob)).status, 200, 'bob is untouched')
  t.same((await (await s.list(here)).json() as Listed[]).map((e) => e.current), [true])
})

t.test('bad input: another user\'s id, a made-up id, an expired session, no XSRF, cross-site: refused with a code, nothing revoked', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const s = await listApp({ session: { maxAge: '2h', tokenDuration: '15m' } })
  t.teardown(s.close)
  const alice = await s.loginAs('alice')
  const bob = await s.loginAs('bob')
  const bobId = bob.jar.get('XSRF-TOKEN')!
  const stillThere = async (): Promise<void> => {
    t.equal((await s.get(bob)).status, 200, 'bob is still signed in')
    t.equal((await s.get(alice)).status, 200, 'alice is still signed in')
  }

  const foreign = await s.end(alice, bobId)
  t.equal(foreign.status, 404, 'another user\'s session')
  t.same(await foreign.json(), NOT_FOUND)
  await stillThere()
  const madeUp = await s.end(alice, 'AAAAAAAAAAAAAAAAAAAAAA')
  t.equal(madeUp.status, 404, 'a made-up id')
  t.same(await madeUp.json(), NOT_FOUND)
  const long = await s.end(alice, 'x'.repeat(300))
  t.equal(long.status, 414, 'an id longer than any (Fastify\'s own limit on route parameters)')
  t.match(await long.json(), { code: 'FST_ERR_MAX_PARAM_LENGTH' })

  const noXsrf = await s.end(alice, alice.jar.get('XSRF-TOKEN'), {})
  t.equal(noXsrf.status, 401, 'without the XSRF header')
  t.equal((await noXsrf.json()).code, 'GATEHOUSE_XSRF')
  const crossSite = await s.end(alice, alice.jar.get('XSRF-TOKEN'), { 'x-xsrf-token': alice.jar.get('XSRF-TOKEN')!, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' })
  t.equal(crossSite.status, 403, 'cross-site')
  t.equal((await crossSite.json()).code, 'GATEHOUSE_CROSS_SITE')
  const crossSiteAll = await s.end(alice, undefined, { 'x-xsrf-token': alice.jar.get('XSRF-TOKEN')!, 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' })
  t.equal(crossSiteAll.status, 403, 'cross-site, every other session')
  await stillThere()

  // An old session of alice's, past its lifetime: no longer listed, not found, nothing revoked.
  const old = await s.loginAs('alice')
  const oldId = old.jar.get('XSRF-TOKEN')!
  clock.tick(2 * 3_600_000 + 60_000)
  const fresh = await s.loginAs('alice')
  const listed = await (await s.list(fresh)).json() as Listed[]
  t.same(listed.map((e) => e.id), [fresh.jar.get('XSRF-TOKEN')], 'expired sessions are not listed')
  const expired = await s.end(fresh, oldId)
  t.equal(expired.status, 404, 'an expired session')
  t.same(await expired.json(), NOT_FOUND)
  t.equal(await s.app.auth.tokens.parse(tokenOf(fresh)).then(() => 'live'), 'live', 'the caller\'s session was not touched')
})

t.test('host API: listSessions(userId) for an admin page, revokeSession(id) ends one, revokeUser empties the list', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const s = await listApp()
  t.teardown(s.close)
  const a = await s.loginAs('alice')
  const b = await s.loginAs('alice', SAFARI_IPHONE)
  const userId = (await (await s.get(a, '/auth/user')).json()).id as string
  const listed = await s.app.auth.listSessions(userId)
  t.equal(listed.length, 2)
  t.same(listed.map((e) => e.current), [false, false], 'no session is current for the host')
  await s.app.auth.revokeSession(b.jar.get('XSRF-TOKEN')!)
  t.equal((await s.get(b)).status, 401, 'the session revoked by the host is refused')
  t.same((await s.app.auth.listSessions(userId)).map((e) => e.id), [a.jar.get('XSRF-TOKEN')], 'and no longer listed')
  clock.tick(1)
  await s.app.auth.revokeUser(userId)
  t.same(await s.app.auth.listSessions(userId), [], 'revokeUser: none left')
  t.same(await s.app.auth.listSessions('nobody'), [], 'a user without sessions')
  await t.rejects(s.app.auth.listSessions(''), { statusCode: 400 }, 'a user id that is not 1-256 characters')
  await t.rejects(s.app.auth.listSessions('x'.repeat(257)), { statusCode: 400 })
})

t.test('thousands of logins cannot grow a user\'s list past its bound: the least recently seen go', async (t) => {
  const store = new MemoryStateStore()
  const s = await listApp({ stateStore: store, rateLimit: false, revocation: { sessionList: { maxPerUser: 5 } } })
  t.teardown(async () => { await s.close(); await store.close() })
  const kept = await s.loginAs('alice')
  const userId = (await (await s.get(kept, '/auth/user')).json()).id as string
  const request = { headers: { 'user-agent': FIREFOX_LINUX }, ip: '10.0.0.1' } as never
  for (let i = 0; i < 2000; i++) {
    const { claims } = await s.app.auth.tokens.create({ user: { name: 'alice', id: userId } })
    await s.sessions.login(request, claims, 'local')
  }
  const stored = JSON.parse((await store.get(indexKey(userId)))!) as unknown[]
  t.equal(stored.length, 5, 'the stored list holds 5 entries')
  const listed = await s.app.auth.listSessions(userId)
  t.equal(listed.length, 5)
  t.notOk(listed.some((e) => e.id === kept.jar.get('XSRF-TOKEN')), 'the oldest were dropped from the list')
  t.equal((await s.get(kept)).status, 200, 'dropped from the list is not ended')
})

t.test('last seen: written at most once a minute per session, batched, with the address as throttling sees it', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const s = await listApp({ revocation: { sessionList: { ip: 'hash' } } })
  t.teardown(s.close)
  const c = await s.loginAs('alice')
  const first = (await (await s.list(c)).json() as Listed[])[0]!
  t.match(first.ip, /^[A-Za-z0-9_-]{16}$/, 'a hash, not the address')
  t.not(first.ip, '127.0.0.1')
  clock.tick(30_000)
  await s.get(c)
  await s.sessions.flush()
  t.equal((await (await s.list(c)).json() as Listed[])[0]!.lastSeenAt, first.lastSeenAt, 'within the minute: unchanged')
  clock.tick(31_000)
  await s.get(c)
  t.equal((await (await s.list(c)).json() as Listed[])[0]!.lastSeenAt, first.lastSeenAt, 'not written by the request itself')
  await s.sessions.flush()
  const later = (await (await s.list(c)).json() as Listed[])[0]!
  t.equal(Date.parse(later.lastSeenAt) - Date.parse(first.lastSeenAt) >= 60_000, true, 'written by the batch after a minute')
  t.equal(later.ip, first.ip, 'the same address, the same hash')
})

t.test('a session the app created itself enters the list at its first refresh', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const s = await listApp({}, (app) => {
    app.post('/own-login', async (_req, reply) => { await app.auth.tokens.set(reply, { user: { name: 'zed', id: 'own_zed' } }); return { ok: true } })
  })
  t.teardown(s.close)
  const c = s.client()
  t.equal((await c.fetch('/own-login', { method: 'POST' })).status, 200)
  t.same(await s.app.auth.listSessions('own_zed'), [], 'not listed before it is refreshed')
  clock.tick(16 * 60_000)
  t.equal((await s.get(c)).status, 200, 'refreshed')
  await s.sessions.flush()
  const listed = await s.app.auth.listSessions('own_zed')
  t.same(listed.map((e) => [e.id, e.provider]), [[c.jar.get('XSRF-TOKEN'), null]], 'listed, without a provider')
})

t.test('the list is off with revocation.sessionList: false or revocation: false', async (t) => {
  for (const revocation of [{ sessionList: false as const }, false as const]) {
    const s = await listApp({ revocation })
    const c = await s.login('alice')
    const r = await s.get(c, '/auth/sessions')
    t.equal(r.status, 404, 'no route')
    t.equal((await r.json()).code, 'GATEHOUSE_NOT_FOUND')
    await t.rejects(s.app.auth.listSessions('x'), { name: 'OptionsError' })
    await s.close()
  }
})
