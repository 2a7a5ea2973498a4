/** Registration of the avatar plugin: options validation, dependencies, prefix, store lifecycle. */
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { join } from 'node:path'
import { AvatarProxy, avatarIdOf, avatarPlugin, type AvatarOptions } from '../../../plugins/avatar/plugin.js'
import type { AvatarStore } from '../../../stores/index.js'
import sharp from 'sharp'
import { png } from '../../helpers/pictures.js'
import { coreWithAvatar, picProvider, startApp } from '../../helpers/avatar-app.js'
import { authPlugin } from '../../../auth.js'
import { listen } from '../../helpers/client.js'
import { coreOf } from '../../../plugins/core/signin/internals.js'


/** Loads the auth core plus the avatar plugin with `opts`; resolves to the registration error, if any. */
async function registrationError (opts: unknown): Promise<Error | undefined> {
  let app: FastifyInstance | undefined
  try {
    app = await coreWithAvatar(opts as AvatarOptions)
    await app.ready()
    return undefined
  } catch (err) {
    return err as Error
  } finally {
    await app?.close().catch(() => {})
  }
}

t.test('bad options fail registration with an OptionsError naming the option', async (t) => {
  const cases: Array<[unknown, string]> = [
    [{ store: 'ftp://host/x' }, 'avatar.store'],
    [{ store: 42 }, 'avatar.store'],
    [{ store: { put () {} } }, 'avatar.store'],
    [{ resizeLimit: -1 }, 'avatar.resizeLimit'],
    [{ resizeLimit: 1.5 }, 'avatar.resizeLimit'],
    [{ prefix: 'avatar' }, 'avatar.prefix'],
    [{ url: 'ftp://x' }, 'avatar.url'],
    [{ maxAge: -5 }, 'avatar.maxAge'],
    [{ maxAge: '1 hour' }, 'avatar.maxAge'],
    [{ fetch: { maxBytes: 0 } }, 'avatar.fetch.maxBytes'],
    [{ fetch: { timeout: 'soon' } }, 'avatar.fetch.timeout'],
    [{ fetch: { connectTimeout: -1 } }, 'avatar.fetch.connectTimeout'],
    [{ fetch: { maxRedirects: -1 } }, 'avatar.fetch.maxRedirects'],
    [{ fetch: { maxPixels: 0 } }, 'avatar.fetch.maxPixels'],
    [{ fetch: { allowPrivate: 'yes' } }, 'avatar.fetch.allowPrivate'],
    [{ fetch: { allowPrivate: ['not-an-ip'] } }, 'avatar.fetch.allowPrivate'],
    [{ fetch: { allowedHosts: 'example.com' } }, 'avatar.fetch.allowedHosts'],
    [{ fetch: { maxbytes: 10 } }, 'avatar.fetch.maxbytes'],
    [{ storage: 'memory://' }, 'avatar.storage'],
    [{ fetch: 'fast' }, 'avatar.fetch']
  ]
  for (const [opts, option] of cases) t.match(await registrationError(opts), { name: 'OptionsError', code: 'GATEHOUSE_OPTION', option }, JSON.stringify(opts))
  t.equal(await registrationError({ fetch: { timeout: '2s', connectTimeout: 500, allowPrivate: ['10.0.0.0/8'] } }), undefined, 'valid options load')
})

t.test('the auth core is required', async (t) => {
  const app = Fastify()
  // An OptionsError that says what to do, not Fastify's "dependency 'gatehouse-core' is not registered".
  await t.rejects(app.register(avatarPlugin, {}).ready(), { name: 'OptionsError', option: 'avatar', message: /register authPlugin first/ })
  await app.close()
})

t.test('registering the avatar plugin twice is an error', async (t) => {
  const app = await coreWithAvatar({})
  await t.rejects(app.register(avatarPlugin, {}).ready(), /already registered/)
  await app.close()
})

t.test('the plugin carries its name and Fastify version for fastify-plugin', async (t) => {
  const meta = (avatarPlugin as unknown as Record<symbol, { name: string; fastify: string; dependencies: string[] }>)[Symbol.for('plugin-meta')]!
  // No `dependencies`: the plugin's own check names the remedy (see 'the auth core is required').
  t.same([meta.name, meta.fastify, meta.dependencies], ['gatehouse-avatar', '5.x', undefined])
})

t.test('prefix and url shape the links and the route; the store closes with Fastify', async (t) => {
  let closed = 0
  const inner = new Map<string, Uint8Array>()
  const store: AvatarStore = {
    put: (id, b) => { inner.set(id, b); return String(b.length) },
    get: (id) => inner.get(id) ?? null,
    id: (id) => inner.has(id) ? String(inner.get(id)!.length) : null,
    remove: (id) => { inner.delete(id) },
    list: () => [...inner.keys()],
    close: () => { closed++ }
  }
  const app = await coreWithAvatar({ store, prefix: '/pics', url: 'https://cdn.example.com/', maxAge: '1m' })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  const link = await coreOf(app).avatar!.save('github_x', { bytes: await png(5, 5) })
  t.match(link, /^https:\/\/cdn\.example\.com\/pics\/[0-9a-f]{40}\.image$/)
  const r = await fetch(base + new URL(link!).pathname)
  t.equal(r.status, 200)
  t.equal(r.headers.get('cache-control'), 'public, max-age=60')
  t.equal((await fetch(`${base}/avatar/${new URL(link!).pathname.split('/').pop()}`)).status, 404, 'nothing under the default prefix')
  t.equal(closed, 0)
  await app.close()
  t.equal(closed, 1, 'closed once in onClose')
})

t.test('a store failing to close is logged, not thrown', async (t) => {
  const store: AvatarStore = {
    put: () => 'x', get: () => null, id: () => null, remove: () => {}, list: () => [],
    close: () => { throw new Error('close failed') }
  }
  const { app, lines } = await startApp({ store })
  await app.close()
  t.match(lines.join('\n'), /avatar: closing the store failed: close failed/)
})

t.test('a store address is opened by the plugin and closed with Fastify', async (t) => {
  const dir = t.testdir({})
  const { app } = await startApp({ store: `bolt://${join(dir, 'a.db')}` })
  await coreOf(app).avatar!.save('github_y', { bytes: await png(4, 4) })
  const store = (coreOf(app).avatar as AvatarProxy).store
  t.ok(await store.get(avatarIdOf('github_y')), 'readable while the app runs')
  await app.close()
  t.throws(() => store.get(avatarIdOf('github_y')), /closed database/, 'the lmdb file was closed in onClose')
})

t.test('save without a user id, or with oversized bytes, behaves', async (t) => {
  const { app } = await startApp({ fetch: { maxBytes: 100 } })
  t.teardown(() => app.close())
  t.equal(await coreOf(app).avatar!.save('', {}), undefined)
  const link = await coreOf(app).avatar!.save('github_z', { bytes: Buffer.alloc(1000) })
  t.match(link, /\.image$/, 'oversized bytes: identicon instead')
})

t.test('remove deletes a user\'s avatar; identicons are never enlarged past their size', async (t) => {
  const { app, base } = await startApp({ resizeLimit: 1000 })
  t.teardown(() => app.close())
  const proxy = coreOf(app).avatar as AvatarProxy
  const link = await proxy.save('github_gone', {})
  const served = await fetch(base + new URL(link!).pathname)
  t.equal((await sharp(Buffer.from(await served.arrayBuffer())).metadata()).width, 120)
  await proxy.remove('github_gone')
  t.equal((await fetch(base + new URL(link!).pathname)).status, 404)
  t.same(await proxy.store.list(), [])
})

t.test('avatar: false — no avatar proxy: no avatar routes, and a provider\'s picture link is dropped from the user', async (t) => {
  const { app, base } = await listen(async (a) => {
    await a.register(authPlugin, {
      secret: () => 'avatar-test-secret-0123456789-0123456789abcdef',
      url: 'http://127.0.0.1',
      avatar: false,
      providers: [{ kind: 'handler', provider: picProvider() }]
    })
  })
  t.teardown(() => app.close())
  const login = await fetch(`${base}/auth/pic/login?user=ann&picture=${encodeURIComponent('https://pics.example/ann.png')}`)
  t.equal(login.status, 200)
  const user = await login.json() as Record<string, unknown>
  t.equal(user.name, 'ann')
  t.notOk('picture' in user, 'no picture link to a third party')
  t.equal((await fetch(`${base}/avatar/${'0'.repeat(40)}.image`)).status, 404, 'no avatar routes')
})
