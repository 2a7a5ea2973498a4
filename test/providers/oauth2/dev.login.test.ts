/**
 * The `dev` provider and a custom provider on the embeddable local OAuth2 server, both full logins through the
 * real servers of servers/ with the test browser: login page, PKCE, state, userinfo, email function, picture
 * link, refusal at the login page, and the dev server following the app's lifecycle. The dev provider is used
 * through `fastify.auth.addDevProvider` and as the `devProvider` plugin; the custom provider as the
 * `oauth2Provider` plugin and through `fastify.auth.addCustomProvider`.
 */
import t from 'tap'
import { userId } from '../../../lib/user.js'
import { devProvider, oauth2Provider } from '../../../providers/index.js'
import { startLocalOAuth2Server, type RunningOAuth2Server } from '../../../servers/index.js'
import type { DevProviderHandle } from '../../../compat.js'
import { APP_URL, bootApp, bootError, currentUser, startApp } from '../../helpers/oauth2-app.js'

let dev: DevProviderHandle | undefined
const testApp = await startApp((app) => {
  dev = app.auth.addDevProvider(0, { emailFn: (name) => `${name}@dev.test` })
})
t.teardown(testApp.close)

t.test('dev: the fake server starts with the app, on a free port when asked for port 0', async (t) => {
  const server = dev!.server
  t.ok(server, 'started when the app became ready')
  t.match(server!.url, /^http:\/\/127\.0\.0\.1:\d+$/)
  t.not(server!.url, 'http://127.0.0.1:8084')
  t.same(testApp.app.auth.providers(), ['dev'])
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
  t.equal(callback.status, 303, 'signed in, redirected to from')
  t.equal(callback.location, `${APP_URL}/welcome`)
  const me = await currentUser(browser)
  t.equal(me.status, 200)
  t.same(me.body, { id: userId('dev', 'dev_alice'), name: 'dev_alice', email: 'dev_alice@dev.test' })
  t.ok(testApp.avatars.at(-1)?.startsWith(dev!.server!.url), 'the dev server\'s picture link went to the avatar proxy')
  const claims = await testApp.app.auth.tokens.parse(browser.cookieFor(`${APP_URL}/`, 'JWT')!)
  t.same(claims.aud, ['demo'])
})

t.test('dev: refusing at the login page is access_denied, no session', async (t) => {
  const browser = testApp.browser()
  const page = await browser.navigate(`${APP_URL}/auth/dev/login`)
  const nav = await browser.submitForm(page.url, page.body, { deny: '1' })
  t.equal(nav.res.status, 403)
  t.same(JSON.parse(nav.body), { error: 'access denied', details: 'the user declined the login at the provider', code: 'GATEHOUSE_FORBIDDEN' })
  t.equal((await currentUser(browser)).status, 401)
})

t.test('dev: the server stops with the app', async (t) => {
  let p: DevProviderHandle | undefined
  const app = await startApp((app) => { p = app.auth.addDevProvider(0) })
  const url = p!.server!.url
  t.ok(await fetch(`${url}/`), 'reachable while the app runs')
  await app.close()
  t.equal(p!.server, undefined)
  await t.rejects(fetch(`${url}/`), 'refused after the app closed')
})

t.test('dev: registering twice or after start is an error; a busy port fails the start', async (t) => {
  const twice = await bootError((app) => {
    app.auth.addDevProvider(0)
    app.auth.addDevProvider(0)
  })
  t.match(twice, { code: 'GATEHOUSE_OPTION', option: 'providers', message: /two providers named "dev"/ })

  const started = await startApp(() => {})
  t.teardown(started.close)
  t.throws(() => started.app.auth.addDevProvider(0), { code: 'GATEHOUSE_OPTION', option: 'providers', message: /after the server is ready/ })
  t.notOk(started.app.auth.providers().includes('dev'), 'nothing mounted')

  const busy = await bootApp()
  busy.auth.addDevProvider(Number(new URL(dev!.server!.url).port))
  await t.rejects(async () => { await busy.ready() }, { code: 'EADDRINUSE' })
  await busy.close().catch(() => {})
})

t.test('devProvider plugin: onServer, a full login, session-only cookies, bad options', async (t) => {
  let server: RunningOAuth2Server | undefined
  const app = await startApp(async (app) => {
    await app.register(devProvider, { port: 0, withLoginPage: false, autoLoginUser: 'dev_bob', onServer: (s) => { server = s } })
  })
  t.teardown(app.close)
  t.ok(server, 'onServer called once the app is ready')
  t.match(server!.url, /^http:\/\/127\.0\.0\.1:\d+$/)

  const browser = app.browser()
  const nav = await browser.navigate(`${APP_URL}/auth/dev/login?session=1`)
  t.equal(nav.res.status, 200, nav.body)
  t.same(JSON.parse(nav.body), { id: userId('dev', 'dev_bob'), name: 'dev_bob' }, 'signed in without a page')
  for (const name of ['JWT', 'XSRF-TOKEN']) {
    const line = nav.res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`))
    t.ok(line, `${name} set`)
    t.notMatch(line, /Max-Age|Expires/i, `${name}: a session-only cookie`)
  }
  t.equal((await currentUser(browser)).status, 200)

  for (const [opts, option] of [
    [{ port: 70000 }, 'dev.port'],
    [{ port: -1 }, 'dev.port'],
    [{ port: 0, colour: 'red' }, 'dev.colour'],
    [{ port: 0, withLoginPage: 'yes' }, 'startDevServer.withLoginPage']
  ] as const) {
    t.match(await bootError(async (app) => { await app.register(devProvider, opts as never) }), { code: 'GATEHOUSE_OPTION', option }, option)
  }
})

t.test('custom provider on the local OAuth2 server: auto-login (plugin) and login page (addCustomProvider)', async (t) => {
  const auto = await startLocalOAuth2Server({ url: 'http://127.0.0.1:0' })
  t.teardown(auto.close)
  const paged = await startLocalOAuth2Server({ url: 'http://127.0.0.1:0', withLoginPage: true })
  t.teardown(paged.close)
  const app = await startApp(async (app) => {
    await app.register(oauth2Provider, { name: 'custom', ...auto.providerOptions })
    const { cid, csecret, ...opts } = paged.providerOptions
    app.auth.addCustomProvider('custom-paged', { cid, csecret }, opts)
  })
  t.teardown(app.close)
  t.same(app.app.auth.providers(), ['custom', 'custom-paged'])

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
