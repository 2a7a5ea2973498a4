/**
 * Full logins through the `dev` provider (its fake OAuth2 server on loopback hands out a real picture link)
 * with the avatar proxy in front of each store kind: the picture is fetched, resized, stored and served.
 */
import t from 'tap'
import { join } from 'node:path'
import sharp from 'sharp'
import { FileStore, LmdbStore, MemoryStore, type AvatarStore } from '../../../stores/index.js'
import { avatarIdOf } from '../../../plugins/avatar/plugin.js'
import { userId } from '../../../lib/user.js'
import { devProvider } from '../../../providers/index.js'
import type { RunningOAuth2Server } from '../../../servers/index.js'
import { Browser } from '../../helpers/oauth2-browser.js'
import { startApp } from '../../helpers/avatar-app.js'

const APP_URL = 'http://app.test'
const dir = t.testdir({})
const kinds: Array<[string, () => AvatarStore]> = [
  ['memory', () => new MemoryStore()],
  ['file', () => new FileStore(join(dir, 'files'))],
  ['lmdb', () => new LmdbStore(join(dir, 'avatars.db'))]
]

for (const [kind, open] of kinds) {
  t.test(`dev login stores a resized PNG in the ${kind} store and serves it`, async (t) => {
    const store = open()
    let server: RunningOAuth2Server | undefined
    // The dev server listens on 127.0.0.1, so exactly that address is allowed for picture fetches.
    const { app, base } = await startApp({ store, resizeLimit: 16, fetch: { allowPrivate: ['127.0.0.1'] } }, (app) => {
      void app.register(devProvider, { port: 0, onServer: (s) => { server = s } })
    }, APP_URL)
    t.teardown(() => app.close())
    const browser = new Browser()
    browser.hosts.set('app.test', base)

    const signIn = async (): Promise<Record<string, unknown>> => {
      const page = await browser.navigate(`${APP_URL}/auth/dev/login`)
      t.ok(page.url.startsWith(server!.url), 'the dev server\'s login page')
      const nav = await browser.submitForm(page.url, page.body, { user: 'dev_alice' })
      t.equal(nav.res.status, 200, 'signed in')
      return JSON.parse(nav.body) as Record<string, unknown>
    }
    const user = await signIn()
    const id = userId('dev', 'dev_alice')
    t.equal(user.id, id)
    t.equal(user.picture, `${APP_URL}/avatar/${avatarIdOf(id)}.image`)

    const r = await browser.request(String(user.picture))
    t.equal(r.status, 200)
    t.equal(r.headers.get('content-type'), 'image/png')
    const meta = await sharp(Buffer.from(await r.arrayBuffer())).metadata()
    t.same([meta.format, meta.width, meta.height], ['png', 16, 16], 'the 32x32 dev picture stored at 16x16')
    t.same(await store.list(), [avatarIdOf(id)])

    await signIn()
    t.equal((await store.list()).length, 1, 'signing in again does not grow the store')
  })
}
