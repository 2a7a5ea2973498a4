/**
 * The `dev` provider and a custom provider on the embeddable local OAuth2 server, both full logins through the
 * real servers of providers/oauth2-server with the test browser: login page, PKCE, state, userinfo, email
 * function, picture link, refusal at the login page, and the dev server following the app's lifecycle.
 */
import t from 'tap'
import { userId } from '../../lib/user.js'
import { addCustomProvider, addDevProvider, type DevProvider } from '../../providers/oauth2/index.js'
import { startLocalOAuth2Server } from '../../servers/index.js'
import { APP_URL, bootApp, currentUser, startApp } from './app.js'

let dev: DevProvider | undefined
const testApp = await startApp((auth) => {
  dev = addDevProvider(auth, 0, { emailFn: (name) => `${name}@dev.test` })
})
t.teardown(testApp.close)

t.test('dev: the fake server starts with the app, on a free port when asked for port 0', async (t) => {
  const server = dev!.server
  t.ok(server, 'started when the app became ready')
  t.match(server!.url, /^http:\/\/127\.0\.0\.1:\d+$/)
  t.not(server!.url, 'http://127.0.0.1:8084')
})

t.test('dev: any user name signs in through the login page', async (t) => {
  const browser = testApp.browser()
  const page = await browser.navigate(`${APP_URL}/auth/dev/login?site=demo&from=/welcome`)
  t.equal(page.res.status, 200, 'login page of the dev server')
  t.ok(page.url.startsWith(dev!.server!.url))
  const authorize = new URL(page.url)
  t.equal(authorize.searchParams.get('code_challenge_method'), 'S256', 'PKCE towards the dev server')
  t.equal(authorize.searchParams.get('redirect_uri'), `${APP_URL}/auth/dev/callback`)

  const nav = await browser.submitForm(page.url, page.body, { user: 'dev_alice' })
  const callback = nav.hops.find((h) => h.url.startsWith(`${APP_URL}/auth/dev/callback`))!
  t.equal(callback.status, 302, 'signed in, redirected to from')
  t.equal(callback.location, `${APP_URL}/welcome`)
  const me = await currentUser(browser)
  t.equal(me.status, 200)
  t.same(me.body, { id: userId('dev', 'dev_alice'), name: 'dev_alice', email: 'dev_alice@dev.test' })
  t.ok(testApp.avatars.at(-1)?.startsWith(dev!.server!.url), 'the dev server\'s identicon link went to the avatar proxy')
  const claims = await testApp.app.auth.tokens.parse(browser.cookieFor(`${APP_URL}/`, 'JWT')!)
  t.same(claims.aud, ['demo'])
})

t.test('dev: refusing at the login page is access_denied, no session', async (t) => {
  const browser = testApp.browser()
  const page = await browser.navigate(`${APP_URL}/auth/dev/login`)
  const nav = await browser.submitForm(page.url, page.body, { deny: '1' })
  t.equal(nav.res.status, 403)
  t.same(JSON.parse(nav.body), { error: 'access denied', details: 'the user declined the login at the provider' })
  t.equal((await currentUser(browser)).status, 401)
})

t.test('dev: the server stops with the app', async (t) => {
  let p: DevProvider | undefined
  const app = await startApp((auth) => { p = addDevProvider(auth, 0) })
  const url = p!.server!.url
  t.ok(await fetch(`${url}/`), 'reachable while the app runs')
  await app.close()
  t.equal(p!.server, undefined)
  await t.rejects(fetch(`${url}/`), 'refused after the app closed')
})

t.test('dev: registering twice or after start is an error; a busy port fails the start', async (t) => {
  t.throws(() => addDevProvider(testApp.app.auth, 0), /provider "dev" is already registered/)
  const started = await startApp(() => {})
  t.teardown(started.close)
  t.throws(() => addDevProvider(started.app.auth, 0), /already listening|Cannot add/i)
  t.notOk(started.app.auth.providerNames().includes('dev'), 'nothing mounted')
  const busy = await bootApp()
  addDevProvider(busy.auth, Number(new URL(dev!.server!.url).port))
  await t.rejects(busy.ready(), /EADDRINUSE|address already in use/i)
  await busy.close().catch(() => {})
})

t.test('custom provider on the local OAuth2 server: auto-login and login page', async (t) => {
  const auto = await startLocalOAuth2Server({ url: 'http://127.0.0.1:0' })
  t.teardown(auto.close)
  const paged = await startLocalOAuth2Server({ url: 'http://127.0.0.1:0', withLoginPage: true })
  t.teardown(paged.close)
  const app = await startApp((auth) => {
    addCustomProvider(auth, 'custom', auto.providerOptions.client, auto.providerOptions)
    addCustomProvider(auth, 'custom-paged', paged.providerOptions.client, paged.providerOptions)
  })
  t.teardown(app.close)

  const b1 = app.browser()
  const nav = await b1.navigate(`${APP_URL}/auth/custom/login`)
  t.equal(nav.res.status, 200, nav.body)
  t.same(JSON.parse(nav.body), { id: userId('custom', 'dev_user'), name: 'dev_user' })
  t.equal((await currentUser(b1)).status, 200)

  const b2 = app.browser()
  const page = await b2.navigate(`${APP_URL}/auth/custom-paged/login`)
  t.equal(page.res.status, 200)
  const done = await b2.submitForm(page.url, page.body, { user: 'carol' })
  t.equal(done.res.status, 200, done.body)
  t.same(JSON.parse(done.body), { id: userId('custom-paged', 'carol'), name: 'carol' })
})
