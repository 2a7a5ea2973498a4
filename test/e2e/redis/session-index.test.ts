/**
 * The session list on a real Redis shared by two instances: what A writes B lists, a session ended from A is
 * refused on B, the per-user hash stays within its bound and its slot, and the Redis operations an authenticated
 * request costs, counted with `INFO commandstats`.
 */
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { Redis } from 'ioredis'
import { RedisServer, redisMissingReason } from '../../helpers/redis-server.js'
import { FIREFOX_LINUX, SAFARI_IPHONE, listApp, type ListApp } from '../../helpers/sessions-app.js'
import { RedisStateStore } from '../../../stores/state/redis.js'
import { RedisSessionIndex } from '../../../stores/state/session-index-redis.js'
import { funcLogger } from '../../../lib/logging/logger.js'
import type { IndexedSession } from '../../../stores/state/session-index.js'

const skip = redisMissingReason()

interface Listed { id: string; current: boolean; provider: string | null; device: string; ip: string | null; lastSeenAt: string }

async function userIdOf (s: ListApp, c: Awaited<ReturnType<ListApp['loginAs']>>): Promise<string> {
  return (await (await s.get(c, '/auth/user')).json()).id as string
}

/** Calls per command since the server started, from `INFO commandstats` (the INFO calls themselves left out). */
async function commandCalls (redis: Redis): Promise<Map<string, number>> {
  const calls = new Map<string, number>()
  for (const m of (await redis.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (m[1] !== 'info') calls.set(m[1]!, Number(m[2]))
  }
  return calls
}

function callsSince (before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const d = new Map<string, number>()
  for (const [cmd, n] of after) if (n - (before.get(cmd) ?? 0) > 0) d.set(cmd, n - (before.get(cmd) ?? 0))
  return d
}

t.test('two instances on one Redis: B lists what A wrote; a session ended from A is refused on B', { skip }, async (t) => {
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())
  const a = await listApp({ stateStore: redis.url })
  t.teardown(a.close)
  const b = await listApp({ stateStore: redis.url })
  t.teardown(b.close)

  const laptop = await a.loginAs('alice', FIREFOX_LINUX)
  const phone = await b.loginAs('alice', SAFARI_IPHONE)
  t.equal((await b.get(phone)).status, 200, 'control: the phone is signed in on B (and cached there)')

  const onB = await (await b.list(phone)).json() as Listed[]
  t.same(onB.map((e) => [e.id, e.current, e.device, e.provider, e.ip]), [
    [phone.jar.get('XSRF-TOKEN'), true, 'Safari on iOS', 'local', '127.0.0.1'],
    [laptop.jar.get('XSRF-TOKEN'), false, 'Firefox on Linux', 'local', '127.0.0.1']
  ], 'B lists the session A wrote')

  const ended = await a.end(laptop, phone.jar.get('XSRF-TOKEN'))
  t.equal(ended.status, 204, 'ended from A')
  const refused = await b.get(phone)
  t.equal(refused.status, 401, 'refused on B from its next request on')
  t.equal((await refused.json()).code, 'GATEHOUSE_SESSION_REVOKED')
  t.same((await (await b.list(laptop)).json() as Listed[]).map((e) => e.id), [laptop.jar.get('XSRF-TOKEN')], 'B no longer lists it')

  // And the other way: every other session, ended from B, is refused on A.
  const tablet = await a.loginAs('alice')
  t.equal((await a.get(tablet)).status, 200)
  const others = await b.end(laptop)
  t.same(await others.json(), { revoked: 1 })
  t.equal((await a.get(tablet)).status, 401, 'ended from B, refused on A')
  t.equal((await a.get(laptop)).status, 200, 'the current session lives')

  const foreign = await b.loginAs('bob')
  const notYours = await a.end(foreign, laptop.jar.get('XSRF-TOKEN'))
  t.equal(notYours.status, 404, 'bob cannot end alice\'s session from any instance')
  t.equal((await a.get(laptop)).status, 200)
})

t.test('two instances on one Redis: "end all others" from B ends a session A serves from its cache that the list dropped', { skip }, async (t) => {
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())
  const opts = { stateStore: redis.url, revocation: { sessionList: { maxPerUser: 1 } } }
  const a = await listApp(opts)
  t.teardown(a.close)
  const b = await listApp(opts)
  t.teardown(b.close)
  const old = await a.loginAs('alice', FIREFOX_LINUX)
  t.equal((await a.get(old)).status, 200, 'control: served by A, and cached there')
  const current = await b.loginAs('alice', SAFARI_IPHONE)
  t.same((await (await b.list(current)).json() as Listed[]).map((e) => e.id), [current.jar.get('XSRF-TOKEN')], 'the old session is no longer listed')
  const ended = await b.end(current)
  t.same(await ended.json(), { revoked: 0 }, 'no listed session but the current one')
  const refused = await a.get(old)
  t.equal(refused.status, 401, 'the dropped session is refused on A from its next request on')
  t.equal((await refused.json()).code, 'GATEHOUSE_SESSION_REVOKED')
  t.equal((await a.get(current)).status, 200, 'the session that asked lives on A')
  t.equal((await b.get(current)).status, 200, 'and on B')
})

t.test('Redis: one hash per user, hash-tagged, living as long as its longest session, bounded', { skip }, async (t) => {
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())
  const peek = new Redis(redis.url)
  t.teardown(() => peek.disconnect())
  const s = await listApp({ stateStore: redis.url, session: { maxAge: '2h' }, revocation: { sessionList: { maxPerUser: 7 } } })
  t.teardown(s.close)
  const c = await s.loginAs('alice')
  const userId = await userIdOf(s, c)
  const key = `gatehouse:sessions:{${userId}}`
  t.equal(await peek.type(key), 'hash', 'the user part is in braces: one slot on a Cluster')
  const pttl = await peek.pttl(key)
  t.ok(pttl > 2 * 3_600_000 - 60_000 && pttl <= 2 * 3_600_000, `expires with the session (${pttl} ms)`)
  t.notOk(Object.values(await peek.hgetall(key)).some((v) => v.includes(c.jar.get('JWT')!)), 'no token stored')

  const store = new RedisStateStore(redis.url)
  t.teardown(() => store.close())
  const index = new RedisSessionIndex(store)
  const now = Date.now()
  for (let i = 0; i < 1500; i++) {
    const id = `login-${i}`
    const create: IndexedSession = { id, provider: 'local', createdAt: now, lastSeenAt: now + i, expiresAt: now + 3_600_000, device: 'curl', ip: null }
    await index.merge(userId, [{ id, lastSeenAt: now + i, ip: null, create }], 7)
  }
  t.equal(await peek.hlen(key), 7, '1500 logins, 7 entries: the bound holds in Redis')
  t.same((await index.list(userId)).map((e) => e.id).sort(), ['login-1493', 'login-1494', 'login-1495', 'login-1496', 'login-1497', 'login-1498', 'login-1499'], 'the most recently seen are kept')
  await index.merge(userId, [{ id: 'login-1499', lastSeenAt: now + 10_000, ip: '10.0.0.9' }], 7)
  t.match((await index.list(userId)).find((e) => e.id === 'login-1499'), { lastSeenAt: now + 10_000, ip: '10.0.0.9' }, 'a sighting moves last seen')
  await index.merge(userId, [{ id: 'gone', lastSeenAt: now, ip: null }], 7)
  t.notOk((await index.list(userId)).some((e) => e.id === 'gone'), 'a sighting without an entry adds nothing')
  await peek.hset(key, 'junk', 'not json')
  t.equal((await index.list(userId)).length, 7, 'a mangled entry is skipped')
})

t.test('Redis operations per authenticated request (INFO commandstats): last-seen writes batched', { skip }, async (t) => {
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())
  const stats = new Redis(redis.url)
  t.teardown(() => stats.disconnect())
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const s = await listApp({ stateStore: redis.url })
  t.teardown(s.close)
  const clients = [await s.loginAs('alice'), await s.loginAs('alice', SAFARI_IPHONE), await s.loginAs('bob'), await s.loginAs('bob', SAFARI_IPHONE)]
  const requestsOf = clients.map((c) => ({ cookie: `JWT=${c.jar.get('JWT')!}; XSRF-TOKEN=${c.jar.get('XSRF-TOKEN')!}`, 'x-xsrf-token': c.jar.get('XSRF-TOKEN')! }))

  const MINUTES = 10
  const PER_MINUTE = 60
  const before = await commandCalls(stats)
  let requests = 0
  for (let minute = 0; minute < MINUTES; minute++) {
    for (let i = 0; i < PER_MINUTE; i++) {
      for (const headers of requestsOf) {
        const r = await s.app.inject({ url: '/private', headers })
        if (r.statusCode !== 200) throw new Error(`request answered ${r.statusCode}`)
        requests++
      }
      clock.tick(60_000 / PER_MINUTE)
    }
    // The batch's timer, at its most frequent: every sighting of the minute is written before the next.
    await s.sessions.flush()
  }
  const calls = callsSince(before, await commandCalls(stats))
  const total = [...calls.values()].reduce((x, y) => x + y, 0)
  const listWrites = calls.get('eval') ?? 0
  t.comment(`${requests} authenticated requests; Redis commands: ${JSON.stringify(Object.fromEntries(calls))}`)
  t.comment(`session list: ${listWrites} writes = ${(listWrites / requests).toFixed(4)} per request (1/${Math.round(requests / listWrites)}); every command: ${(total / requests).toFixed(4)} per request`)
  t.ok(listWrites > 0, 'last-seen times were written')
  t.ok(listWrites <= MINUTES * 2, 'at most one write per user per minute (two users)')
  t.ok(listWrites / requests <= 1 / 60, 'at most 1/60 of a Redis operation per request for the list')
  const listed = await s.app.auth.listSessions(await userIdOf(s, clients[0]!))
  // time bound: on the fake clock, which only the loop above moves.
  t.ok(listed.every((e) => Date.parse(e.lastSeenAt) >= Date.now() - 2 * 60_000), 'and the list shows recent last-seen times')
})

t.test('Redis down: a login still signs in (its list entry is logged as lost), the list answers 503, nothing crashes', { skip }, async (t) => {
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())
  const lines: string[] = []
  const s = await listApp({ stateStore: redis.url, rateLimit: false, logger: funcLogger((l) => lines.push(l)) })
  t.teardown(s.close)
  const c = await s.loginAs('alice')
  t.equal((await s.get(c)).status, 200, 'control')
  await redis.stop()
  const during = await s.loginAs('alice', SAFARI_IPHONE)
  t.ok(during.jar.get('JWT'), 'signed in while Redis is down')
  t.ok(lines.some((l) => /session list: login of .* not recorded/.test(l)), 'the lost entry is logged')
  const list = await s.list(c)
  t.equal(list.status, 503)
  t.same(await list.json(), { error: 'state store unavailable', details: 'Redis did not answer', code: 'GATEHOUSE_STATE_STORE' })
  const end = await s.end(c)
  t.equal(end.status, 503, 'ending sessions fails closed')
  s.sessions.sighted({ seenAt: 0, subject: { jti: 'x', userId: 'u', authTime: 0 }, claims: { jti: 'x', exp: 2e9, iat: 0, auth_time: 1 } } as never, { headers: {}, ip: '10.0.0.1' } as never, Date.now())
  await s.sessions.flush()
  t.ok(lines.some((l) => /session list: last-seen times not written/.test(l)), 'a failed batch is logged, not thrown')
})
