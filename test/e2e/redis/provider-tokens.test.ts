/**
 * The provider's tokens on two instances sharing a real redis-server (issue 36 item 2, "one refresh at a time"):
 * against a stand-in that rotates refresh tokens and refuses a spent one, an expired token asked for on both
 * instances at once is refreshed exactly once upstream, both answer the new token and the grant stays alive; a
 * refresh the provider refuses is one refusal, answered on both; a lock left behind by an instance that died
 * delays the refresh only until it expires.
 */
import t, { type Test } from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { EventEmitter, once } from 'node:events'
import { RedisStateStore } from '../../../stores/state/index.js'
import { client, type Client } from '../../helpers/client.js'
import { RedisServer, redisMissingReason } from '../../helpers/redis-server.js'
import { acmeToken, signInWithAcme, startAcme, startAcmeApp, type Acme } from '../../helpers/acme-tokens.js'

const missing = redisMissingReason()
if (missing !== undefined) {
  t.test('provider tokens on two instances sharing Redis', { skip: missing }, async () => {})
} else {
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())

  interface Pair {
    acme: Acme
    onA: Client
    onB: Client
    userId: string
    clock: FakeTimers.InstalledClock
    /** Resolves when an instance finds the refresh lock taken (it then waits for the other's token). */
    lockTaken: () => Promise<void>
  }

  /**
   * The stand-in, two instances on one Redis (each its own connection, as two processes), a user signed in on A
   * and the same browser's cookies sent to B.
   */
  async function pair (t: Test): Promise<Pair> {
    const clock = FakeTimers.install({ now: Date.now(), toFake: ['Date'] })
    t.teardown(() => clock.uninstall())
    const acme = await startAcme()
    t.teardown(() => acme.app.close())
    const locks = new EventEmitter()
    const store = (): RedisStateStore => {
      const s = new RedisStateStore(redis.url)
      t.teardown(() => s.close())
      const setIfAbsent = s.setIfAbsent.bind(s)
      s.setIfAbsent = async (key, value, ttlMs) => {
        const set = await setIfAbsent(key, value, ttlMs)
        if (!set && key.includes('provider-tokens-refresh:')) locks.emit('taken')
        return set
      }
      return s
    }
    const a = await startAcmeApp(t, acme, store())
    const b = await startAcmeApp(t, acme, store())
    const onA = await signInWithAcme(a.base)
    const claims = JSON.parse(Buffer.from(onA.jar.get('JWT')!.split('.')[1]!, 'base64url').toString('utf8')) as { user: { id: string } }
    return { acme, onA, onB: client(b.base, onA.jar), userId: claims.user.id, clock, lockTaken: async () => { await once(locks, 'taken') } }
  }

  /**
   * Sends `callers`' requests at once while the provider holds the refresh until one instance refreshes and the
   * other found the lock taken: both instances are asking while the first refresh is still at the provider.
   */
  async function whileRefreshHeld (p: Pair, callers: Client[]): Promise<Array<{ status: number; body: Record<string, unknown> }>> {
    p.acme.hold()
    const arrived = p.acme.refreshArrived()
    const taken = p.lockTaken()
    const asking = Promise.all(callers.map(async (c) => await acmeToken(c)))
    await Promise.all([arrived, taken])
    p.acme.release()
    return await asking
  }

  t.test('an expired token asked for on both instances at once: one upstream refresh', async (t) => {
    const p = await pair(t)
    const { acme, onA, onB, clock } = p
    t.equal((await acmeToken(onB)).body.accessToken, 'acme-at-1', 'B reads the token A kept')
    clock.tick(61_000)
    const answers = await whileRefreshHeld(p, [onA, onB, onA, onB, onB, onA])
    t.same(answers.map((a) => a.status), Array(6).fill(200), JSON.stringify(answers.map((a) => a.body)))
    t.same(answers.map((a) => a.body.accessToken), Array(6).fill('acme-at-2'), 'every caller gets the one new token')
    t.equal(acme.refreshes, 1, 'exactly one refresh reached the provider')
    t.ok(acme.live.has('acme-rt-2'), 'the rotated refresh token is alive: the grant was not spent twice')
    clock.tick(61_000)
    t.equal((await acmeToken(onB)).body.accessToken, 'acme-at-3', 'the next refresh, on B, spends the rotated token')
    t.equal(acme.refreshes, 2)
  })

  t.test('a refresh the provider refuses: one refusal, answered on both instances', async (t) => {
    const p = await pair(t)
    const { acme, onA, onB, clock } = p
    clock.tick(61_000)
    acme.refresh = 'invalid_grant'
    const answers = await whileRefreshHeld(p, [onA, onB])
    t.same(answers.map((a) => [a.status, a.body.code]), Array(2).fill([401, 'GATEHOUSE_TOKEN_EXPIRED']))
    t.equal(acme.refreshes, 1, 'the refused refresh token was sent once')
    t.equal((await acmeToken(onB)).status, 404, 'dropped for every instance: sign in again')
  })

  t.test('a lock left by an instance that died delays the refresh until it expires', async (t) => {
    const { acme, onA, userId, clock } = await pair(t)
    const store = new RedisStateStore(redis.url)
    t.teardown(() => store.close())
    t.ok(await store.setIfAbsent(`provider-tokens-refresh:acme:${userId}`, '1', 400), 'the dead instance\'s lock')
    clock.tick(61_000)
    const started = performance.now()
    const r = await acmeToken(onA)
    t.equal(r.status, 200)
    t.equal(r.body.accessToken, 'acme-at-2')
    // A lower bound only (load makes it later, never earlier): the refresh waited for the lock's 400 ms.
    t.ok(performance.now() - started >= 300, 'waited for the lock')
    t.equal(acme.refreshes, 1)
  })
}
