/**
 * A browser stays signed in on the sign-in pages (issue 49, item 1), in headless Chromium: the person signs in once
 * on the app's page, the session token expires (the server's clock is a fake one, moved past
 * `session.tokenDuration`; the cookies live on), and then approves a CLI on the device page and lets a phone app
 * sign in through `/authorize` without typing the password again. The session list still holds the one browser
 * session it held after the sign-in.
 */
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import * as oidc from 'openid-client'
import { chromiumMissing, launch, waitText, type TestBrowser } from './browser.js'
import { addSignInPage, clientsApp } from '../../helpers/clients-app.js'

const missing = chromiumMissing()
if (missing !== undefined) {
  t.comment(`browser tests skipped: ${missing}`)
  t.test('the sign-in pages refresh an expired session in Chromium', { skip: missing }, async () => {})
} else {
  const s = await clientsApp({ login: { page: '/sign-in' } }, { listen: true, setup: addSignInPage })
  const browser: TestBrowser = await launch(import.meta.url)
  t.teardown(async () => { await browser.close(); await s.close() })
  const { page } = browser
  // Installed once the server listens: only `Date` is fake, so sockets, timers and the browser run as ever.
  const clock = FakeTimers.install({ now: Date.now(), toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  let signIns = 0
  page.on('request', (r) => { if (new URL(r.url()).pathname === '/auth/local/login') signIns++ })

  async function deviceCode (): Promise<oidc.DeviceAuthorizationResponse> {
    return await oidc.initiateDeviceAuthorization(await s.discover('cli'), {})
  }

  /** The browser's sessions of the `local` provider, as its own session list shows them. */
  async function browserSessions (): Promise<Array<{ id: string; provider: string }>> {
    const jar = Object.fromEntries((await browser.context.cookies()).map((c) => [c.name, c.value]))
    const r = await s.app.inject({ url: '/auth/sessions', headers: { cookie: `JWT=${jar.JWT}; XSRF-TOKEN=${jar['XSRF-TOKEN']}`, 'x-xsrf-token': jar['XSRF-TOKEN'] } })
    return (r.json() as Array<{ id: string; provider: string }>).filter((x) => x.provider === 'local')
  }

  t.test('signed in once: after the token expired, a device and an app sign in without the password', async (t) => {
    const first = await deviceCode()
    await page.goto(first.verification_uri_complete!)
    t.equal(new URL(page.url()).pathname, '/sign-in', 'no session yet: the sign-in page')
    await page.fill('#user', 'ann')
    await page.fill('#passwd', 'x')
    await Promise.all([page.waitForURL((u) => u.pathname === '/auth/device'), page.click('#go')])
    await page.click('#approve')
    await waitText(page, '#message', /signed in/)
    t.equal(signIns, 1, 'one sign-in')
    const listed = await browserSessions()
    t.equal(listed.length, 1, 'one browser session listed')
    const tokenBefore = (await browser.context.cookies()).find((c) => c.name === 'JWT')!.value

    clock.tick(16 * 60_000)
    await t.rejects(s.app.auth.tokens.parse(tokenBefore), { code: 'GATEHOUSE_TOKEN_EXPIRED' }, 'the browser\'s token has expired')

    const second = await deviceCode()
    await page.goto(second.verification_uri_complete!)
    t.equal(new URL(page.url()).pathname, '/auth/device', 'the device page at once, no sign-in page')
    t.match(await page.textContent('#asking'), /Sign in Demo CLI/)
    await page.click('#approve')
    t.equal(await waitText(page, '#message', /signed in/), 'Demo CLI is signed in. You can return to it.')
    t.equal(s.events.filter((e) => e.type === 'device.approved').length, 2, 'both approvals audited')
    t.not((await browser.context.cookies()).find((c) => c.name === 'JWT')!.value, tokenBefore, 'Chromium holds the refreshed token')

    clock.tick(16 * 60_000)
    const config = await s.discover()
    const verifier = oidc.randomPKCECodeVerifier()
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: 'com.example.app:/callback', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state: 'st' })
    const app = await browser.context.newPage()
    t.teardown(async () => { await app.close() })
    const captured = new Promise<string>((resolve) => {
      app.on('response', (r) => { const l = r.headers().location; if (l?.startsWith('com.example.app:') === true) resolve(l) })
    })
    await app.goto(url.href).catch(() => {})
    const location = await captured
    const tokens = await oidc.authorizationCodeGrant(config, new URL(location), { pkceCodeVerifier: verifier, expectedState: 'st' })
    const me = await fetch(`${s.base}/private`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    t.same(await me.json(), { name: 'ann' }, 'the app signed in as the browser\'s user')

    t.equal(signIns, 1, 'still the one sign-in')
    t.same((await browserSessions()).map((x) => x.id), listed.map((x) => x.id), 'the same one browser session in the list: no duplicate')
  })
}
