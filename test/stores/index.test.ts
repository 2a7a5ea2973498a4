import t from 'tap'
import { join } from 'node:path'
import { FileStore, LmdbStore, MemoryStore, migrateAvatars, newStore, openAvatarStore, type AvatarStore } from '../../stores/index.js'

const base = t.testdir({})

t.test('an object with the store methods is used as is', async (t) => {
  const custom: AvatarStore = {
    put: () => 'cid', get: () => null, id: () => null, remove: () => {}, list: () => [], close: () => {}
  }
  t.equal(openAvatarStore(custom), custom)
})

t.test('bad addresses and objects are refused with a clear message', async (t) => {
  t.throws(() => openAvatarStore('ftp://host/x'), /scheme "ftp:" is not supported/)
  t.throws(() => openAvatarStore(''), /empty/)
  t.throws(() => openAvatarStore('bolt://'), /has no path/)
  t.throws(() => openAvatarStore({ put () {} } as unknown as AvatarStore), /put, get, id, remove, list and close/)
  t.throws(() => openAvatarStore(42 as unknown as string), /address string or an object/)
})

t.test('migrateAvatars copies every avatar between store kinds', async (t) => {
  const memory = new MemoryStore()
  memory.put('alice', Buffer.from('alice png'))
  memory.put('bob', Buffer.from('bob png'))
  const file = new FileStore(join(base, 'files'))
  t.equal(await migrateAvatars(memory, file), 2)
  t.same((await file.list()).sort(), ['alice', 'bob'])

  // From a store object to an address: the address is opened, filled and closed here.
  const dbPath = join(base, 'avatars.db')
  t.equal(await migrateAvatars(file, `bolt://${dbPath}`), 2)
  const lmdb = new LmdbStore(dbPath)
  t.teardown(() => lmdb.close())
  t.equal(Buffer.from(lmdb.get('bob')!).toString(), 'bob png')
  t.same(memory.list(), ['alice', 'bob'], 'the source is left as it was')
})

t.test('an empty source copies nothing', async (t) => {
  t.equal(await migrateAvatars('memory://', new MemoryStore()), 0)
})

t.test('a failing target stops the migration with its error; store objects stay open for their owner', async (t) => {
  let closed = false
  const source = new MemoryStore()
  source.put('x', Buffer.from('x'))
  const broken: AvatarStore = {
    put: () => { throw new Error('disk full') }, get: () => null, id: () => null, remove: () => {}, list: () => [], close: () => { closed = true }
  }
  await t.rejects(migrateAvatars(source, broken), /disk full/)
  t.notOk(closed, 'a store object passed in is left open for its owner')
})

t.test('newStore, the seed name, stays as a deprecated alias of openAvatarStore (it warns once: test/deprecations.test.ts)', async (t) => {
  t.equal(newStore.name, openAvatarStore.name)
  t.type(newStore('memory://'), MemoryStore)
})
