/**
 * The Redis stores behind Sentinel (1 master, 1 replica, 3 Sentinels on loopback): `redis-sentinel://` addresses,
 * two instances sharing logins and one-time values, the master killed (503s until the Sentinels promote the
 * replica, then recovery by itself; nothing taken twice, revocations kept), and the faults of a bad address: a
 * wrong master name, Sentinels that cannot be reached, TLS to a plain port (503 naming Redis only, nothing taken).
 */
import t from 'tap'
import { RedisStateStore } from '../../../stores/state/redis.js'
import { StateStoreError } from '../../../lib/state-store.js'
import { sentinelsForTests } from '../../helpers/redis-cluster.js'
import { freePort } from '../../helpers/redis-server.js'
import { sessionApp, tokenOf } from '../../helpers/session-app.js'

const sentinels = await sentinelsForTests(t, 'Redis Sentinel')
if (sentinels !== undefined) {
  const stores: RedisStateStore[] = []
  t.teardown(async () => { for (const s of stores) await s.close() })
  const open = (address: string): RedisStateStore => {
    const s = new RedisStateStore(address, { commandTimeoutMs: 1000 })
    stores.push(s)
    return s
  }
  const a = open(sentinels.address)
  const b = open(sentinels.address)

  t.test('two instances through the Sentinels: one-time values taken once, counters shared', async (t) => {
    for (let i = 0; i < 20; i++) t.equal(await a.setIfAbsent(`tok:${i}`, `v${i}`, 60_000, { client: '203.0.113.1' }), true)
    const takes = await Promise.all(Array.from({ length: 20 }, async (_, i) => await Promise.all([a.take(`tok:${i}`), b.take(`tok:${i}`)])))
    t.same(takes.map((pair) => pair.filter((v) => v !== undefined)), Array.from({ length: 20 }, (_, i) => [`v${i}`]))
    t.equal((await a.increment('n', 60_000)).count, 1)
    t.equal((await b.increment('n', 60_000)).count, 2)
  })

  t.test('bad addresses answer 503 naming Redis only, and consume nothing', async (t) => {
    const plain = `rediss://127.0.0.1:${sentinels.master.port}`
    const cases = [
      ['a wrong master name', sentinels.address.replace(/mymaster$/, 'nosuchmaster')],
      ['Sentinels that cannot be reached', `redis-sentinel://127.0.0.1:${await freePort()}/mymaster`],
      ['TLS to a plain port', plain]
    ] as const
    await a.set('kept', 'value', 60_000)
    for (const [what, address] of cases) {
      const s = open(address)
      const err = await s.take('kept').then(() => undefined, (e: unknown) => e)
      t.ok(err instanceof StateStoreError, `${what}: a 503`)
      t.match(err, { statusCode: 503, details: /^Redis (did not answer|refused the command)$/ }, what)
      t.notMatch(JSON.stringify(err) + String((err as Error).message), /127\.0\.0\.1|nosuchmaster|\d{4,5}/, `${what}: no internals`)
    }
    t.equal(await a.get('kept'), 'value', 'nothing consumed')
  })

  t.test('the master killed: 503 until the replica is promoted, then recovery by itself; nothing taken twice, revocations kept', async (t) => {
    const app = await sessionApp({ stateStore: sentinels.address })
    const other = await sessionApp({ stateStore: sentinels.address })
    t.teardown(async () => { await app.close(); await other.close() })
    const revoked = await app.login('bob')
    t.equal((await app.get(revoked, '/auth/logout')).status, 200)
    await a.set('one-time', 'secret', 60_000)
    // Replication is asynchronous: wait until the replica has the revocation and the entry (see the guide).
    await sentinels.replicated()
    await sentinels.master.kill()
    const killedAt = Date.now()
    let failures = 0
    let value: string | undefined
    // Tried until the Sentinels promote the replica (no deadline here: the file's time limit is the bound, and a
    // loaded machine only makes the failover later). How long it took is printed, not asserted.
    for (;;) {
      try { value = await b.take('one-time'); break } catch (err) {
        t.ok(err instanceof StateStoreError, 'a 503')
        failures++
      }
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const recoveredMs = Date.now() - killedAt
    t.equal(value, 'secret', `recovered after ${recoveredMs} ms and ${failures} 503s`)
    t.equal(await a.take('one-time'), undefined, 'taken once only')
    t.equal((await other.fetch(`${other.base}/private`, { headers: { 'x-jwt': tokenOf(revoked) } })).status, 401, 'the revocation of before the kill holds')
    const fresh = await app.login('carol')
    t.equal((await other.fetch(`${other.base}/private`, { headers: { 'x-jwt': tokenOf(fresh) } })).status, 200, 'new logins work')
  })
}
