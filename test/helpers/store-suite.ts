/** The behaviour every avatar store must show; each store's test file runs it against its own kind. */
import type { Test } from 'tap'
import type { AvatarStore } from '../../stores/index.js'

const BAD_IDS = ['../escape', 'a/b', '..', '%2e%2e', 'a\0b', 'x'.repeat(65), '', 'a.b', 'a b']

export interface SuiteOptions {
  /** Picks a fresh location and returns how to open a store there (twice, for the persistence test). */
  fresh: () => () => AvatarStore | Promise<AvatarStore>
  /** True when a reopened store must still hold what was written. */
  persistent: boolean
}

export function storeSuite (t: Test, { fresh, persistent }: SuiteOptions): void {
  t.test('an empty store holds nothing', async (t) => {
    const store = await fresh()()
    t.teardown(() => store.close())
    t.same(await store.list(), [])
    t.equal(await store.get('nobody'), null)
    t.equal(await store.id('nobody'), null)
  })

  t.test('put, get, id, list, remove', async (t) => {
    const store = await fresh()()
    t.teardown(() => store.close())
    const a = Buffer.from('first avatar bytes')
    const cid = await store.put('user_a', a)
    t.type(cid, 'string')
    t.ok(cid.length > 0)
    t.equal(await store.id('user_a'), cid, 'id() reports the content id put() returned')
    t.same(Buffer.from((await store.get('user_a'))!), a)
    await store.put('user-b', Buffer.from('second'))
    t.same((await store.list()).sort(), ['user-b', 'user_a'])

    await store.remove('user_a')
    t.equal(await store.get('user_a'), null)
    t.equal(await store.id('user_a'), null)
    t.same(await store.list(), ['user-b'])
    await store.remove('user_a')
    t.pass('removing an unknown id is not an error')
  })

  t.test('replacing an avatar keeps one entry and changes the content id', async (t) => {
    const store = await fresh()()
    t.teardown(() => store.close())
    const first = await store.put('same', Buffer.from('one'))
    t.equal(await store.put('same', Buffer.from('one')), first, 'same bytes, same content id')
    const second = await store.put('same', Buffer.from('two'))
    t.not(second, first)
    t.equal(await store.id('same'), second)
    t.same(Buffer.from((await store.get('same'))!).toString(), 'two')
    t.same(await store.list(), ['same'])
  })

  t.test('the stored bytes do not follow later changes to the caller\'s buffer', async (t) => {
    const store = await fresh()()
    t.teardown(() => store.close())
    const buf = Buffer.from('original')
    await store.put('copy', buf)
    buf.fill(0)
    t.equal(Buffer.from((await store.get('copy'))!).toString(), 'original')
  })

  t.test('invalid ids are never looked up or written', async (t) => {
    const store = await fresh()()
    t.teardown(() => store.close())
    for (const id of BAD_IDS) {
      t.equal(await store.get(id), null, `get ${JSON.stringify(id)}`)
      t.equal(await store.id(id), null, `id ${JSON.stringify(id)}`)
      await t.rejects(async () => store.put(id, Buffer.from('x')), /invalid avatar id/, `put ${JSON.stringify(id)}`)
      await t.rejects(async () => store.remove(id), /invalid avatar id/, `remove ${JSON.stringify(id)}`)
    }
    t.same(await store.list(), [])
  })

  if (persistent) {
    t.test('a reopened store still holds its avatars', async (t) => {
      const open = fresh()
      const first = await open()
      const cid = await first.put('kept', Buffer.from('persisted'))
      await first.put('dropped', Buffer.from('gone'))
      await first.remove('dropped')
      await first.close()
      const again = await open()
      t.teardown(() => again.close())
      t.same(await again.list(), ['kept'])
      t.equal(await again.id('kept'), cid)
      t.equal(Buffer.from((await again.get('kept'))!).toString(), 'persisted')
    })
  }
}
