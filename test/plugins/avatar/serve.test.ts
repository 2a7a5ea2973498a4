import t from 'tap'
import { request } from 'node:http'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import sharp from 'sharp'
import { FileStore, type AvatarStore } from '../../../stores/index.js'
import { avatarIdOf } from '../../../plugins/avatar/plugin.js'
import { png, PNG_SIGNATURE } from '../../helpers/pictures.js'
import { PUBLIC_URL, startApp } from '../../helpers/avatar-app.js'
import { coreOf } from '../../../plugins/core/signin/internals.js'

/** A file store that records every id it is asked for, to prove bad ids never reach it. */
class SpyStore extends FileStore {
  readonly asked: string[] = []
  override async get (id: string) { this.asked.push(id); return super.get(id) }
  override async id (id: string) { this.asked.push(id); return super.id(id) }
}

const dir = t.testdir({ 'secret.image': 'TOP SECRET', avatars: {} })
const store = new SpyStore(join(dir, 'avatars'))
// Planted where a traversal would look: beside and above the store's root.
writeFileSync(join(dir, 'avatars', 'secret.image'), 'TOP SECRET')
const { app, base, lines } = await startApp({ store })
t.teardown(() => app.close())

const link = await coreOf(app).avatar!.save('github_alice', { bytes: await png(30, 20) })
const path = new URL(link!).pathname

/** Raw HTTP GET: the path goes on the wire exactly as written (fetch would normalise `..`). */
function rawGet (p: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(base)
    const req = request({ host: u.hostname, port: u.port, path: p, method: 'GET' }, (res) => {
      let body = ''
      res.setEncoding('latin1')
      res.on('data', (c: string) => { body += c })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

t.test('save returns the full public link of a stable avatar id', async (t) => {
  t.equal(link, `${PUBLIC_URL}/avatar/${avatarIdOf('github_alice')}.image`)
  t.match(avatarIdOf('github_alice'), /^[0-9a-f]{40}$/)
})

t.test('an avatar is served as a PNG with safe, cacheable headers', async (t) => {
  const r = await fetch(base + path)
  t.equal(r.status, 200)
  t.equal(r.headers.get('content-type'), 'image/png')
  const body = Buffer.from(await r.arrayBuffer())
  t.equal(r.headers.get('content-length'), String(body.length))
  t.same(body.subarray(0, 8), PNG_SIGNATURE)
  t.same(Buffer.from((await store.get(avatarIdOf('github_alice')))!), body)
  t.match(r.headers.get('etag'), /^"[^"]+"$/)
  t.equal(r.headers.get('cache-control'), 'public, max-age=3600')
  t.equal(r.headers.get('x-content-type-options'), 'nosniff')
  t.equal(r.headers.get('content-security-policy'), "default-src 'none'; sandbox; frame-ancestors 'none'")
  const meta = await sharp(body).metadata()
  t.same([meta.width, meta.height], [30, 20])
})

t.test('If-None-Match with the ETag answers 304 without a body; other tags get the image', async (t) => {
  const etag = (await fetch(base + path)).headers.get('etag')!
  for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
    const r = await fetch(base + path, { headers: { 'if-none-match': inm } })
    t.equal(r.status, 304, inm)
    t.equal(r.headers.get('etag'), etag)
    t.equal((await r.arrayBuffer()).byteLength, 0)
  }
  const r = await fetch(base + path, { headers: { 'if-none-match': '"stale"' } })
  t.equal(r.status, 200)
  await r.arrayBuffer()
})

t.test('a new picture changes the ETag', async (t) => {
  const before = (await fetch(base + path)).headers.get('etag')
  await coreOf(app).avatar!.save('github_alice', { bytes: await png(31, 20) })
  const after = await fetch(base + path)
  t.not(after.headers.get('etag'), before)
  t.equal((await sharp(Buffer.from(await after.arrayBuffer())).metadata()).width, 31)
})

t.test('HEAD answers the headers only', async (t) => {
  const r = await fetch(base + path, { method: 'HEAD' })
  t.equal(r.status, 200)
  t.equal(r.headers.get('content-type'), 'image/png')
})

t.test('an unknown id is a 404 JSON error', async (t) => {
  const r = await fetch(`${base}/avatar/${'0'.repeat(40)}.image`)
  t.equal(r.status, 404)
  t.match(r.headers.get('content-type'), /^application\/json/)
  t.same(await r.json(), { error: 'avatar not found', code: 'GATEHOUSE_NOT_FOUND' })
  t.equal(r.headers.get('cache-control'), 'no-store', 'a 404 is not cached: the avatar may appear at the next login')
})

t.test('crafted ids are 404 JSON and never reach the store', async (t) => {
  store.asked.length = 0
  const crafted = [
    '/avatar/../secret.image', '/avatar/..%2fsecret.image', '/avatar/..%2F..%2Fsecret.image', '/avatar/%2e%2e.image',
    '/avatar/%2e%2e%2fsecret.image', '/avatar/%2E%2E/secret.image', '/avatar/..', '/avatar/secret.image%00.png',
    '/avatar/abc%00.image', `/avatar/${'a'.repeat(65)}.image`, `/avatar/${'a'.repeat(300)}.image`, '/avatar/a.b.image',
    '/avatar/.image', '/avatar/abc.png', '/avatar/abc', '/avatar/%5c..%5csecret.image', '/avatar/a%20b.image', '/avatar/'
  ]
  for (const p of crafted) {
    const r = await rawGet(p)
    t.equal(r.status, 404, p)
    t.match(String(r.headers['content-type']), /^application\/json/, p)
    t.ok(typeof JSON.parse(r.body).error === 'string', `${p}: JSON error body`)
    t.notMatch(r.body, /TOP SECRET/, p)
  }
  t.same(store.asked, [], 'the store was asked for none of them')
})

t.test('avatar ids that are valid but unknown are looked up, and answer 404', async (t) => {
  store.asked.length = 0
  t.equal((await rawGet('/avatar/secret.image')).status, 404)
  t.same(store.asked, ['secret'], 'looked up as an id inside the store, not as the planted file')
})

t.test('log lines name no picture link', async (t) => {
  t.notMatch(lines.join('\n'), /https?:\/\//)
})
