/**
 * CLI and TV sign-in (RFC 8628) with a standard client on one side and a real browser on the other: openid-client
 * discovers the app (RFC 8414), starts a device authorization and polls the token endpoint at the interval the app
 * gave, while headless Chromium, as the person's other device, opens the verification page (the complete URI, or
 * the bare one with the code typed in), signs in on the app's page and approves or denies. An approval gives the
 * poll its pair and the access token calls the API as that person; a denial ends the poll with `access_denied`.
 */
import t from 'tap'
import * as oidc from 'openid-client'
import FakeTimers from '@sinonjs/fake-timers'
import { chromiumMissing, launch, waitText, type TestBrowser } from './browser.js'
import { addSignInPage, clientsApp, pollOnClock } from '../../helpers/clients-app.js'

const missing = chromiumMissing()
if (missing !== undefined) {
  t.comment(`browser tests skipped: ${missing}`)
  t.test('device sign-in in Chromium', { skip: missing }, async () => {})
} else {
  const s = await clientsApp({ loginPage: '/sign-in' }, { listen: true, setup: addSignInPage })
  const browser: TestBrowser = await launch(import.meta.url)
  t.teardown(async () => { await browser.close(); await s.close() })
  const { page } = browser

  // The app's clock (Date) runs with real time, and the device's waits between polls are on it (pollOnClock): the
  // CLI polls once at once (pending), and again when the test has seen the person decide in Chromium.
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now(), shouldAdvanceTime: true })
  t.teardown(() => clock.uninstall())

  /** The CLI's side: a device authorization of `cli`, and its polling started at once, as a CLI does. */
  async function startCli (): Promise<{ da: oidc.DeviceAuthorizationResponse; polled: Promise<oidc.TokenEndpointResponse | Error>; answers: string[]; decided: () => void }> {
    const config = await s.discover('cli')
    const da = await oidc.initiateDeviceAuthorization(config, {})
    let decided!: () => void
    const decision = new Promise<void>((resolve) => { decided = resolve })
    const { polled, answers } = pollOnClock(s, config, da, clock, async (n) => { if (n > 1) await decision })
    return { da, polled, answers, decided }
  }

  /** Signs in on the app's page when the verification page sent the browser there. */
  async function signInIfAsked (user: string): Promise<boolean> {
    if (new URL(page.url()).pathname !== '/sign-in') return false
    await page.fill('#user', user)
    await page.fill('#passwd', 'x')
    await Promise.all([page.waitForURL((u) => u.pathname === '/auth/device'), page.click('#go')])
    return true
  }

  t.test('the complete verification URI: sign in, approve, the poll gets the pair, a Bearer call answers as the user', async (t) => {
    await browser.context.clearCookies()
    const { da, polled, answers, decided } = await startCli()
    t.match(da.user_code, /^[B-DF-HJ-NP-TV-XZ]{4}-[B-DF-HJ-NP-TV-XZ]{4}$/, 'a no-confusion user code')
    t.equal(da.verification_uri, `${s.base}/auth/device`)
    await page.goto(da.verification_uri_complete!)
    t.ok(await signInIfAsked('ann'), 'no session: the app\'s sign-in page first')
    t.equal(await page.inputValue('#user_code'), da.user_code, 'back on the device page with the code filled in')
    await browser.shot('device-code-filled')
    await page.click('#approve')
    t.match(await waitText(page, '#message', /signed in/), 'Demo CLI is signed in. You can return to it.', 'the page names the client it signed in')
    decided()
    const tokens = await polled
    t.same(answers, ['authorization_pending', 'tokens'], 'the poll before the approval was pending, the next got the pair')
    if (tokens instanceof Error) throw tokens
    t.match(tokens, { token_type: 'bearer', refresh_token: String })
    const me = await fetch(`${s.base}/private`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    t.equal(me.status, 200)
    t.same(await me.json(), { name: 'ann' }, 'the access token is the person who approved')
    t.ok(s.events.some((e) => e.type === 'device.approved' && e.clientId === 'cli'), 'the approval is audited')
    t.ok(s.events.some((e) => e.type === 'token.issued' && e.reason === 'device_code'), 'and the pair it bought')
  })

  t.test('the bare verification URI: the person types the code the device shows', async (t) => {
    const { da, polled, answers, decided } = await startCli()
    await page.goto(da.verification_uri)
    t.notOk(await signInIfAsked('ann'), 'still signed in from before: the page at once')
    t.equal(await page.inputValue('#user_code'), '', 'no code filled in')
    // Typed as a person might: lower case, without the dash.
    await page.fill('#user_code', da.user_code.replace('-', '').toLowerCase())
    await page.click('#approve')
    await waitText(page, '#message', /signed in/)
    decided()
    const tokens = await polled
    t.same(answers, ['authorization_pending', 'tokens'])
    if (tokens instanceof Error) throw tokens
    const me = await fetch(`${s.base}/private`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    t.same(await me.json(), { name: 'ann' })
  })

  t.test('a denial in Chromium ends the poll with access_denied and issues nothing', async (t) => {
    await browser.context.clearCookies()
    const issued = s.events.filter((e) => e.type === 'token.issued').length
    const { da, polled, answers, decided } = await startCli()
    await page.goto(da.verification_uri_complete!)
    t.ok(await signInIfAsked('bob'))
    await page.click('#deny')
    t.equal(await waitText(page, '#message', /not signed in/), 'Demo CLI was not signed in.')
    decided()
    const outcome = await polled
    t.same(answers, ['authorization_pending', 'access_denied'])
    t.type(outcome, oidc.ResponseBodyError, 'the poll fails')
    t.equal((outcome as oidc.ResponseBodyError).error, 'access_denied')
    t.equal(s.events.filter((e) => e.type === 'token.issued').length, issued, 'no token issued')
  })
}
