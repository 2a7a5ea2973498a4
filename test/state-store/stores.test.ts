import t from 'tap'
import type { Test } from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { once } from 'node:events'
import Fastify from 'fastify'
import { MemoryStateStore, RedisStateStore, StateStoreError, resolveStateStore, type StateStore } from '../../lib/state-store/index.js'
import { authPlugin } from '../../plugins/auth.js'
import { RedisServer, redisMissingReason } from './redis-server.js'

/** The behaviour every store must share. */
function contract (t: Test, make: () => StateStore): void {
  t.test('setIfAbsent stores once', async (t) => {
    const s = make()
    t.equal(await s.setIfAbsent('a', 'one', 60_000), true)
    t.equal(await s.setIfAbsent('a', 'two', 60_000), false)
    t.equal(await s.get('a'), 'one')
  })
  t.test('set replaces', async (t) => {
    const s = make()
    await s.set('b', 'one', 60_000)
    await s.set('b', 'two', 60_000)
    t.equal(await s.get('b'), 'two')
  })
  t.test('take returns the value once', async (t) => {
    const s = make()
    await s.set('c', 'v', 60_000)
    t.equal(await s.take('c'), 'v')
    t.equal(await s.take('c'), undefined)
    t.equal(await s.get('c'), undefined)
  })
  t.test('of concurrent takes exactly one wins', async (t) => {
    const s = make()
    await s.set('d', 'v', 60_000)
    const got = await Promise.all(Array.from({ length: 25 }, () => s.take('d')))
    t.equal(got.filter((v) => v === 'v').length, 1)
  })
  t.test('of concurrent setIfAbsent exactly one wins', async (t) => {
    const s = make()
    const got = await Promise.all(Array.from({ length: 25 }, (_, i) => s.setIfAbsent('e', String(i), 60_000)))
    t.equal(got.filter(Boolean).length, 1)
  })
  t.test('delete reports existence', async (t) => {
    const s = make()
    await s.set('f', 'v', 60_000)
    t.equal(await s.delete('f'), true)
    t.equal(await s.delete('f'), false)
    t.equal(await s.get('f'), undefined)
  })
  t.test('programming errors are TypeErrors', async (t) => {
    const s = make()
    await t.rejects(s.set('', 'v', 1000), TypeError)
    await t.rejects(s.setIfAbsent('k', 'v', 0), TypeError)
    await t.rejects(s.set('k', 'v', Number.NaN), TypeError)
  })
}

t.test('memory store', async (t) => {
  contract(t, () => new MemoryStateStore())

  t.test('entries expire on the clock', async (t) => {
    const clock = FakeTimers.install({ toFake: ['Date'] })
    t.teardown(() => clock.uninstall())
    const s = new MemoryStateStore()
    await s.set('k', 'v', 1000)
    t.equal(await s.setIfAbsent('k', 'w', 1000), false)
    clock.tick(999)
    t.equal(await s.get('k'), 'v')
    clock.tick(1)
    t.equal(await s.get('k'), undefined, 'gone at its expiry')
    t.equal(await s.setIfAbsent('k', 'w', 1000), true, 'an expired key can be set again')
    clock.tick(1000)
    t.equal(await s.take('k'), undefined)
    t.equal(await s.delete('k'), false)
  })

  t.test('bounded: full store refuses with 503, expired entries make room', async (t) => {
    const clock = FakeTimers.install({ toFake: ['Date'] })
    t.teardown(() => clock.uninstall())
    const s = new MemoryStateStore({ maxEntries: 3 })
    await s.set('a', '1', 1000)
    await s.set('b', '1', 5000)
    await s.set('c', '1', 5000)
    const err = await s.set('d', '1', 5000).catch((e: unknown) => e)
    t.ok(err instanceof StateStoreError)
    t.equal((err as StateStoreError).statusCode, 503)
    t.match((err as StateStoreError).toJSON(), { error: 'state store unavailable', details: /full/ })
    t.equal(await s.get('a'), '1', 'the failed write changed nothing')
    clock.tick(1000)
    await s.set('d', '1', 5000)
    t.equal(s.size, 3)
    t.equal(await s.get('d'), '1')
  })

  t.test('options are checked', async (t) => {
    t.throws(() => new MemoryStateStore({ maxEntries: 0 }), /maxEntries/)
  })
})

t.test('resolveStateStore: option, root option, shared in-memory default', async (t) => {
  const own = new MemoryStateStore()
  const app = Fastify()
  await app.register(authPlugin, { secret: () => 'resolve-secret-0123456789', url: 'http://127.0.0.1' })
  const dflt = resolveStateStore(app.auth, undefined)
  t.ok(dflt instanceof MemoryStateStore)
  t.equal(resolveStateStore(app.auth, undefined), dflt, 'one default store per app')
  t.equal(resolveStateStore(app.auth, own), own)
  t.throws(() => resolveStateStore(app.auth, 42), /option "stateStore" must be a state store/)
  t.throws(() => resolveStateStore(app.auth, { get () {} }), /must be a state store/)
  const err = (() => { try { resolveStateStore(app.auth, 'http://user:pw@x', 'myStore') } catch (e) { return e as Error } })()
  t.match(err?.message, /option "myStore" must be a redis/)
  t.notMatch(err?.message, /pw/, 'credentials in the address are not echoed')
  await app.close()

  const withRoot = Fastify()
  await withRoot.register(authPlugin, { secret: () => 'resolve-secret-0123456789', url: 'http://127.0.0.1', stateStore: own })
  t.equal(resolveStateStore(withRoot.auth, undefined), own, 'the root option is the default')
  await withRoot.close()
})

const missing = redisMissingReason()
t.test('redis store', { skip: missing ?? false }, async (t) => {
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())
  const stores: StateStore[] = []
  t.teardown(async () => { for (const s of stores) await s.close() })
  const make = (): RedisStateStore => {
    const s = new RedisStateStore(redis.url, { keyPrefix: `t${stores.length}:`, commandTimeoutMs: 500 })
    stores.push(s)
    return s
  }

  contract(t, make)

  t.test('ttl is set in milliseconds on the server', async (t) => {
    const s = make()
    await s.set('k', 'v', 60_000)
    await s.setIfAbsent('n', 'v', 1500)
    const pttl = await s.client.pttl('t' + String(stores.length - 1) + ':k')
    t.ok(pttl > 59_000 && pttl <= 60_000, `pttl ${pttl}`)
    const pttl2 = await s.client.pttl('t' + String(stores.length - 1) + ':n')
    t.ok(pttl2 > 500 && pttl2 <= 1500, `pttl ${pttl2}`)
  })

  t.test('two clients see one another: a key taken by one is gone for the other', async (t) => {
    const a = new RedisStateStore(redis.url, { keyPrefix: 'shared:' })
    const b = new RedisStateStore(redis.url, { keyPrefix: 'shared:' })
    stores.push(a, b)
    t.equal(await a.setIfAbsent('jti', '1', 60_000), true)
    t.equal(await b.setIfAbsent('jti', '1', 60_000), false)
    await a.set('p', 'x', 60_000)
    t.equal(await b.take('p'), 'x')
    t.equal(await a.take('p'), undefined)
  })

  t.test('a client passed in is used and not closed by the store', async (t) => {
    const owner = make()
    const s = new RedisStateStore(owner.client, { keyPrefix: 'borrowed:' })
    await s.set('k', 'v', 60_000)
    await s.close()
    t.equal(owner.client.status, 'ready')
    t.equal(await owner.client.get('borrowed:k'), 'v')
  })

  t.test('a store made from an address is closed with the app', async (t) => {
    const app = Fastify()
    await app.register(authPlugin, { secret: () => 'resolve-secret-0123456789', url: 'http://127.0.0.1' })
    const s = resolveStateStore(app.auth, redis.url) as RedisStateStore
    t.ok(s instanceof RedisStateStore)
    t.equal(resolveStateStore(app.auth, redis.url), s, 'one client per address')
    await s.set('k', 'v', 1000)
    await app.close()
    await t.rejects(s.get('k'), StateStoreError, 'its connection is gone')
  })

  t.test('bad constructor arguments', async (t) => {
    t.throws(() => new RedisStateStore(42 as never), /ioredis client or a redis/)
    t.throws(() => new RedisStateStore('redis://127.0.0.1:1', { commandTimeoutMs: -1 }), /commandTimeoutMs/)
  })

  t.test('redis down: 503 errors; back: the same store works again', async (t) => {
    const errors: Error[] = []
    const s = new RedisStateStore(redis.url, { keyPrefix: 'outage:', commandTimeoutMs: 500, onError: (e) => errors.push(e) })
    stores.push(s)
    await s.set('before', 'v', 60_000)
    await redis.stop()
    for (const op of [() => s.get('before'), () => s.take('before'), () => s.setIfAbsent('x', 'v', 1000), () => s.delete('x')]) {
      const err = await op().then(() => undefined, (e: unknown) => e)
      t.ok(err instanceof StateStoreError, 'rejects with StateStoreError')
      t.equal((err as StateStoreError).statusCode, 503)
      t.match((err as StateStoreError).details, /^redis: /)
    }
    t.equal(errors.length, 1, 'the outage is reported once')
    await redis.start()
    if (s.client.status !== 'ready') await once(s.client, 'ready')
    t.equal(await s.setIfAbsent('after', 'v', 60_000), true)
    t.equal(await s.get('after'), 'v')
    t.equal(await s.get('before'), undefined, 'redis ran without persistence')
  })
})
