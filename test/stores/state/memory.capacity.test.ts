/**
 * State that attackers cannot fill: the in-memory store bounds entries per client and evicts from the client
 * holding the most; the Redis store counts what each client creates. Counters (`increment`) for throttling.
 */
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { MemoryStateStore, RedisStateStore, StateStoreError } from '../../../stores/state/index.js'
import { RateLimitedError } from '../../../lib/errors.js'
import { entryBytes } from '../../../stores/state/memory.js'
import { RedisServer, redisMissingReason } from '../../helpers/redis-server.js'

async function refusal (p: Promise<unknown>): Promise<unknown> {
  return await p.then(() => undefined, (e: unknown) => e)
}

t.test('memory: one client holds at most maxPerClient entries; others are not affected', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const s = new MemoryStateStore({ maxPerClient: 3 })
  await s.set('a1', 'v', 10_000, { client: 'A' })
  clock.tick(1000)
  t.equal(await s.setIfAbsent('a2', 'v', 60_000, { client: 'A' }), true)
  await s.set('a3', 'v', 60_000, { client: 'A' })
  const err = await refusal(s.setIfAbsent('a4', 'v', 60_000, { client: 'A' }))
  t.ok(err instanceof RateLimitedError, 'the fourth is refused')
  t.match(err, { statusCode: 429, code: 'GATEHOUSE_RATE_LIMITED', retryAfterSec: 9 }, 'until its oldest entry expires')
  t.equal(await s.get('a4'), undefined, 'nothing stored')
  t.equal(s.entriesOf('A'), 3)
  await s.set('a3', 'replaced', 60_000, { client: 'A' })
  t.equal(await s.get('a3'), 'replaced', 'rewriting one of its own entries is not a new one')
  t.equal(await s.setIfAbsent('b1', 'v', 60_000, { client: 'B' }), true, 'another client writes')
  t.equal(await s.setIfAbsent('x1', 'v', 60_000), true, 'the server\'s own entries are not counted')
  clock.tick(9000)
  t.equal(await s.setIfAbsent('a4', 'v', 60_000, { client: 'A' }), true, 'once an entry expired, the client writes again')
})

t.test('memory: a refused write changes nothing, another client\'s entry included', async (t) => {
  const s = new MemoryStateStore({ maxPerClient: 1 })
  await s.increment('fail:admin', 60_000, { client: 'B' })
  await s.set('a1', 'v', 60_000, { client: 'A' })
  t.ok(await refusal(s.set('fail:admin', '0', 60_000, { client: 'A' })) instanceof RateLimitedError)
  t.equal(await s.get('fail:admin'), '1', 'B\'s counter is intact')
  t.equal((await s.increment('fail:admin', 60_000, { client: 'A' })).count, 2, 'counting on an existing counter creates nothing')
  t.equal(s.entriesOf('B'), 1)
})

t.test('memory: a full store evicts from the client holding the most, never from a smaller one', async (t) => {
  const s = new MemoryStateStore({ maxEntries: 10, maxPerClient: 4 })
  await s.set('user-pending', 'v', 60_000, { client: 'user' })
  await s.set('server', 'v', 60_000)
  for (const c of ['A', 'B']) for (let i = 0; i < 4; i++) await s.set(`${c}${i}`, 'v', 60_000, { client: c })
  t.equal(s.size, 10, 'full')
  // The attacker keeps writing from a third address: its writes evict the attackers' own oldest entries.
  for (let i = 0; i < 4; i++) await s.set(`C${i}`, 'v', 60_000, { client: 'C' })
  t.equal(s.size, 10)
  t.equal(await s.get('user-pending'), 'v', 'the user\'s entry survives the flood')
  t.equal(await s.get('server'), 'v')
  t.equal(await s.get('A0'), undefined, 'the oldest entries of the largest holders went')
  t.equal(s.entriesOf('A') + s.entriesOf('B') + s.entriesOf('C'), 8)
  t.equal(await s.setIfAbsent('user-2', 'v', 60_000, { client: 'user2' }), true, 'a new user still gets in')
  t.equal(await s.get('user-pending'), 'v')
})

t.test('memory: full of the server\'s own entries, a write fails with 503', async (t) => {
  const s = new MemoryStateStore({ maxEntries: 2 })
  await s.set('a', 'v', 60_000)
  await s.set('b', 'v', 60_000)
  const err = await refusal(s.set('c', 'v', 60_000, { client: 'A' }))
  t.ok(err instanceof StateStoreError)
  t.match(err, { statusCode: 503, code: 'GATEHOUSE_STATE_STORE' })
})

/** A value that makes an entry under `key` cost exactly `bytes` (one byte per character). */
function sized (key: string, bytes: number): string {
  return 'v'.repeat(bytes - entryBytes(key, ''))
}

t.test('memory: entries are counted by their bytes: key and value, two bytes a character past Latin-1, plus a fixed cost', async (t) => {
  t.equal(entryBytes('k', 'abc') - entryBytes('k', ''), 3)
  t.equal(entryBytes('k', 'été') - entryBytes('k', ''), 3, 'Latin-1 is one byte a character')
  t.equal(entryBytes('k', 'a€') - entryBytes('k', ''), 4, 'one character past Latin-1 makes the string two bytes a character')
  t.ok(entryBytes('', '') >= 100, 'an empty entry still costs its slot')
  const s = new MemoryStateStore()
  await s.set('a', 'xyz', 60_000)
  await s.set('b', '1', 60_000, { client: 'A' })
  await s.increment('b', 60_000, { client: 'A' })
  for (let i = 0; i < 9; i++) await s.increment('b', 60_000)
  t.equal(await s.get('b'), '11')
  t.equal(s.byteSize, entryBytes('a', 'xyz') + entryBytes('b', '11'), 'a counter growing a digit is accounted')
  await s.set('a', 'x'.repeat(1000), 60_000)
  t.equal(s.byteSize, entryBytes('a', 'x'.repeat(1000)) + entryBytes('b', '11'), 'a replaced value counts its new size')
  await s.delete('a')
  t.equal(await s.take('b'), '11')
  t.equal(s.byteSize, 0, 'deleted and taken entries free their bytes')
})

t.test('memory: past maxBytes a write evicts the oldest entries of the client holding the most until it fits', async (t) => {
  const s = new MemoryStateStore({ maxBytes: 10_000, maxPerClient: 100 })
  await s.set('server', sized('server', 2000), 60_000)
  await s.set('user', sized('user', 1000), 60_000, { client: 'user' })
  for (let i = 0; i < 6; i++) await s.set(`A${i}`, sized(`A${i}`, 1000), 60_000, { client: 'A' })
  t.equal(s.byteSize, 9000)
  // 2,500 more bytes: the two oldest of A (the client holding the most) make room, nobody else's.
  await s.set('list', sized('list', 2500), 60_000)
  t.equal(s.byteSize, 9500)
  t.same([await s.get('A0'), await s.get('A1')], [undefined, undefined], 'A\'s two oldest went')
  t.ok(await s.get('A2'), 'A\'s third stays: two made enough room')
  t.ok(await s.get('user'), 'the smaller holder keeps its entry')
  t.ok(await s.get('server'))
  t.equal(s.entriesOf('A'), 4)
  // The bound holds however the bytes come: a flood of large values from A keeps the store under it.
  for (let i = 6; i < 40; i++) await s.set(`A${i}`, sized(`A${i}`, 1500), 60_000, { client: 'A' })
  t.ok(s.byteSize <= 10_000, `at most maxBytes (${s.byteSize})`)
  t.ok(await s.get('user'), 'the user\'s entry survives the flood')
  t.ok(await s.get('list'))
})

t.test('memory: a write that eviction cannot make room for fails with 503 and changes nothing', async (t) => {
  const s = new MemoryStateStore({ maxBytes: 5000 })
  await s.set('server', sized('server', 3000), 60_000)
  await s.set('A0', sized('A0', 1000), 60_000, { client: 'A' })
  const tooBig = await refusal(s.set('big', sized('big', 2500), 60_000))
  t.ok(tooBig instanceof StateStoreError, 'the server\'s own entries and this one would pass maxBytes')
  t.match(tooBig, { statusCode: 503, code: 'GATEHOUSE_STATE_STORE', details: /5000 bytes/ })
  t.ok(await s.get('A0'), 'nothing was evicted for a write that failed')
  t.equal(await s.get('big'), undefined)
  t.equal(s.byteSize, 4000)
  t.ok(await refusal(s.set('huge', sized('huge', 6000), 60_000, { client: 'B' })) instanceof StateStoreError, 'larger than the whole store')
  t.ok(await refusal(s.set('server', sized('server', 5100), 60_000)) instanceof StateStoreError, 'a replacement that grows past the bound')
  t.equal((await s.get('server'))?.length, 3000 - entryBytes('server', ''), 'the old value stays')
  t.ok(await s.get('A0'))
  await s.set('server', sized('server', 4500), 60_000)
  t.equal(await s.get('A0'), undefined, 'a replacement that fits once A\'s entry is evicted')
  t.equal(s.byteSize, 4500)
})

t.test('memory: expired entries free their bytes before anything live is evicted', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const s = new MemoryStateStore({ maxBytes: 4000 })
  await s.set('A0', sized('A0', 1000), 60_000, { client: 'A' })
  await s.set('old', sized('old', 2500), 1000)
  clock.tick(1000)
  await s.set('new', sized('new', 2500), 60_000)
  t.ok(await s.get('A0'), 'the expired entry made the room')
  t.equal(s.byteSize, 3500)
})

t.test('memory: increment, fixed or sliding, expiring on the clock', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const s = new MemoryStateStore()
  t.same(await s.increment('n', 1000, { client: 'A' }), { count: 1, ttlMs: 1000 })
  clock.tick(400)
  t.same(await s.increment('n', 1000), { count: 2, ttlMs: 600 }, 'fixed: the lifetime runs from the first')
  clock.tick(600)
  t.same(await s.increment('n', 1000), { count: 1, ttlMs: 1000 }, 'expired: counting starts again')
  clock.tick(900)
  t.same(await s.increment('n', 1000, { sliding: true }), { count: 2, ttlMs: 1000 }, 'sliding: the lifetime restarts')
  clock.tick(900)
  t.equal(await s.get('n'), '2')
  t.rejects(s.increment('', 1000), TypeError)
})

t.test('memory: options are checked', async (t) => {
  for (const bad of [0, -1, 1.5, 'x']) {
    for (const option of ['maxPerClient', 'maxEntries', 'maxBytes']) {
      t.throws(() => new MemoryStateStore({ [option]: bad as number }), { code: 'GATEHOUSE_OPTION', option: `MemoryStateStore.${option}` })
    }
  }
})

const missing = redisMissingReason()
t.test('redis', { skip: missing ?? false }, async (t) => {
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())
  const stores: RedisStateStore[] = []
  t.teardown(async () => { for (const s of stores) await s.close() })
  // Lifetimes read back from the server are compared with half of the lifetime left for the commands in between (a
  // generous bound: they take milliseconds, seconds on a loaded machine); the command timeout is far away.
  const make = (opts: { maxPerClient?: number; commandTimeoutMs?: number; keyPrefix?: string } = {}): RedisStateStore => {
    const s = new RedisStateStore(redis.url, { keyPrefix: `cap${stores.length}:`, commandTimeoutMs: 60_000, ...opts })
    stores.push(s)
    return s
  }

  t.test('entries a client creates are counted; past its share it is refused, others are not', async (t) => {
    const s = make({ maxPerClient: 3 })
    await s.set('a1', 'v', 60_000, { client: '203.0.113.7' })
    t.equal(await s.setIfAbsent('a2', 'v', 30_000, { client: '203.0.113.7' }), true)
    await s.increment('a3', 30_000, { client: '203.0.113.7' })
    const err = await refusal(s.setIfAbsent('a4', 'v', 30_000, { client: '203.0.113.7' }))
    t.ok(err instanceof RateLimitedError)
    t.match(err, { statusCode: 429, code: 'GATEHOUSE_RATE_LIMITED' })
    t.ok((err as RateLimitedError).retryAfterSec > 30 && (err as RateLimitedError).retryAfterSec <= 60, 'until its longest-lived entry expires (60 s, not the 30 s of the others)')
    t.equal(await s.get('a4'), undefined)
    t.ok(await refusal(s.increment('a5', 30_000, { client: '203.0.113.7' })) instanceof RateLimitedError, 'a new counter too')
    t.same((await s.increment('a3', 30_000, { client: '203.0.113.7' })).count, 2, 'an existing counter still counts')
    t.equal(await s.setIfAbsent('b1', 'v', 30_000, { client: '198.51.100.1' }), true, 'another client writes')
    t.equal(await s.setIfAbsent('x', 'v', 30_000), true, 'the server\'s own entries are not counted')
    const pttl = await s.client.pttl('cap0:{client:203.0.113.7}')
    t.ok(pttl > 30_000 && pttl <= 60_000, `the client counter lives as long as the longest entry (${pttl})`)
  })

  t.test('increment: fixed or sliding lifetime on the server', async (t) => {
    const s = make()
    t.same((await s.increment('n', 60_000)).count, 1)
    await s.client.pexpire('cap1:{n}', 30_000)
    const fixed = await s.increment('n', 60_000)
    t.equal(fixed.count, 2)
    t.ok(fixed.ttlMs <= 30_000 && fixed.ttlMs > 15_000, 'fixed: not extended')
    const sliding = await s.increment('n', 60_000, { sliding: true })
    t.ok(sliding.ttlMs > 30_000, 'sliding: extended')
  })

  t.test('a hung Redis consumes nothing: a failed setIfAbsent or take is undone when Redis runs it late', async (t) => {
    // The two commands sent to the frozen Redis wait for this timeout; the others must not meet it on a loaded
    // machine (a generous bound for a command on loopback).
    const s = make({ commandTimeoutMs: 1000 })
    await s.set('pending', 'login-record', 60_000)
    redis.pause()
    let resumed = false
    t.teardown(() => { if (!resumed) redis.resume() })
    const used = await refusal(s.setIfAbsent('used:T', '1', 60_000, { client: '203.0.113.7' }))
    t.match(used, { statusCode: 503, code: 'GATEHOUSE_STATE_STORE' }, 'marking a token used: 503')
    const taken = await refusal(s.take('pending'))
    t.match(taken, { statusCode: 503, code: 'GATEHOUSE_STATE_STORE' }, 'taking a pending login: 503')
    t.equal(s.owedUndo, 2)
    redis.resume()
    resumed = true
    // The same connection: Redis runs the queued write, then its undo, then these.
    t.equal(await s.setIfAbsent('used:T', '1', 60_000), true, 'the token is not marked used')
    t.equal(await s.take('pending'), 'login-record', 'the pending login is still there')
    t.equal(await s.get('pending'), undefined)
    t.equal(s.owedUndo, 0, 'every undo was answered')
    t.same(await s.client.keys('cap2:*undo:*'), [], 'no undo record is left behind')
  })

  t.test('a write sent twice (a reconnect resends it) reports stored both times; undo then removes it', async (t) => {
    const s = make()
    const { WRITE_SCRIPT, UNDO_SCRIPT } = await import('../../../stores/state/redis-scripts.js')
    const args = ['cap3:{k}', 'cap3:{k}:undo:x', 'cap3:{k}:undone:x', 'v', 60_000, '1', '1', '0'] as const
    t.same(await s.client.eval(WRITE_SCRIPT, 3, ...args), [1, 0])
    t.same(await s.client.eval(WRITE_SCRIPT, 3, ...args), [1, 0], 'the resend is this same write')
    t.same(await s.client.eval(WRITE_SCRIPT, 3, 'cap3:{k}', 'cap3:{k}:undo:y', 'cap3:{k}:undone:y', 'w', 60_000, '1', '1', '0'), [0, 1], 'another write finds it taken')
    t.equal(await s.client.eval(UNDO_SCRIPT, 3, 'cap3:{k}', 'cap3:{k}:undo:x', 'cap3:{k}:undone:x', 'set', 60_000), 1)
    t.equal(await s.get('k'), undefined)
    t.equal(await s.client.eval(UNDO_SCRIPT, 3, 'cap3:{k}', 'cap3:{k}:undo:x', 'cap3:{k}:undone:x', 'set', 60_000), 0, 'undo is idempotent')
  })

  t.test('a take or a write that arrives after its undo does nothing (a Cluster failover: ioredis resends it late)', async (t) => {
    const s = make()
    const { TAKE_SCRIPT, WRITE_SCRIPT, UNDO_SCRIPT } = await import('../../../stores/state/redis-scripts.js')
    const p = s.keyPrefix
    await s.set('late', 'secret', 60_000)
    const take = [`${p}{late}`, `${p}{late}:undo:t`, `${p}{late}:undone:t`] as const
    t.equal(await s.client.eval(UNDO_SCRIPT, 3, ...take, 'take', 60_000), 0, 'the undo, first: nothing to undo yet')
    t.equal(await s.client.eval(TAKE_SCRIPT, 3, ...take), null, 'the take, late: takes nothing')
    t.equal(await s.take('late'), 'secret', 'the value is still there, for the next take')
    const write = [`${p}{fresh}`, `${p}{fresh}:undo:w`, `${p}{fresh}:undone:w`] as const
    t.equal(await s.client.eval(UNDO_SCRIPT, 3, ...write, 'set', 60_000), 0)
    t.same(await s.client.eval(WRITE_SCRIPT, 3, ...write, 'v', 60_000, '1', '1', '0'), [0, 0], 'the write, late: writes nothing')
    t.equal(await s.get('fresh'), undefined)
    const kept = await s.client.pttl(`${p}{fresh}:undone:w`)
    t.ok(kept > 0 && kept <= 60_000, 'the tombstone expires with the undo it stands for')
  })

  t.test('a take after a failed one waits for its undo: a late take resent after its undo failed takes nothing from it', async (t) => {
    // What a Cluster failover does, made deterministic: ioredis answers the take "timed out" but sends it again
    // later, and the undo sent behind it fails too. Only the Cluster client's ordering is played here (on one
    // connection Redis keeps the order, and the store does not wait); Redis is real.
    const { Redis } = await import('ioredis')
    const real = new Redis(redis.url)
    t.teardown(() => real.disconnect())
    let held: (() => Promise<unknown>) | undefined
    let failing = 0
    const client = new Proxy(real, {
      get (target, prop) {
        if (prop === 'isCluster') return true
        if (prop === 'eval') {
          return async (...args: Parameters<typeof real.eval>) => {
            if (failing === 0) return await target.eval(...args)
            if (failing-- === 2) held = async () => await target.eval(...args)
            throw new Error('Command timed out')
          }
        }
        const v = Reflect.get(target, prop) as unknown
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v
      }
    })
    const s = new RedisStateStore(client as unknown as typeof real, { keyPrefix: 'late2:' })
    await s.set('one-time', 'secret', 60_000)
    failing = 2
    t.match(await refusal(s.take('one-time')), { statusCode: 503 }, 'the take "timed out"')
    t.equal(s.owedUndo, 1, 'and so did its undo')
    await held!()
    t.equal(await real.get('late2:{one-time}'), null, 'the take ran late, after all')
    t.equal(await s.take('one-time'), 'secret', 'the next take finds the value: the owed undo ran first')
    t.equal(await s.take('one-time'), undefined, 'taken once')
    t.equal(s.owedUndo, 0)
  })

  t.test('options are checked', async (t) => {
    t.throws(() => new RedisStateStore(redis.url, { maxPerClient: 0 }), { code: 'GATEHOUSE_OPTION', option: 'RedisStateStore.maxPerClient' })
  })
})
