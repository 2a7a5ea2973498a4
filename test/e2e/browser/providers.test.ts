/**
 * The demo page in headless Chromium, provider logins: `dev` through the fake server's login page (with the
 * avatar actually rendered), `custom` through the local OAuth2 server, `email` with the token taken from the
 * sender's output (pasted, and as the message's link), and a cancelled provider login.
 */
import t from 'tap'
import { chromiumMissing, isShown, launch, waitImage, waitText, type TestBrowser } from './browser.js'
import { startDemo, type StartedDemo } from '../../helpers/demo.js'

const missing = chromiumMissing()
if (missing !== undefined) {
  t.comment(`browser tests skipped: ${missing}`)
  t.test('provider logins in Chromium', { skip: missing }, async () => {})
} else {
  const started: StartedDemo = await startDemo({ AUTH_SECRET: 'browser-providers-secret-0123456789abcdef' })
  const browser: TestBrowser = await launch(import.meta.url)
  t.teardown(async () => { await browser.close(); await started.stop() })
  t.comment(`screenshots: ${browser.dir}`)
  const { page, shot } = browser
  const { demo, io } = started
  const home = `${demo.url}/`

  async function logout (): Promise<void> {
    await page.click('#logout')
    await waitText(page, '#status', /^not signed in$/)
  }

  /** Clicks the provider's button and waits for its server's login page. */
  async function openProviderPage (provider: string, serverUrl: string): Promise<void> {
    await page.click(`#oauth-buttons a[data-provider="${provider}"]`)
    await page.waitForURL((u) => u.href.startsWith(serverUrl))
    await page.waitForSelector('input[name=user]')
  }

  t.beforeEach(async () => {
    await browser.context.clearCookies()
    await page.goto(home)
    await waitText(page, '#status', /not signed in/)
  })

  t.test('dev: sign in on the fake server page; the avatar renders', async (t) => {
    await shot('dev-start')
    await openProviderPage('dev', demo.devUrl)
    await page.fill('input[name=user]', 'dora')
    await shot('dev-login-page')
    await page.click('button[type=submit]:not([name])')
    await page.waitForURL(home)
    t.match(await waitText(page, '#status', /signed in as/), 'signed in as dora')
    t.match(await page.textContent('#user-id'), /^dev_[0-9a-f]{40}$/)
    t.match(await page.textContent('#user-extra'), /dora@dev\.example/)
    const img = await waitImage(page, '#avatar')
    t.ok(img.width > 0, `avatar decoded, ${img.width} px wide`)
    t.match(img.src, new RegExp(`^${demo.url}/avatar/[0-9a-f]+\\.image$`), 'served by the demo avatar proxy')
    await page.click('button[data-api="/api/private"]')
    t.match(await waitText(page, '#api-result', /→/), /→ 200 allowed[\s\S]*hello dora/)
    await shot('dev-signed-in')
    await logout()
  })

  t.test('custom: sign in through the local OAuth2 server', async (t) => {
    await openProviderPage('custom', demo.customUrl)
    await page.fill('input[name=user]', 'carol')
    await shot('custom-login-page')
    await page.click('button[type=submit]:not([name])')
    await page.waitForURL(home)
    t.match(await waitText(page, '#status', /signed in as/), 'signed in as carol')
    t.match(await page.textContent('#user-id'), /^custom_[0-9a-f]{40}$/)
    const img = await waitImage(page, '#avatar')
    t.ok(img.width > 0, 'avatar decoded')
    await shot('custom-signed-in')
    await logout()
  })

  t.test('email: the token from the sender output signs in, pasted or as the link', async (t) => {
    await page.fill('#email-form input[name=user]', 'erin')
    await page.fill('#email-form input[name=address]', 'erin@example.com')
    await page.click('#email-form button[type=submit]')
    await waitText(page, '#message', /Confirmation sent/)
    await shot('email-sent')
    const sent = await io.waitFor(/^email to erin@example\.com: .*?(http:\S+token=([\w-]+\.[\w-]+\.[\w-]+))/)
    await page.fill('#email-form input[name=token]', sent[2]!)
    await page.click('#email-confirm')
    t.match(await waitText(page, '#status', /signed in as/), 'signed in as erin')
    t.match(await page.textContent('#user-id'), /^email_[0-9a-f]{40}$/)
    await shot('email-signed-in')
    await logout()

    // The same flow as a person reading the mail: request a new message, open its link.
    await page.fill('#email-form input[name=user]', 'erin')
    await page.fill('#email-form input[name=address]', 'erin2@example.com')
    await page.click('#email-form button[type=submit]')
    await waitText(page, '#message', /Confirmation sent/)
    const second = await io.waitFor(/^email to erin2@example\.com: .*?(http:\S+token=[\w.-]+)/)
    await page.goto(second[1]!)
    await page.waitForURL(home)
    t.match(await waitText(page, '#status', /signed in as/), 'signed in as erin', 'the link signs in and returns to the page')
    await shot('email-link-signed-in')
    await logout()
  })

  t.test('a cancelled provider login returns to the page signed out, with a message', async (t) => {
    await openProviderPage('dev', demo.devUrl)
    await page.click('button[name=deny]')
    await page.waitForURL(home)
    t.match(await waitText(page, '#message', /did not complete/), /Sign-in did not complete: access denied/)
    t.ok(await isShown(page, '#message'))
    t.equal(await page.textContent('#status'), 'not signed in')
    t.equal(new URL(page.url()).search, '', 'the error is shown once, not kept in the address')
    await shot('dev-cancelled')
  })
}
