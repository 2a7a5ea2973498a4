/**
 * Revocations must survive what the state store forgets. A Redis restarted without persistence used to come
 * back empty and a new instance accepted a token logged out before; now the store holds a revocation epoch,
 * and when it is gone every session that started before its return is refused (it may have been revoked).
 * The core also warns once at startup when Redis's configuration can lose entries (no persistence, eviction).
 * Real redis-server, stopped and started again (it keeps nothing: --save '' --appendonly no).
 */
import t from 'tap'
import { Redis } from 'ioredis'
import { funcLogger } from '../../../lib/logging/logger.js'
import { client } from '../../helpers/client.js'
import { redisForTests } from '../../helpers/redis-server.js'
import { eventually } from '../../helpers/eventually.js'
import { sessionApp, tokenOf, type SessionApp } from '../../helpers/session-app.js'

/** The status of a request with `token` on `s`, once the instance's Redis answers again (503 meanwhile). */
async function statusOnceBack (s: SessionApp, token: string): Promise<number> {
  return await eventually(async () => (await s.client().fetch('/private', { headers: { 'x-jwt': token } })).status, (status) => status !== 503, 25)
}

const redis = await redisForTests(t, 'revocations across a Redis restart')
if (redis !== undefined) {

  t.test('Redis restarted empty: a token logged out before is refused by a new instance and an old one', async (t) => {
    const lines: string[] = []
    const a = await sessionApp({ stateStore: redis.url, logger: funcLogger((l) => { lines.push(l) }) })
    const b = await sessionApp({ stateStore: redis.url })
    t.teardown(async () => { await a.close(); await b.close() })
    t.equal(lines.filter((l) => /Redis keeps nothing across a restart/.test(l)).length, 1, 'the missing persistence was named at startup, once')

    const out = await a.login('mallory')
    const kept = await a.login('nina')
    const revoked = tokenOf(out)
    t.equal(await statusOnceBack(b, revoked), 200, 'control: B serves (and caches) the session')
    t.equal((await a.get(out, '/auth/logout')).status, 200, 'logged out on A')
    t.equal(await statusOnceBack(b, revoked), 401)

    await redis.stop()
    await redis.start()
    const c = await sessionApp({ stateStore: redis.url })
    t.teardown(() => c.close())
    t.equal(await statusOnceBack(c, revoked), 401, 'a new instance refuses the token whose revocation was lost')
    t.equal(await statusOnceBack(b, revoked), 401, 'and so does B, once its cache is gone')
    t.equal(await statusOnceBack(c, tokenOf(kept)), 401, 'every session of before the restart is refused: its revocation may be lost')
    const fresh = await c.login('nina')
    for (const s of [a, b, c]) t.equal(await statusOnceBack(s, tokenOf(fresh)), 200, 'a session started after it is served everywhere')
    t.equal(await statusOnceBack(a, tokenOf(kept)), 401, 'A refuses the old session too')
    t.equal(lines.filter((l) => /the state store lost its revocations/.test(l)).length, 1, 'A noticed the loss, and said so once')
  })

  t.test('a Redis that may evict is named at startup', async (t) => {
    const admin = new Redis(redis.url)
    t.teardown(async () => {
      await admin.config('SET', 'maxmemory', '0')
      await admin.config('SET', 'maxmemory-policy', 'noeviction')
      admin.disconnect()
    })
    await admin.config('SET', 'maxmemory', '100mb')
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru')
    const lines: string[] = []
    const s = await sessionApp({ stateStore: redis.url, logger: funcLogger((l) => { lines.push(l) }) })
    t.teardown(() => s.close())
    t.same(lines.filter((l) => /evicts keys when full/.test(l)), ['[WARN] state store: Redis evicts keys when full (maxmemory-policy allkeys-lru): revocations and one-time tokens can be lost; set maxmemory-policy noeviction'])
    await admin.config('SET', 'maxmemory-policy', 'noeviction')
    const quiet: string[] = []
    const n = await sessionApp({ stateStore: redis.url, logger: funcLogger((l) => { quiet.push(l) }) })
    t.teardown(() => n.close())
    t.same(quiet.filter((l) => /evicts/.test(l)), [], 'noeviction: nothing to say')
  })

  t.test('a mangled epoch counts as lost; a Redis that refuses CONFIG GET gets no warning', async (t) => {
    const admin = new Redis(redis.url)
    t.teardown(async () => {
      await admin.call('ACL', 'DELUSER', 'limited')
      admin.disconnect()
    })
    const a = await sessionApp({ stateStore: redis.url })
    t.teardown(() => a.close())
    const before = await a.login('oscar')
    t.equal(await statusOnceBack(a, tokenOf(before)), 200, 'control')
    await admin.set('gatehouse:{revocation-epoch}', 'not a time')
    const lines: string[] = []
    // A user that may not run CONFIG (as on managed services): the check says nothing rather than fail.
    await admin.call('ACL', 'SETUSER', 'limited', 'on', '>limited-pw', '~*', '&*', '+@all', '-config')
    const b = await sessionApp({ stateStore: `redis://limited:limited-pw@127.0.0.1:${redis.port}`, logger: funcLogger((l) => { lines.push(l) }) })
    t.teardown(() => b.close())
    t.same(lines.filter((l) => /^\[WARN\] state store:/.test(l)), [], 'no durability warning without CONFIG')
    t.match(await admin.get('gatehouse:{revocation-epoch}'), /^\d+$/, 'the epoch was set again')
    t.equal(await statusOnceBack(b, tokenOf(before)), 401, 'a session of before it is refused')
    t.equal(await statusOnceBack(b, tokenOf(await b.login('oscar'))), 200, 'a new one is served')
  })
}
