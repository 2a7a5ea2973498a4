import t from 'tap'
import { randomBytes } from 'node:crypto'
import { MongoClient } from 'mongodb'
import { GridFsStore, openAvatarStore } from '../../stores/index.js'
import { storeSuite } from '../helpers/store-suite.js'

const url = process.env.MONGODB_URL

t.test('address parsing opens a GridFS store without connecting', async (t) => {
  for (const address of [
    'mongodb://127.0.0.1:1/authdb?ava_db=pics&ava_coll=faces',
    'mongodb://127.0.0.1:1,127.0.0.1:2/authdb?replicaSet=rs0&ava_coll=faces',
    'mongodb://127.0.0.1:1'
  ]) {
    const store = openAvatarStore(address)
    t.type(store, GridFsStore, address)
    const where = store as unknown as { db: { databaseName: string }; filesCollection: string }
    t.ok(where.db.databaseName.length > 0 && where.filesCollection.endsWith('.files'), address)
    await store.close()
  }
  const cases: Array<[string, string, string]> = [
    ['mongodb://127.0.0.1:1/authdb?ava_db=pics&ava_coll=faces', 'pics', 'faces.files'],
    ['mongodb://127.0.0.1:1/authdb', 'authdb', 'avatars.files'],
    ['mongodb://127.0.0.1:1/', 'gatehouse', 'avatars.files']
  ]
  for (const [address, db, files] of cases) {
    const store = openAvatarStore(address)
    const where = store as unknown as { db: { databaseName: string }; filesCollection: string }
    t.same([where.db.databaseName, where.filesCollection], [db, files], address)
    await store.close()
  }
})

if (url === undefined || url === '') {
  const reason = 'MONGODB_URL is not set: no MongoDB server can be installed on this machine (not in Debian; ' +
    'npm test servers download binaries at run time). Set MONGODB_URL=mongodb://host:port to run the GridFS suite.'
  t.comment(`GridFS suite skipped: ${reason}`)
  t.test('GridFS store suite against a real MongoDB', { skip: reason }, async () => {})
} else {
  // A database of its own per run, dropped at the end, so that runs never see each other's avatars.
  const db = `gatehouse_test_${randomBytes(4).toString('hex')}`
  let bucket = 0
  t.teardown(async () => {
    const client = new MongoClient(url)
    await client.db(db).dropDatabase()
    await client.close()
  })
  storeSuite(t, {
    fresh: () => {
      const u = new URL(url)
      u.searchParams.set('ava_db', db)
      u.searchParams.set('ava_coll', `avatars${bucket++}`)
      return () => openAvatarStore(u.toString())
    },
    persistent: true
  })

  t.test('a replaced avatar leaves exactly one GridFS file (old ones deleted by id)', async (t) => {
    const client = new MongoClient(url)
    t.teardown(() => client.close())
    const store = new GridFsStore(client, { db, bucket: 'replace' })
    await store.put('one', Buffer.from('a'))
    await store.put('one', Buffer.from('b'))
    await store.put('one', Buffer.from('c'))
    t.equal(await client.db(db).collection('replace.files').countDocuments({ filename: 'one' }), 1)
    t.equal(Buffer.from((await store.get('one'))!).toString(), 'c')
  })
}
