import t from 'tap'
import { join } from 'node:path'
import sharp from 'sharp'
import { FileStore, LmdbStore, MemoryStore, type AvatarStore } from '../../../stores/index.js'
import { avatarIdOf, identiconPng } from '../../../plugins/avatar/plugin.js'
import { PNG_SIGNATURE, startPictureServer } from '../../helpers/pictures.js'
import { getAvatar, login, startApp, type TestApp } from '../../helpers/avatar-app.js'

const pictures = await startPictureServer()
t.teardown(() => pictures.close())
const dir = t.testdir({})

const kinds: Array<[string, () => AvatarStore]> = [
  ['memory', () => new MemoryStore()],
  ['file', () => new FileStore(join(dir, 'files'))],
  ['lmdb', () => new LmdbStore(join(dir, 'avatars.db'))]
]

async function served (base: string, link: string): Promise<Buffer> {
  const r = await getAvatar(base, link)
  if (r.status !== 200) throw new Error(`GET ${link} answered ${r.status}`)
  return Buffer.from(await r.arrayBuffer())
}

for (const [kind, open] of kinds) {
  t.test(`${kind} store: login stores a resized PNG and serves it`, async (t) => {
    const store = open()
    const { app, base } = await startApp({ store, resizeLimit: 64, fetch: { allowPrivate: ['127.0.0.1'] } })
    t.teardown(() => app.close())

    const { res, body } = await login(base, 'alice', `${pictures.base}/photo.jpg`)
    t.equal(res.status, 200)
    t.equal(body.picture, `http://gatehouse.test/avatar/${avatarIdOf(body.id)}.image`)
    const png = await served(base, body.picture!)
    t.same(png.subarray(0, 8), PNG_SIGNATURE)
    const meta = await sharp(png).metadata()
    t.same([meta.format, meta.width, meta.height], ['png', 64, 48], '400x300 JPEG resized to 64x48 PNG')
    t.same(await store.list(), [avatarIdOf(body.id)])

    // The user's session carries the same link.
    const cookies = res.headers.getSetCookie().map((c) => c.split(';')[0]!)
    const xsrf = cookies.find((c) => c.startsWith('XSRF-TOKEN='))!.slice('XSRF-TOKEN='.length)
    const me = await fetch(`${base}/auth/user`, { headers: { cookie: cookies.join('; '), 'x-xsrf-token': xsrf } })
    t.equal(me.status, 200)
    t.equal((await me.json() as { picture?: string }).picture, body.picture)

    const again = await login(base, 'alice', `${pictures.base}/photo.jpg`)
    t.equal(again.body.picture, body.picture, 'the same link at the next login')
    t.equal((await store.list()).length, 1, 'a second login does not grow the store')

    const other = await login(base, 'bob', `${pictures.base}/text`)
    t.equal(other.res.status, 200, 'a failed picture does not fail the login')
    t.same(await served(base, other.body.picture!), await identiconPng(other.body.id, 64), 'bob gets his identicon')
    t.equal((await store.list()).length, 2)
  })
}

t.test('reopening a persistent store serves avatars stored before the restart', async (t) => {
  const first = await startApp({ store: new LmdbStore(join(dir, 'restart.db')), fetch: { allowPrivate: true } })
  const { body } = await login(first.base, 'carol', `${pictures.base}/small.png`)
  const before = await served(first.base, body.picture!)
  await first.app.close()
  const second = await startApp({ store: `bolt://${join(dir, 'restart.db')}` })
  t.teardown(() => second.app.close())
  t.same(await served(second.base, body.picture!), before)
})

t.test('bad pictures: each refused by its own limit (logged); login succeeds with an identicon', async (t) => {
  // The server that never answers meets the 500 ms limit; every other picture is refused by its own limit, with the
  // time limit far away (a loaded machine must not turn a refusal into a timeout).
  const limits = { allowPrivate: ['127.0.0.1'], timeout: '2m', maxBytes: 512 * 1024, maxRedirects: 2 }
  const app: TestApp = await startApp({ store: new MemoryStore(), fetch: limits })
  t.teardown(() => app.app.close())
  const hangApp: TestApp = await startApp({ store: new MemoryStore(), fetch: { ...limits, timeout: 500 } })
  t.teardown(() => hangApp.app.close())
  const cases: Array<[string, string, RegExp]> = [
    ['not an image', '/text', /not a raster image/],
    ['SVG with script', '/evil.svg', /not a raster image/],
    ['HTML with script, served as image/png', '/evil.html', /not a raster image/],
    ['decompression bomb', '/bomb.png', /exceeds the 16777216-pixel limit/],
    ['50 MiB body with a length', '/huge', /exceeds the 524288-byte limit/],
    ['50 MiB body without a length', '/endless', /exceeds the 524288-byte limit/],
    ['a server that never answers', '/hang', /no complete answer within 500 ms/],
    ['a redirect loop', '/loop', /more than 2 redirects/],
    ['a redirect to the metadata address', '/redirect-metadata', /169\.254\.169\.254 resolves to non-public address/],
    ['a missing picture', '/missing', /status 404/]
  ]
  let n = 0
  for (const [name, path, reason] of cases) {
    const user = `victim${n++}`
    const on = path === '/hang' ? hangApp : app
    const { res, body } = await login(on.base, user, pictures.base + path)
    t.equal(res.status, 200, `${name}: login succeeds`)
    const png = await served(on.base, body.picture!)
    t.same(png, await identiconPng(body.id), `${name}: the identicon is served`)
    t.notMatch(png.toString('latin1'), /<script|<svg|<html/i, `${name}: nothing of the input is served`)
    t.match(on.lines.at(-1), reason, `${name}: logged why`)
    t.equal(on.lines.filter((l) => l.includes(body.id)).length, 1, `${name}: logged once, naming the user`)
  }
})

t.test('without allowPrivate, loopback and metadata targets are refused and never contacted', async (t) => {
  const { app, base, lines } = await startApp({ store: new MemoryStore() })
  t.teardown(() => app.close())
  const before = pictures.requests.length
  const port = new URL(pictures.base).port
  for (const target of [`http://127.0.0.1:${port}/photo.jpg`, `http://localhost:${port}/photo.jpg`, 'http://169.254.169.254/latest/meta-data/']) {
    const { res, body } = await login(base, 'mallory', target)
    t.equal(res.status, 200)
    t.same(await served(base, body.picture!), await identiconPng(body.id), target)
    t.match(lines.at(-1), /resolves to non-public address/)
  }
  t.equal(pictures.requests.length, before, 'the picture server saw no request')
})

t.test('a login without a picture gets an identicon; a later failure keeps an earlier real picture', async (t) => {
  const { app, base } = await startApp({ store: new MemoryStore(), fetch: { allowPrivate: true } })
  t.teardown(() => app.close())
  const none = await login(base, 'nopic')
  t.same(await served(base, none.body.picture!), await identiconPng(none.body.id))

  const first = await login(base, 'dave', `${pictures.base}/small.png`)
  const real = await served(base, first.body.picture!)
  t.not(real.equals(await identiconPng(first.body.id)), true)
  await login(base, 'dave', `${pictures.base}/missing`)
  t.same(await served(base, first.body.picture!), real, 'a passing failure does not replace the real picture')
})

t.test('a store that throws: login succeeds without a picture, a clear log line, GET answers 503', async (t) => {
  const down: AvatarStore = {
    put () { throw new Error('ENOSPC: no space left on device') },
    get () { throw new Error('database down') },
    id () { throw new Error('database down') },
    remove () {},
    list: () => [],
    close () {}
  }
  const { app, base, lines } = await startApp({ store: down, fetch: { allowPrivate: true } })
  t.teardown(() => app.close())
  const { res, body } = await login(base, 'erin', `${pictures.base}/small.png`)
  t.equal(res.status, 200)
  t.equal(body.name, 'erin')
  t.equal(body.picture, undefined, 'no avatar link')
  t.match(lines.join('\n'), /avatar: store failed for user pic_[0-9a-f]+, login continues without an avatar: ENOSPC/)
  const r = await fetch(`${base}/avatar/${avatarIdOf(body.id)}.image`)
  t.equal(r.status, 503)
  t.same(await r.json(), { error: 'avatar store unavailable', code: 'GATEHOUSE_UNAVAILABLE' })
})
