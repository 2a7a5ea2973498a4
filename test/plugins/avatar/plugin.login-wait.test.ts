/**
 * A slow picture host does not slow logins down: the login waits at most `avatar.fetch.loginWait` for the
 * picture, goes on with the identicon, and the picture replaces it when it arrives (same link). One fetch per
 * user at a time; closing the app stops the fetches still running.
 */
import t from 'tap'
import { EventEmitter, once } from 'node:events'
import sharp from 'sharp'
import { authPlugin } from '../../../auth.js'
import { avatarIdOf, identiconPng } from '../../../plugins/avatar/plugin.js'
import { funcLogger } from '../../../lib/logging/logger.js'
import { MemoryStore } from '../../../stores/index.js'
import { listen } from '../../helpers/client.js'
import { picProvider, getAvatar, login, PUBLIC_URL } from '../../helpers/avatar-app.js'
import { startPictureServer } from '../../helpers/pictures.js'

const pictures = await startPictureServer()
t.teardown(() => pictures.close())
const LOGIN_WAIT_MS = 300

/** An app whose log lines are also emitted as `line` events (to await a background store). */
async function start (loginWait: number | string, timeout: number | string = '10s') {
  const log = new EventEmitter()
  const lines: string[] = []
  const store = new MemoryStore()
  const { app, base } = await listen(async (app) => {
    await app.register(authPlugin, {
      secret: () => 'avatar-wait-secret-0123456789-0123456789',
      url: PUBLIC_URL,
      logger: funcLogger((l) => { lines.push(l); log.emit('line', l) }),
      providers: [{ kind: 'handler', provider: picProvider() }],
      avatar: { store, fetch: { allowPrivate: ['127.0.0.1'], loginWait, timeout } }
    })
  })
  /** Resolves when a log line matching `re` is written (now or already). */
  const logged = async (re: RegExp): Promise<void> => {
    while (!lines.some((l) => re.test(l))) await once(log, 'line')
  }
  return { app, base, lines, logged, store }
}

// The picture host holds /held.jpg until the test releases it, and the fetch deadline is an hour away: a login
// that waited for the picture instead of `loginWait` would never answer (the test fails on its time limit), with no
// clock read and no sleep (a loaded machine only makes everything slower, never wrong).
const FAR = '1h'

t.test('a picture slower than loginWait: the login goes on with the identicon, the picture replaces it later', async (t) => {
  const { app, base, logged } = await start(LOGIN_WAIT_MS, FAR)
  t.teardown(() => app.close())
  const asked = pictures.arrival('/held.jpg')
  const { res, body } = await login(base, 'slowpoke', `${pictures.base}/held.jpg`)
  await asked
  t.equal(res.status, 200)
  t.equal(pictures.waiting(), 1, `the login answered after its ${LOGIN_WAIT_MS} ms while the picture host still held the picture`)
  t.equal(body.picture, `${PUBLIC_URL}/avatar/${avatarIdOf(body.id)}.image`, 'the avatar link, as always')
  const first = await getAvatar(base, body.picture!)
  t.same(Buffer.from(await first.arrayBuffer()), await identiconPng(body.id), 'the identicon meanwhile')

  const stored = logged(/picture of user .* stored after the login/)
  pictures.release()
  await stored
  const later = await getAvatar(base, body.picture!, { 'if-none-match': first.headers.get('etag')! })
  t.equal(later.status, 200, 'the ETag changed: browsers revalidating get the picture')
  const served = Buffer.from(await later.arrayBuffer())
  t.not(served.equals(await identiconPng(body.id)), true, 'no longer the identicon')
  t.same((await sharp(served).metadata()).width, 400, 'the 400x300 photo')
})

t.test('a picture within loginWait is there at the login', async (t) => {
  const { app, base } = await start(FAR, FAR)
  t.teardown(() => app.close())
  const asked = pictures.arrival('/held.jpg')
  const logging = login(base, 'quick', `${pictures.base}/held.jpg`)
  await asked
  pictures.release()
  const { body } = await logging
  const served = Buffer.from(await (await getAvatar(base, body.picture!)).arrayBuffer())
  t.equal((await sharp(served).metadata()).width, 400, 'the photo, not the identicon')
})

t.test('loginWait 0: never waits; a later login of the same user while the fetch runs fetches nothing more', async (t) => {
  const { app, base, logged } = await start(0, FAR)
  t.teardown(() => app.close())
  const requestsBefore = pictures.requests.filter((p) => p === '/held.jpg').length
  const asked = pictures.arrival('/held.jpg')
  const one = await login(base, 'twice', `${pictures.base}/held.jpg`)
  await asked
  const two = await login(base, 'twice', `${pictures.base}/held.jpg`)
  t.equal(one.res.status, 200)
  t.equal(two.res.status, 200)
  t.equal(two.body.picture, one.body.picture)
  const stored = logged(/picture of user .* stored after the login/)
  pictures.release()
  await stored
  t.equal(pictures.requests.filter((p) => p === '/held.jpg').length - requestsBefore, 1, 'one fetch for both logins')
  const served = Buffer.from(await (await getAvatar(base, one.body.picture!)).arrayBuffer())
  t.equal((await sharp(served).metadata()).width, 400, 'the photo in the end')
})

t.test('a second login while the first still waits for the picture gets a link that resolves at once', async (t) => {
  // The first login waits (up to an hour) for the held picture; the second (same user) must not wait on it, and
  // the link it hands out must serve something from that moment: the identicon, until the picture is stored.
  const { app, base } = await start(FAR, FAR)
  t.teardown(() => app.close())
  const asked = pictures.arrival('/held.jpg')
  const first = login(base, 'twice-fast', `${pictures.base}/held.jpg`)
  // The first login's fetch has reached the picture host: it is running.
  await asked
  const second = await login(base, 'twice-fast', `${pictures.base}/held.jpg`)
  t.equal(second.res.status, 200)
  const early = await getAvatar(base, second.body.picture!)
  t.equal(early.status, 200, 'the link handed out resolves at once')
  t.same(Buffer.from(await early.arrayBuffer()), await identiconPng(second.body.id), 'the identicon until the picture is stored')
  pictures.release()
  const one = await first
  t.equal(one.body.picture, second.body.picture, 'one link')
  const served = Buffer.from(await (await getAvatar(base, one.body.picture!)).arrayBuffer())
  t.equal((await sharp(served).metadata()).width, 400, 'the photo once it is stored')
})

t.test('closing the app stops a background fetch at once: its connection is closed', async (t) => {
  const { app, base, store } = await start(LOGIN_WAIT_MS, FAR)
  const { body } = await login(base, 'leaving', `${pictures.base}/hang`)
  const id = avatarIdOf(body.id)
  const identicon = await store.get(id)
  t.ok(identicon, 'the identicon is stored')
  await app.close()
  // The fetch's own deadline is an hour away: only the close can have ended its connection.
  await t.resolves(pictures.idle(), 'the picture connection closed with the app')
})

t.test('loginWait is checked at registration', async (t) => {
  const err = await start('soon').then(() => undefined, (e: unknown) => e)
  t.match(err, { name: 'OptionsError', code: 'GATEHOUSE_OPTION', option: 'avatar.fetch.loginWait' })
})
