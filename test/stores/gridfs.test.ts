import t from 'tap'
import { randomBytes } from 'node:crypto'
import { MongoClient } from 'mongodb'
import { GridFsStore, newStore } from '../../stores/index.js'
import { storeSuite } from './store-suite.js'

const url = process.env.MONGODB_URL

t.test('address parsing opens a GridFS store without connecting', async (t) => {
  const store = newStore('mongodb://127.0.0.1:1/authdb?ava_db=pics&ava_coll=faces')
  t.type(store, GridFsStore)
  await store.close()
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
      return () => newStore(u.toString())
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
