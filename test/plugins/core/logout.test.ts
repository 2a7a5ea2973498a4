/**
 * Logout over HTTP: `GET …/logout` (what an `<img>`, a link or a typed address sends) ends only the presenting
 * session, as the seed did; ending every session is a POST with the XSRF header of a cookie session; every logout
 * answers `Clear-Site-Data: "cookies"` (ASVS 5.0 14.3.1): the core's, a provider's, one with a custom logout.
 */
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { accountApp, call, signedIn, signIn, xsrf } from '../../helpers/account-app.js'
import { injectApp } from '../../helpers/app.js'
import { authPlugin } from '../../../index.js'

/** What a same-origin `<img src="/auth/logout?all=1">` sends: the cookies, no XSRF header. */
const IMAGE = { 'sec-fetch-dest': 'image', 'sec-fetch-mode': 'no-cors', 'sec-fetch-site': 'same-origin' }

t.test('GET logout?all=1 (an <img>) ends nothing; POST without the XSRF header ends nothing; with it, every session', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const app = await accountApp(t)
  const [phone, laptop] = [app.client(), app.client()]
  await signIn(phone, 'alice')
  await signIn(laptop, 'alice')
  clock.tick(1)
  for (const path of ['/auth/logout?all=1', '/auth/logout?all=true', '/auth/local/logout?all=1', '/auth/totp/logout?all=1']) {
    const img = await laptop.fetch(path, { headers: IMAGE })
    t.equal(img.status, 405, path)
    t.equal(img.headers.get('allow'), 'POST')
    t.match(await img.json(), { code: 'GATEHOUSE_BAD_REQUEST', details: /is a POST/ })
    t.equal(img.headers.get('clear-site-data'), null, 'nothing cleared either')
  }
  const noHeader = await laptop.fetch('/auth/logout?all=1', { method: 'POST' })
  t.equal(noHeader.status, 401)
  t.match(await noHeader.json(), { code: 'GATEHOUSE_XSRF' })
  t.ok(await signedIn(phone), 'nothing ended')
  t.ok(await signedIn(laptop))
  const all = await laptop.fetch('/auth/logout?all=1', { method: 'POST', headers: xsrf(laptop) })
  t.equal(all.status, 200)
  t.equal(all.headers.get('clear-site-data'), '"cookies"')
  t.notOk(await signedIn(phone), 'every session ended')
})

t.test('a GET logout (a typed /auth/totp/logout, an <img>) ends the presenting session only', async (t) => {
  const app = await accountApp(t)
  for (const path of ['/auth/logout', '/auth/totp/logout', '/auth/local/logout']) {
    const [phone, laptop] = [app.client(), app.client()]
    await signIn(phone, 'alice')
    await signIn(laptop, 'alice')
    const copy = app.copyOf(laptop)
    const res = await laptop.fetch(path, { headers: IMAGE })
    t.equal(res.status, 200, path)
    t.equal(res.headers.get('clear-site-data'), '"cookies"', `${path}: Clear-Site-Data`)
    t.equal(laptop.jar.get('JWT'), undefined, `${path}: the cookies are cleared`)
    t.notOk(await signedIn(copy), `${path}: the session is ended`)
    t.ok(await signedIn(phone), `${path}: the other session is not`)
  }
})

t.test('every logout answers Clear-Site-Data: a POST, one without a session, one from the session list, a custom one', async (t) => {
  const app = await accountApp(t)
  const c = app.client()
  await signIn(c, 'alice')
  const post = await call(c, 'POST', '/auth/logout')
  t.equal(post.status, 200)
  t.equal(post.headers.get('clear-site-data'), '"cookies"')
  const anon = await app.client().fetch('/auth/logout')
  t.equal(anon.status, 200)
  t.equal(anon.headers.get('clear-site-data'), '"cookies"', 'without a session the cookies still go')

  const custom = await injectApp(async (a) => {
    await a.register(authPlugin, {
      secret: () => 'custom-logout-secret-0123456789abcdef',
      url: 'http://127.0.0.1',
      providers: [{ kind: 'handler', provider: { name: 'sso', login: () => ({}), logout: () => ({ status: 'signed out of sso' }) } }]
    })
  })
  t.teardown(() => custom.app.close())
  const res = await custom.fetch('/auth/sso/logout')
  t.equal(res.status, 200)
  t.same(await res.json(), { status: 'signed out of sso' })
  t.equal(res.headers.get('clear-site-data'), '"cookies"', 'a provider\'s own logout too')
})
