import t from 'tap'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { LmdbStore, openAvatarStore } from '../../stores/index.js'
import { storeSuite } from '../helpers/store-suite.js'

const base = t.testdir({})
let n = 0

storeSuite(t, {
  fresh: () => {
    const file = join(base, `suite-${n++}.db`)
    return () => new LmdbStore(file)
  },
  persistent: true
})

t.test('one database file (plus lmdb\'s -lock file), even without a dot in the name', async (t) => {
  const dir = join(base, 'single')
  const store = new LmdbStore(join(dir, 'avatars'))
  await store.put('a', Buffer.from('x'))
  await store.close()
  t.same(readdirSync(dir).sort(), ['avatars', 'avatars-lock'])
  t.ok(statSync(join(dir, 'avatars')).isFile())
})

t.test('bolt:///absolute and bolt://relative addresses', async (t) => {
  const abs = join(base, 'abs.db')
  const a = openAvatarStore(`bolt://${abs}`)
  t.type(a, LmdbStore)
  t.equal((a as LmdbStore).path, abs)
  await a.close()
  const rel = relative(process.cwd(), join(base, 'rel.db'))
  const b = openAvatarStore(`bolt://./${rel}`)
  t.equal((b as LmdbStore).path, join(base, 'rel.db'))
  await b.close()
  t.ok(existsSync(join(base, 'rel.db')))
})

t.test('a record too short to carry a content id reads as absent', async (t) => {
  const store = new LmdbStore(join(base, 'short.db'))
  t.teardown(() => store.close())
  // Written behind the store's back, as a foreign tool sharing the file might.
  await (store as unknown as { db: { put: (k: string, v: Buffer) => Promise<boolean> } }).db.put('short', Buffer.from('tiny'))
  t.equal(store.get('short'), null)
  t.equal(store.id('short'), null)
})
