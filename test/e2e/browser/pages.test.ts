/**
 * The package's pages in headless Chromium (issue 49, item 2): a first device sign-in of an app that set
 * `login.page: true` lands on the package's sign-in page (not a 404), a wrong password is shown there, the right one
 * goes back to the device page; an OAuth2 provider's link (the dev server, a real round trip on loopback) signs in
 * too, `from` kept; the session page lists the browser and the CLI's family and ends the family with its button.
 * Fields are found by their labels, as assistive technology finds them. Screenshots: .tap/screenshots/pages/, and
 * docs/screenshots/ with `npm run screenshots`.
 */
import t from 'tap'
import * as oidc from 'openid-client'
import { chromiumMissing, docsShot as shotFor, launch, waitText, type TestBrowser } from './browser.js'
import { clientsApp } from '../../helpers/clients-app.js'

const missing = chromiumMissing()

if (missing !== undefined) {
  t.comment(`browser tests skipped: ${missing}`)
  t.test('the package\'s pages in Chromium', { skip: missing }, async () => {})
} else {
  let devUrl = ''
  const s = await clientsApp({
    login: { page: true },
    revocation: { sessionList: { page: true } },
    providers: [
      { kind: 'dev', port: 0, onServer: (server) => { devUrl = server.url } },
      { kind: 'direct', name: 'local', checker: (user: string, passwd: string) => passwd === `${user}-password` }
    ]
  }, { listen: true })
  const browser: TestBrowser = await launch(import.meta.url)
  t.teardown(async () => { await browser.close(); await s.close() })
  const { page } = browser
  await page.setViewportSize({ width: 640, height: 720 })

  const docsShot = async (name: string): Promise<void> => { await shotFor(browser, name) }

  t.test('a first device sign-in: the package\'s sign-in page, an error shown, then back to the device page', async (t) => {
    const da = await oidc.initiateDeviceAuthorization(await s.discover('cli'), {})
    const first = await page.goto(da.verification_uri_complete!)
    t.equal(first?.status(), 200, 'no 404')
    t.equal(new URL(page.url()).pathname, '/auth/sign-in')
    t.equal(await page.getAttribute('html', 'lang'), 'en')
    t.equal(await page.textContent('h1'), 'Sign in')
    await docsShot('sign-in-page')
    await page.getByLabel('User name').fill('ann')
    await page.getByLabel('Password').fill('wrong')
    await Promise.all([page.waitForURL(/error=/), page.getByRole('button', { name: 'Sign in' }).click()])
    t.equal(await page.getByRole('alert').textContent(), 'Incorrect user name or password.')
    await docsShot('sign-in-page-error')
    await page.getByLabel('User name').fill('ann')
    await page.getByLabel('Password').fill('ann-password')
    await Promise.all([page.waitForURL((u) => u.pathname === '/auth/device'), page.getByRole('button', { name: 'Sign in' }).click()])
    t.equal(await page.inputValue('#user_code'), da.user_code, 'back on the device page, the code kept')
    t.match(await page.textContent('#who'), 'Signed in as ann.')
    await docsShot('device-page')
    await page.click('#approve')
    await waitText(page, '#message', /signed in/)
  })

  t.test('an OAuth2 provider\'s link: the dev server\'s round trip, from kept', async (t) => {
    await browser.context.clearCookies()
    await page.goto(`${s.base}/auth/sign-in?from=${encodeURIComponent('/auth/sessions/page')}`)
    await page.getByRole('link', { name: 'Continue with the dev server' }).click()
    await page.waitForSelector('input[name=user]')
    t.ok(page.url().startsWith(devUrl), 'on the dev server\'s login page')
    await page.fill('input[name=user]', 'dora')
    await Promise.all([page.waitForURL((u) => u.pathname === '/auth/sessions/page'), page.click('button[type=submit]:not([name])')])
    t.match(await page.textContent('main p'), 'Signed in as dora.')
  })

  t.test('a native app: the code reaches its scheme through the password form and through an OAuth2 provider\'s round trip', async (t) => {
    const config = await s.discover()
    for (const via of ['password', 'dev'] as const) {
      await browser.context.clearCookies()
      const tab = await browser.context.newPage()
      t.teardown(async () => { await tab.close() })
      const url = oidc.buildAuthorizationUrl(config, { redirect_uri: 'com.example.app:/callback', code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256', state: via })
      const captured = new Promise<string>((resolve) => tab.on('response', (r) => { const l = r.headers().location; if (l?.startsWith('com.example.app:') === true) resolve(l) }))
      await tab.goto(url.href)
      if (via === 'password') {
        await tab.getByLabel('User name').fill('cy')
        await tab.getByLabel('Password').fill('cy-password')
        await tab.getByRole('button', { name: 'Sign in' }).click().catch(() => {})
      } else {
        await tab.getByRole('link', { name: 'Continue with the dev server' }).click()
        await tab.waitForSelector('input[name=user]')
        await tab.fill('input[name=user]', 'cy')
        await tab.click('button[type=submit]:not([name])').catch(() => {})
      }
      // The redirect chain that answers a form ends at the app's private-use scheme: form-action lets it through.
      const stopped = new Promise<string>((resolve) => setTimeout(() => resolve(`no redirect to the app's scheme; the tab is at ${tab.url()}`), 15_000).unref())
      t.match(await Promise.race([captured, stopped]), new RegExp(`^com\\.example\\.app:/callback\\?code=[\\w-]{43}&state=${via}&`), `${via}: the code at the app's scheme`)
    }
  })

  t.test('the session page: the browser and the CLI\'s family; the family ended with its button', async (t) => {
    await browser.context.clearCookies()
    await page.goto(`${s.base}/auth/sessions/page`)
    await page.getByLabel('User name').fill('bob')
    await page.getByLabel('Password').fill('bob-password')
    await Promise.all([page.waitForURL((u) => u.pathname === '/auth/sessions/page'), page.getByRole('button', { name: 'Sign in' }).click()])
    // The CLI signs in as bob: a device grant approved on the device page.
    const config = await s.discover('cli')
    const da = await oidc.initiateDeviceAuthorization(config, {})
    await page.goto(da.verification_uri_complete!)
    await page.click('#approve')
    await waitText(page, '#message', /signed in/)
    // The CLI's first poll, answered at once (openid-client would wait its 5-second interval first).
    const poll = await fetch(`${s.base}/auth/token`, { method: 'POST', body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', client_id: 'cli', device_code: da.device_code }) })
    t.equal(poll.status, 200, 'the CLI has its pair')
    await page.goto(`${s.base}/auth/sessions/page`)
    t.match(await page.textContent('#current'), '(this browser)')
    const family = page.locator('tr', { hasText: 'Demo CLI' })
    t.equal(await family.count(), 1, 'the CLI listed by its name')
    await docsShot('sessions-page')
    await Promise.all([page.waitForURL(/done=ended/), family.getByRole('button', { name: 'End' }).click()])
    t.equal(await page.getByRole('status').textContent(), 'The session was ended.')
    t.equal(await page.locator('tr', { hasText: 'Demo CLI' }).count(), 0, 'gone from the list')
  })
}
