/**
 * The behaviour every passkey store must show, run against each built-in kind (memory, lmdb single file, Redis on a
 * real redis-server), plus opening stores by address and the custom-object form. Concurrent changes are raced
 * through separate store objects on one backend where the backend is shared (lmdb file, Redis), so exactly one
 * of two instances may win.
 */
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  LmdbPasskeyStore, MemoryPasskeyStore, openPasskeyStore, RedisPasskeyStore, type PasskeyCredential, type PasskeyStore
} from '../../../stores/index.js'
import { RedisServer, redisMissingReason } from '../../helpers/redis-server.js'

let n = 0
function credential (userId: string, extra: Partial<PasskeyCredential> = {}): PasskeyCredential {
  n++
  return {
    id: Buffer.from(`credential-${n}-${Math.random()}`).toString('base64url'),
    userId,
    user: { name: userId.replace(/_.*/, ''), id: userId },
    publicKey: new Uint8Array([0xa5, 1, 2, 3, n & 0xff]),
    counter: 0,
    transports: ['internal'],
    created: 1_700_000_000_000 + n,
    deviceType: 'multiDevice',
    backedUp: true,
    ...extra
  }
}

interface Kind {
  /** Opens a store on a fresh backend; `again()` opens another store object on the same backend. */
  fresh(t: Test): Promise<{ store: PasskeyStore; again(): Promise<PasskeyStore> }>
  persistent: boolean
}

function suite (t: Test, kind: Kind): void {
  t.test('add, get, list, use, remove', async (t) => {
    const { store } = await kind.fresh(t)
    const a = credential('alice_1', { label: 'laptop' })
    const b = credential('alice_1')
    const c = credential('bob_2')
    t.equal(await store.add(a, 10), 'added')
    t.equal(await store.add(b, 10), 'added')
    t.equal(await store.add(c, 10), 'added')
    const got = await store.get(a.id)
    t.same({ ...got, publicKey: [...got!.publicKey] }, { ...a, publicKey: [...a.publicKey] }, 'every field comes back')
    t.ok(got!.publicKey instanceof Uint8Array)
    t.equal(await store.get('unknown'), undefined)
    t.same((await store.list('alice_1')).map((x) => x.id), [a.id, b.id], 'oldest first')
    t.same(await store.list('nobody'), [])

    t.equal(await store.use(a.id, 0, 5, 1234), true)
    t.match(await store.get(a.id), { counter: 5, lastUsed: 1234 })
    t.equal(await store.use(a.id, 0, 6, 1235), false, 'a stale expected counter loses')
    t.match(await store.get(a.id), { counter: 5, lastUsed: 1234 })
    t.equal(await store.use('unknown', 0, 1, 1), false)

    t.equal(await store.remove('bob_2', a.id), false, 'another user\'s credential is not removed')
    t.ok(await store.get(a.id))
    t.equal(await store.remove('alice_1', a.id), true)
    t.equal(await store.get(a.id), undefined)
    t.same((await store.list('alice_1')).map((x) => x.id), [b.id])
    t.equal(await store.remove('alice_1', a.id), false)
  })

  t.test('an id is registered once (to anyone); a user holds at most `limit`', async (t) => {
    const { store } = await kind.fresh(t)
    const a = credential('alice_1')
    t.equal(await store.add(a, 2), 'added')
    t.equal(await store.add({ ...a, userId: 'bob_2', user: { name: 'bob', id: 'bob_2' } }, 2), 'exists')
    t.equal((await store.get(a.id))?.userId, 'alice_1')
    t.same(await store.list('bob_2'), [])
    t.equal(await store.add(credential('alice_1'), 2), 'added')
    t.equal(await store.add(credential('alice_1'), 2), 'full')
    t.equal((await store.list('alice_1')).length, 2)
  })

  t.test('what a caller gets is a copy', async (t) => {
    const { store } = await kind.fresh(t)
    const a = credential('alice_1')
    await store.add(a, 10)
    a.publicKey[0] = 0
    const got = await store.get(a.id)
    t.equal(got!.publicKey[0], 0xa5, 'later changes to the added object do not reach the store')
    got!.publicKey[1] = 0
    got!.transports.push('usb')
    t.match(await store.get(a.id), { transports: ['internal'] })
    t.equal((await store.get(a.id))!.publicKey[1], 1)
  })

  t.test('programming errors are refused alike', async (t) => {
    const { store } = await kind.fresh(t)
    await t.rejects(store.add({ ...credential('alice_1'), id: '' }, 10), TypeError)
    await t.rejects(store.add({ ...credential(''), userId: '' }, 10), TypeError)
    await t.rejects(store.add({ ...credential('alice_1'), counter: -1 }, 10), TypeError)
    await t.rejects(store.get(''), TypeError)
    await t.rejects(store.list(''), TypeError)
  })

  t.test('concurrent changes: one winner', async (t) => {
    const { store, again } = await kind.fresh(t)
    const other = await again()
    const a = credential('alice_1')
    const results = await Promise.all([store.add(a, 10), other.add(a, 10), store.add(a, 10), other.add(a, 10)])
    t.same(results.filter((r) => r === 'added').length, 1, 'one add of an id wins')
    const uses = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? store : other).use(a.id, 0, i + 1, i)))
    t.equal(uses.filter(Boolean).length, 1, 'one use from a counter wins')
    const adds = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? store : other).add(credential('bob_2'), 3)))
    t.equal(adds.filter((r) => r === 'added').length, 3, 'the limit holds under concurrent adds')
    t.equal((await store.list('bob_2')).length, 3)
  })

  if (kind.persistent) {
    t.test('a reopened store still holds what was written', async (t) => {
      const { store, again } = await kind.fresh(t)
      const a = credential('alice_1')
      await store.add(a, 10)
      await store.use(a.id, 0, 3, 99)
      await store.close()
      const reopened = await again()
      t.match(await reopened.get(a.id), { id: a.id, counter: 3, lastUsed: 99 })
    })
  }
}

t.test('memory store', async (t) => {
  suite(t, {
    persistent: false,
    async fresh () {
      const store = new MemoryPasskeyStore()
      return { store, again: async () => store }
    }
  })
})

t.test('lmdb store', async (t) => {
  suite(t, {
    persistent: true,
    async fresh (t) {
      const dir = mkdtempSync(join(tmpdir(), 'gatehouse-passkeys-'))
      const stores: PasskeyStore[] = []
      const open = async (): Promise<PasskeyStore> => { const s = new LmdbPasskeyStore(join(dir, 'passkeys.db')); stores.push(s); return s }
      t.teardown(async () => {
        for (const s of stores) await s.close().catch(() => {})
        rmSync(dir, { recursive: true, force: true })
      })
      return { store: await open(), again: open }
    }
  })
})

const redisMissing = redisMissingReason()
t.test('Redis store', { skip: redisMissing }, async (t) => {
  const server = new RedisServer()
  await server.start()
  t.teardown(() => server.stop())
  let prefix = 0
  suite(t, {
    persistent: true,
    async fresh (t) {
      const keyPrefix = `t${++prefix}:`
      const stores: PasskeyStore[] = []
      const open = async (): Promise<PasskeyStore> => { const s = new RedisPasskeyStore(server.url, { keyPrefix }); stores.push(s); return s }
      t.teardown(async () => { for (const s of stores) await s.close() })
      return { store: await open(), again: open }
    }
  })

  t.test('a corrupt record is a 503, never a credential', async (t) => {
    const store = new RedisPasskeyStore(server.url, { keyPrefix: 'corrupt:' })
    t.teardown(() => store.close())
    await store.client.hset('corrupt:passkey:{c:bad-json}', 'fixed', '{not json', 'counter', '0')
    await store.client.hset('corrupt:passkey:{c:bad-shape}', 'fixed', '{"id":1}', 'counter', '0')
    await t.rejects(store.get('bad-json'), { statusCode: 503, name: 'PasskeyStoreError' })
    await t.rejects(store.get('bad-shape'), { statusCode: 503, name: 'PasskeyStoreError' })
  })

  t.test('Redis down: every method is a 503 PasskeyStoreError', async (t) => {
    const down = new RedisServer()
    await down.start()
    // The write before the outage must not meet it on a loaded machine (a generous bound for a command on loopback).
    const store = new RedisPasskeyStore(down.url, { commandTimeoutMs: 2000 })
    t.teardown(() => store.close())
    await store.add(credential('alice_1'), 10)
    await down.stop()
    await t.rejects(store.get('x'), { statusCode: 503, code: 'GATEHOUSE_UNAVAILABLE', name: 'PasskeyStoreError' })
    await t.rejects(store.add(credential('alice_1'), 10), { statusCode: 503 })
    await t.rejects(store.list('alice_1'), { statusCode: 503 })
  })
})

t.test('opening a store by address or object', async (t) => {
  const memory = openPasskeyStore('memory://', 'store')
  t.ok(memory.store instanceof MemoryPasskeyStore)
  t.equal(memory.owned, true)
  t.ok(openPasskeyStore(undefined, 'store').store instanceof MemoryPasskeyStore)
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-passkeys-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const bolt = openPasskeyStore(`bolt://${join(dir, 'p.db')}`, 'store')
  t.ok(bolt.store instanceof LmdbPasskeyStore)
  t.equal((bolt.store as LmdbPasskeyStore).path, join(dir, 'p.db'))
  await bolt.store.close()
  const custom = new MemoryPasskeyStore()
  t.same(openPasskeyStore(custom, 'store'), { store: custom, owned: false }, 'an object is used as given and not closed by us')
  t.throws(() => openPasskeyStore('mongodb://user:pw@host/db', 'passkey.store'), { code: 'GATEHOUSE_OPTION', option: 'passkey.store', message: /"mongodb:" address/ })
  t.throws(() => openPasskeyStore('mongodb://user:pw@host/db', 'passkey.store'), { message: /^((?!pw).)*$/ }, 'the address itself is not repeated')
  t.throws(() => openPasskeyStore('bolt://', 'passkey.store'), { option: 'passkey.store', message: /without a file path/ })
  t.throws(() => openPasskeyStore('just text', 'passkey.store'), { option: 'passkey.store' })
  t.throws(() => openPasskeyStore({ add () {} }, 'passkey.store'), { option: 'passkey.store' })
  t.throws(() => openPasskeyStore(42, 'passkey.store'), { option: 'passkey.store' })
  t.throws(() => openPasskeyStore('redis://user:pw@[bad', 'passkey.store'), { option: 'passkey.store', message: /^((?!pw).)*$/ }, 'an address that does not parse, not repeated')
})
