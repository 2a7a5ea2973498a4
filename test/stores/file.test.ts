import t from 'tap'
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, writeFileSync, mkdirSync, existsSync, renameSync, unlinkSync } from 'node:fs'
import { join, relative } from 'node:path'
import { pathToFileURL } from 'node:url'
import { FileStore, openAvatarStore } from '../../stores/index.js'
import { storeSuite } from '../helpers/store-suite.js'

const base = t.testdir({})
let n = 0

storeSuite(t, {
  fresh: () => {
    const dir = join(base, `suite-${n++}`)
    return () => new FileStore(dir)
  },
  persistent: true
})

storeSuite(t, {
  fresh: () => {
    const dir = join(base, `uncached-${n++}`)
    return () => new FileStore(dir, { cacheBytes: 0 })
  },
  persistent: true
})

t.test('the read cache never serves a file changed behind the store\'s back', async (t) => {
  const root = join(base, 'cache')
  const store = new FileStore(root)
  await store.put('cached', Buffer.from('version 1'))
  t.equal(Buffer.from((await store.get('cached'))!).toString(), 'version 1')
  t.equal(Buffer.from((await store.get('cached'))!).toString(), 'version 1', 'second read (from the cache)')
  const file = join(root, createHash('sha1').update('cached').digest('hex').slice(0, 2), 'cached.png')
  // Another process replacing the file atomically (new inode)...
  writeFileSync(file + '.new', 'version 2')
  renameSync(file + '.new', file)
  t.equal(Buffer.from((await store.get('cached'))!).toString(), 'version 2')
  // ...or rewriting it in place (same inode, new size and time).
  const idBefore = await store.id('cached')
  writeFileSync(file, 'version 3, longer')
  t.equal(Buffer.from((await store.get('cached'))!).toString(), 'version 3, longer')
  const idAfter = await store.id('cached')
  t.not(idAfter, idBefore, 'the content id follows the change')
  t.equal(await store.id('cached'), idAfter, 'and stays the same while the file does')
  unlinkSync(file)
  t.equal(await store.get('cached'), null, 'a deleted file is gone, cache or not')
})

t.test('the cache stays within its byte budget', async (t) => {
  const store = new FileStore(join(base, 'budget'), { cacheBytes: 4000 })
  for (let i = 0; i < 20; i++) {
    await store.put(`a${i}`, Buffer.alloc(900, i))
    t.equal(Buffer.from((await store.get(`a${i}`))!)[0], i)
  }
  const inner = store as unknown as { cached: number; cache: Map<string, unknown> }
  t.ok(inner.cached <= 4000, `${inner.cached} bytes cached`)
  t.ok(inner.cache.size <= 4)
  for (let i = 0; i < 20; i++) t.equal(Buffer.from((await store.get(`a${i}`))!)[0], i, `a${i} still readable`)
})

t.test('one file per avatar, nested by a hash prefix, no temporary files left', async (t) => {
  const root = join(base, 'layout')
  const store = new FileStore(root)
  await store.put('abc', Buffer.from('png bytes'))
  await store.put('abc', Buffer.from('newer bytes'))
  const prefix = createHash('sha1').update('abc').digest('hex').slice(0, 2)
  t.same(readdirSync(root), [prefix])
  t.same(readdirSync(join(root, prefix)), ['abc.png'], 'no temporary file survives the rename')
  t.equal(readFileSync(join(root, prefix, 'abc.png'), 'utf8'), 'newer bytes')
})

t.test('list ignores files that are not avatars of this layout', async (t) => {
  const root = join(base, 'foreign')
  const store = new FileStore(root)
  await store.put('real', Buffer.from('x'))
  writeFileSync(join(root, 'stray.png'), 'x')
  mkdirSync(join(root, 'zz'))
  writeFileSync(join(root, 'zz', 'wrongdir.png'), 'x')
  const prefix = createHash('sha1').update('real').digest('hex').slice(0, 2)
  writeFileSync(join(root, prefix, '.real.0000.tmp'), 'x')
  t.same(await store.list(), ['real'])
})

t.test('nothing outside the root is read through a crafted id', async (t) => {
  const root = join(base, 'jail')
  const store = new FileStore(join(root, 'avatars'))
  writeFileSync(join(root, 'secret.png'), 'secret')
  for (const id of ['../secret', '..%2Fsecret', '../../jail/secret', '/etc/passwd']) {
    t.equal(await store.get(id), null, id)
  }
})

t.test('addresses: plain path, file:///absolute, file://relative', async (t) => {
  const abs = join(base, 'by-url')
  const a = openAvatarStore(pathToFileURL(abs).href)
  t.type(a, FileStore)
  t.equal((a as FileStore).root, abs)
  const b = openAvatarStore(join(base, 'plain'))
  t.equal((b as FileStore).root, join(base, 'plain'))
  const rel = relative(process.cwd(), join(base, 'relative'))
  const c = openAvatarStore(`file://./${rel}`)
  t.equal((c as FileStore).root, join(base, 'relative'))
  t.ok(existsSync(join(base, 'relative')), 'the directory is created on open')
})

t.test('a root that cannot be a directory fails at open with the OS error', async (t) => {
  const file = join(base, 'not-a-dir')
  writeFileSync(file, 'x')
  t.throws(() => new FileStore(file), { code: 'EEXIST' })
})
