import t from 'tap'
import { eventually } from '../../helpers/eventually.js'
import type { Test } from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { Redis } from 'ioredis'
import { once } from 'node:events'
import Fastify from 'fastify'
import { inspect } from 'node:util'
import { MemoryStateStore, RedisStateStore, StateStoreError, isStateStore, openStateStore, type StateStore } from '../../../stores/state/index.js'
import { OptionsError } from '../../../lib/errors.js'
import { authPlugin } from '../../../auth.js'
import { verifyProvider } from '../../../providers/email/provider.js'
import { RedisServer, redisMissingReason } from '../../helpers/redis-server.js'
import { coreOf } from '../../../plugins/core/signin/internals.js'

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
  t.test('exchange replaces an entry and leaves the marker; a gone entry writes nothing', async (t) => {
    const s = make()
    await s.set('{g1}:from', 'held', 60_000)
    const to = { key: '{g1}:to', value: 'next', ttlMs: 60_000 }
    const marker = { key: '{g1}:used', value: 'family', ttlMs: 60_000 }
    t.equal(await s.exchange!({ key: '{g1}:from', value: 'held', ttlMs: 60_000 }, to, marker), true)
    t.equal(await s.get('{g1}:from'), undefined, 'the entry is consumed')
    t.equal(await s.get('{g1}:to'), 'next')
    t.equal(await s.get('{g1}:used'), 'family')
    const again = { key: '{g1}:to2', value: 'other', ttlMs: 60_000 }
    t.equal(await s.exchange!({ key: '{g1}:from', value: 'held', ttlMs: 60_000 }, again, { ...marker, value: 'other' }), false, 'presented again: gone')
    t.equal(await s.get('{g1}:to2'), undefined, 'and nothing written')
    t.equal(await s.get('{g1}:used'), 'family')
  })
  t.test('of concurrent exchanges of one entry exactly one wins, and only its successor is stored', async (t) => {
    const s = make()
    await s.set('{g2}:from', 'held', 60_000)
    const got = await Promise.all(Array.from({ length: 25 }, async (_, i) => await s.exchange!({ key: '{g2}:from', value: 'held', ttlMs: 60_000 },
      { key: `{g2}:to${i}`, value: `next${i}`, ttlMs: 60_000 }, { key: '{g2}:used', value: `m${i}`, ttlMs: 60_000 })))
    t.equal(got.filter(Boolean).length, 1)
    const winner = got.indexOf(true)
    const stored = await Promise.all(got.map(async (_, i) => await s.get(`{g2}:to${i}`)))
    t.same(stored.filter((v) => v !== undefined), [`next${winner}`])
    t.equal(await s.get('{g2}:used'), `m${winner}`)
  })
  t.test('getMany answers each key\'s value in order, undefined where missing, in a group or not', async (t) => {
    const s = make()
    await s.set('head', 'h', 60_000)
    await s.set('{head}:one', '1', 60_000)
    await s.set('elsewhere', 'e', 60_000)
    t.same(await s.getMany!(['{head}:one', 'head', '{head}:none']), ['1', 'h', undefined])
    t.same(await s.getMany!(['elsewhere', '{head}:one', 'missing']), ['e', '1', undefined])
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
    t.match((err as StateStoreError).toJSON(), { error: 'state store unavailable', details: /full/, code: 'GATEHOUSE_STATE_STORE' })
    t.equal(await s.get('a'), '1', 'the failed write changed nothing')
    clock.tick(1000)
    await s.set('d', '1', 5000)
    t.equal(s.size, 3)
    t.equal(await s.get('d'), '1')
  })

  t.test('options are checked', async (t) => {
    for (const maxEntries of [0, -1, 1.5, Number.NaN]) {
      t.throws(() => new MemoryStateStore({ maxEntries }), { code: 'GATEHOUSE_OPTION', option: 'MemoryStateStore.maxEntries' }, String(maxEntries))
    }
  })
})

/** A store object that records whether it was closed. */
function trackedStore (): MemoryStateStore & { closed: boolean } {
  const s = new MemoryStateStore() as MemoryStateStore & { closed: boolean }
  s.closed = false
  const close = s.close.bind(s)
  s.close = async () => { s.closed = true; await close() }
  return s
}

const SECRET = () => 'resolve-secret-0123456789-0123456789abcdef'

t.test('openStateStore: undefined, a store object, garbage', async (t) => {
  const dflt = await openStateStore(undefined, 'x')
  t.ok(dflt.store instanceof MemoryStateStore, 'nothing given: an in-memory store')
  t.equal(dflt.owned, true, '… that the caller opened and so closes')
  const own = new MemoryStateStore()
  const given = await openStateStore(own, 'x')
  t.equal(given.store, own, 'a store object is used as given')
  t.equal(given.owned, false, '… and left to its owner to close')
  t.ok(isStateStore(own))
  t.notOk(isStateStore({ get () {} }))

  for (const bad of [42, null, { get () {} }, 'mysql://x', 'localhost:6379', '']) {
    await t.rejects(openStateStore(bad, 'my.store'), { code: 'GATEHOUSE_OPTION', option: 'my.store' }, JSON.stringify(bad))
  }
  t.test('an address with credentials never shows them', async (t) => {
    for (const address of ['http://admin:hunter2@x', 'mysql://admin:hunter2@db/x', 'admin:hunter2@x:6379', 'redis://admin:hunter2@127.0.0.1:notaport', 'redis://admin:hunter2@[::1']) {
      const err = await openStateStore(address, 'my.store').then(() => undefined, (e: unknown) => e)
      t.ok(err instanceof OptionsError, address)
      t.match(err, { code: 'GATEHOUSE_OPTION', option: 'my.store' })
      t.notMatch(inspect(err, { depth: 10 }), /hunter2|admin/, 'neither the password nor the user, cause chain included')
    }
  })
})

t.test('the root stateStore option: fastify.auth.stateStore', async (t) => {
  t.test('not given: an in-memory store, closed with the app', async (t) => {
    const app = Fastify()
    await app.register(authPlugin, { secret: SECRET, url: 'http://127.0.0.1' })
    const store = coreOf(app).stateStore
    t.ok(store instanceof MemoryStateStore)
    await store.set('k', 'v', 60_000)
    await app.close()
    t.equal((store as MemoryStateStore).size, 0, 'closing the app closed (emptied) it')
  })

  t.test('a store object: used as given, not closed with the app', async (t) => {
    const own = trackedStore()
    const app = Fastify()
    await app.register(authPlugin, { secret: SECRET, url: 'http://127.0.0.1', stateStore: own })
    t.equal(coreOf(app).stateStore, own)
    await own.set('k', 'v', 60_000)
    await app.close()
    t.equal(own.closed, false, 'its owner closes it')
    t.equal(await own.get('k'), 'v')
  })

  t.test('garbage: an OptionsError naming the option, credentials not echoed', async (t) => {
    for (const bad of [42, { get () {} }, 'http://user:pa55word@x']) {
      const app = Fastify()
      const err = await app.register(authPlugin, { secret: SECRET, url: 'http://127.0.0.1', stateStore: bad as never }).then(() => undefined, (e: unknown) => e)
      t.match(err, { code: 'GATEHOUSE_OPTION', option: 'stateStore' }, JSON.stringify(bad))
      t.notMatch(inspect(err, { depth: 10 }), /pa55word/)
      await app.close()
    }
  })

  t.test('providers without a store of their own use it', async (t) => {
    const own = trackedStore()
    const outbox: string[] = []
    const app = Fastify()
    // Throttling and the session list off: their entries would live in this store too (test/lib/throttle and
    // test/plugins/core/sessions.test.ts count them).
    await app.register(authPlugin, { secret: SECRET, url: 'http://127.0.0.1', stateStore: own, rateLimit: false, revocation: { sessionList: false } })
    await app.register(verifyProvider, { name: 'mail', template: '{{.Token}}', sender: (_a: string, text: string) => { outbox.push(text) } })
    t.teardown(() => app.close())
    t.equal((await app.inject('/auth/mail/login?user=u&address=u@example.com')).statusCode, 200)
    t.equal(own.size, 0, 'sending stores nothing')
    t.equal((await app.inject(`/auth/mail/login?token=${outbox[0]!}`)).statusCode, 200)
    t.equal(own.size, 1, 'the used token is remembered in the root store')
  })

  t.test('a provider\'s own store option: garbage names that option', async (t) => {
    const app = Fastify()
    await app.register(authPlugin, { secret: SECRET, url: 'http://127.0.0.1' })
    app.register(verifyProvider, { name: 'mail', template: '{{.Token}}', sender: () => {}, stateStore: 'mysql://user:pa55word@x' })
    const err = await app.ready().then(() => undefined, (e: unknown) => e)
    t.match(err, { code: 'GATEHOUSE_OPTION', option: 'verify.mail.stateStore' })
    t.notMatch(inspect(err, { depth: 10 }), /pa55word/)
    await app.close()
  })
})

const missing = redisMissingReason()
t.test('redis store', { skip: missing ?? false }, async (t) => {
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())
  const stores: StateStore[] = []
  t.teardown(async () => { for (const s of stores) await s.close() })
  const make = (): RedisStateStore => {
    // A command timeout far away: a loaded machine's slow answer must not be a 503 here ('redis down' tests it).
    const s = new RedisStateStore(redis.url, { keyPrefix: `t${stores.length}:`, commandTimeoutMs: 60_000 })
    stores.push(s)
    return s
  }

  contract(t, make)

  t.test('ttl is set in milliseconds on the server', async (t) => {
    const s = make()
    // Seconds taken for milliseconds would be 1000 times longer; the lower bounds leave half the lifetime for the
    // commands in between (a generous bound: they take milliseconds, seconds on a loaded machine).
    await s.set('k', 'v', 60_000)
    await s.setIfAbsent('n', 'v', 45_000)
    const pttl = await s.client.pttl('t' + String(stores.length - 1) + ':{k}')
    t.ok(pttl > 30_000 && pttl <= 60_000, `pttl ${pttl}`)
    const pttl2 = await s.client.pttl('t' + String(stores.length - 1) + ':{n}')
    t.ok(pttl2 > 22_500 && pttl2 <= 45_000, `pttl ${pttl2}`)
  })

  t.test('a key of a group is stored under its group\'s hash tag; an exchange across groups is a TypeError', async (t) => {
    const s = make()
    const prefix = 't' + String(stores.length - 1) + ':'
    await s.set('{rt:fam}:mobile:h', 'v', 60_000)
    await s.set('{not a group', 'w', 60_000)
    t.equal(await s.client.get(`${prefix}{rt:fam}:mobile:h`), 'v', 'the group is the hash tag')
    t.equal(await s.client.get(`${prefix}{{not a group}`), 'w', 'a key that only starts with a brace is a key of its own')
    const entry = (key: string): { key: string; value: string; ttlMs: number } => ({ key, value: 'x', ttlMs: 60_000 })
    await t.rejects(s.exchange(entry('{a}:1'), entry('{b}:2'), entry('{a}:3')), TypeError)
    await t.rejects(s.exchange(entry('plain'), entry('{a}:2'), entry('{a}:3')), TypeError)
    t.equal(await s.client.exists(`${prefix}{a}:2`), 0, 'nothing written')
  })

  t.test('a plain set of the server\'s own entry is one SET; an exchange four commands', async (t) => {
    const s = make()
    const monitor = await s.client.monitor()
    t.teardown(() => { monitor.disconnect() })
    const seen: string[] = []
    monitor.on('monitor', (_time: string, args: string[]) => { seen.push(args[0]!.toLowerCase()) })
    await s.set('{rt:f}:cur', 'record', 60_000)
    await s.exchange({ key: '{rt:f}:cur', value: 'record', ttlMs: 60_000 }, { key: '{rt:f}:next', value: 'record2', ttlMs: 60_000 }, { key: '{rt:f}:used', value: 'f', ttlMs: 60_000 })
    await s.get('{rt:f}:next')
    // MONITOR shows a script's own calls too; the GET at the end shows that everything before it was seen.
    for (let i = 0; i < 50 && seen.at(-1) !== 'get'; i++) await new Promise((resolve) => setTimeout(resolve, 10))
    t.same(seen, ['set', 'eval', 'set', 'del', 'set', 'get'])
  })

  t.test('an exchange answered with an error is undone: the entry is back, the marker and successor gone', async (t) => {
    const s = make()
    const prefix = 't' + String(stores.length - 1) + ':'
    await s.set('{rt:u}:cur', 'record', 60_000)
    // The script runs, but its answer is lost as a command timeout loses it: the store sends the undo behind it.
    const evalOf = s.client.eval.bind(s.client)
    let calls = 0
    s.client.eval = (async (...args: Parameters<typeof evalOf>) => {
      const r = await evalOf(...args)
      if (calls++ === 0) throw new Error('Command timed out')
      return r
    }) as typeof s.client.eval
    t.teardown(() => { s.client.eval = evalOf })
    await t.rejects(s.exchange({ key: '{rt:u}:cur', value: 'record', ttlMs: 60_000 }, { key: '{rt:u}:next', value: 'record2', ttlMs: 60_000 }, { key: '{rt:u}:used', value: 'u', ttlMs: 60_000 }), StateStoreError)
    for (let i = 0; i < 50 && s.owedUndo > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
    t.equal(s.owedUndo, 0, 'the undo ran')
    t.equal(await s.get('{rt:u}:cur'), 'record', 'the entry is back')
    const pttl = await s.client.pttl(`${prefix}{rt:u}:cur`)
    t.ok(pttl > 59_000 && pttl <= 60_000, `with the lifetime it had (${pttl} ms)`)
    t.equal(await s.get('{rt:u}:used'), undefined, 'no marker')
    t.equal(await s.get('{rt:u}:next'), '', 'the successor\'s key holds the tombstone')
    t.equal(await s.exchange({ key: '{rt:u}:cur', value: 'record', ttlMs: 60_000 }, { key: '{rt:u}:next2', value: 'record3', ttlMs: 60_000 }, { key: '{rt:u}:used', value: 'u', ttlMs: 60_000 }), true, 'the entry rotates again')
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
    t.equal(await owner.client.get('borrowed:{k}'), 'v')
  })

  /**
   * Connections the Redis server has now, polled until `until` holds (a quit is answered before the socket closes;
   * the server announces nothing): without a count of tries, so a wrong count fails on the file's time limit.
   */
  async function connections (until: (n: number) => boolean = () => true): Promise<number> {
    const admin = new Redis(redis.url)
    try {
      // Less the admin's own.
      return await eventually(async () => String(await admin.client('LIST')).trim().split('\n').length - 1, until, 50)
    } finally {
      admin.disconnect()
    }
  }

  t.test('openStateStore with an address: a Redis store the caller owns', async (t) => {
    const errors: Error[] = []
    const { store, owned } = await openStateStore(redis.url, 'x', (e) => errors.push(e))
    t.ok(store instanceof RedisStateStore)
    t.equal(owned, true)
    await store.set('k', 'v', 1000)
    t.equal(await store.get('k'), 'v')
    await store.close()
    await t.rejects(store.get('k'), StateStoreError, 'closed')
  })

  t.test('a root stateStore address: opened by the core, closed with the app', async (t) => {
    const before = await connections()
    const app = Fastify()
    await app.register(authPlugin, { secret: SECRET, url: 'http://127.0.0.1', stateStore: redis.url })
    const s = coreOf(app).stateStore as RedisStateStore
    t.ok(s instanceof RedisStateStore)
    await s.set('k', 'v', 1000)
    t.equal(await s.get('k'), 'v')
    // One connection for commands, one for the revocation channel (a Redis connection that subscribes takes no
    // other command).
    t.equal(await connections((n) => n === before + 2), before + 2)
    await app.close()
    await t.rejects(s.get('k'), { code: 'GATEHOUSE_STATE_STORE' }, 'its connection is gone')
    t.equal(await connections((n) => n === before), before)
  })

  t.test('a root Redis store object: used as given, not closed with the app', async (t) => {
    const own = make()
    await own.set('warm', '1', 1000) // connected before the app takes it, so "ready" below means "not closed"
    const app = Fastify()
    await app.register(authPlugin, { secret: SECRET, url: 'http://127.0.0.1', stateStore: own })
    t.equal(coreOf(app).stateStore, own)
    await app.close()
    t.equal(own.client.status, 'ready')
    await own.set('still', 'open', 1000)
    t.equal(await own.get('still'), 'open')
  })

  t.test('a provider\'s own address: opened for it, used, closed with the app', async (t) => {
    const before = await connections()
    const outbox: string[] = []
    const app = Fastify()
    await app.register(authPlugin, { secret: SECRET, url: 'http://127.0.0.1' })
    app.auth.addVerifProvider('mail', '{{.Token}}', (_a, text) => { outbox.push(text) }, { stateStore: redis.url })
    await app.ready()
    t.equal((await app.inject('/auth/mail/login?user=u&address=u@example.com')).statusCode, 200)
    t.equal((await app.inject(`/auth/mail/login?token=${outbox[0]!}`)).statusCode, 200)
    const again = await app.inject(`/auth/mail/login?token=${outbox[0]!}`)
    t.equal(again.statusCode, 401)
    t.equal(again.json().code, 'GATEHOUSE_ALREADY_USED')
    const admin = new Redis(redis.url)
    t.equal((await admin.keys('gatehouse:{verify:used:*')).length, 1, 'the used token is in Redis, not in the core\'s memory store')
    admin.disconnect()
    t.equal(await connections(), before + 1)
    await app.close()
    t.equal(await connections((n) => n === before), before, 'closed with the app')
  })

  t.test('bad constructor arguments are OptionsErrors', async (t) => {
    t.throws(() => new RedisStateStore(42 as never), { code: 'GATEHOUSE_OPTION', option: 'RedisStateStore' })
    t.throws(() => new RedisStateStore('redis://127.0.0.1:1', { commandTimeoutMs: -1 }), { code: 'GATEHOUSE_OPTION', option: 'RedisStateStore.commandTimeoutMs' })
    t.throws(() => new RedisStateStore('redis://127.0.0.1:1', { keyPrefix: 5 as never }), { code: 'GATEHOUSE_OPTION', option: 'RedisStateStore.keyPrefix' })
    t.throws(() => new RedisStateStore('redis://127.0.0.1:1', { onError: 'log' as never }), { code: 'GATEHOUSE_OPTION', option: 'RedisStateStore.onError' })
    const err = (() => { try { return new RedisStateStore('redis://admin:hunter2@127.0.0.1:notaport') } catch (e) { return e } })()
    t.match(err, { code: 'GATEHOUSE_OPTION', option: 'RedisStateStore' })
    t.notMatch(inspect(err, { depth: 10 }), /hunter2/, 'the address is not echoed')
  })

  t.test('redis down: 503 errors; back: the same store works again', async (t) => {
    const errors: Error[] = []
    // The write before the outage must not meet it on a loaded machine (a generous bound for a command on loopback).
    const s = new RedisStateStore(redis.url, { keyPrefix: 'outage:', commandTimeoutMs: 2000, onError: (e) => errors.push(e) })
    stores.push(s)
    await s.set('before', 'v', 60_000)
    await redis.stop()
    for (const op of [() => s.get('before'), () => s.take('before'), () => s.setIfAbsent('x', 'v', 1000), () => s.delete('x')]) {
      const err = await op().then(() => undefined, (e: unknown) => e)
      t.ok(err instanceof StateStoreError, 'rejects with StateStoreError')
      t.equal((err as StateStoreError).statusCode, 503)
      t.equal((err as StateStoreError).code, 'GATEHOUSE_STATE_STORE')
      t.equal((err as StateStoreError).details, 'Redis did not answer', 'the kind of peer, not its reply')
    }
    t.equal(errors.length, 1, 'the outage is reported once')
    await redis.start()
    if (s.client.status !== 'ready') await once(s.client, 'ready')
    t.equal(await s.setIfAbsent('after', 'v', 60_000), true)
    t.equal(await s.get('after'), 'v')
    t.equal(await s.get('before'), undefined, 'redis ran without persistence')
  })
})
