/**
 * Authenticator apps on the demo page in headless Chromium: alice adds one (the QR code as the page shows it is
 * screenshotted and read by zbarimg, the code typed in comes from oathtool), sees her recovery codes once, and her
 * next password sign-in asks for a code; then a recovery code instead. The server's clock is the real one moved
 * forward (Date only, still running) so that each code is of a new time step.
 */
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { chromiumMissing, isShown, launch, logOut, passwordSignIn as signInWithPassword, waitText, type TestBrowser } from './browser.js'
import { startDemo, type StartedDemo } from '../../helpers/demo.js'
import { oathtool, secretOf } from '../../helpers/totp-app.js'

const missing = chromiumMissing()
if (missing !== undefined) {
  t.comment(`browser tests skipped: ${missing}`)
  t.test('authenticator apps in Chromium', { skip: missing }, async () => {})
} else {
  const clock = FakeTimers.install({ now: Date.now(), toFake: ['Date'], shouldAdvanceTime: true })
  const started: StartedDemo = await startDemo({ AUTH_SECRET: 'browser-totp-secret-0123456789abcdef' })
  const browser: TestBrowser = await launch(import.meta.url)
  t.teardown(async () => { await browser.close(); await started.stop(); clock.uninstall() })
  t.comment(`screenshots: ${browser.dir}`)
  const { page, shot } = browser
  let secret = ''
  let recoveryCodes: string[] = []

  const passwordSignIn = async (user: string, passwd: string): Promise<void> => { await signInWithPassword(page, user, passwd) }
  const logout = async (): Promise<void> => { await logOut(page) }

  await page.goto(`${started.demo.url}/`)
  await waitText(page, '#status', /not signed in/)

  t.test('alice adds an authenticator app: QR code, a code, recovery codes shown once', async (t) => {
    await passwordSignIn('alice', 'alice-secret')
    await waitText(page, '#status', /signed in as alice/)
    t.ok(await isShown(page, '#totp'), 'the authenticator card is shown when signed in')
    t.match(await waitText(page, '#totp-state', /Off/), 'Off.')
    await page.click('#totp-add')
    await page.waitForSelector('#totp-qr svg')
    const qrFile = join(browser.dir, 'qr-as-shown.png')
    await page.locator('#totp-qr').screenshot({ path: qrFile })
    await shot('alice-scan-qr')
    const uri = execFileSync('zbarimg', ['--raw', '-q', qrFile], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    t.match(uri, /^otpauth:\/\/totp\/gatehouse%20demo:alice\?/, 'zbarimg reads the otpauth URI off the page')
    secret = secretOf(uri)
    t.equal(await page.textContent('#totp-secret'), secret, 'the key typed by hand is the same')

    await page.fill('#totp-confirm-code', oathtool(secret))
    await page.click('#totp-confirm-form button[type=submit]')
    await waitText(page, '#message', /Authenticator app added/)
    recoveryCodes = await page.locator('#totp-code-list li').allTextContents()
    t.equal(recoveryCodes.length, 10, 'ten recovery codes')
    t.match(await waitText(page, '#totp-state', /On/), /10 recovery codes left/)
    await shot('alice-recovery-codes')
    await logout()
  })

  t.test('the next password sign-in asks for a code from the app', async (t) => {
    clock.tick(30_000)
    const password = page.waitForResponse((r) => r.url().includes('/auth/local/login'))
    await passwordSignIn('alice', 'alice-secret')
    const first = await password
    t.equal(first.status(), 401, 'the password alone is not a session')
    t.match(await first.json(), { code: 'GATEHOUSE_SECOND_FACTOR', methods: ['totp'] })
    await page.waitForSelector('#totp-step', { state: 'visible' })
    t.equal(await page.textContent('#status'), 'not signed in')
    t.equal(await page.locator('#oauth-buttons button', { hasText: 'totp' }).count(), 0, 'no OAuth2-style button for the code step')
    await shot('alice-asked-for-a-code')

    await page.fill('#totp-login-code', '000000')
    await page.click('#totp-login-form button[type=submit]')
    t.match(await waitText(page, '#message', /Sign-in failed/), /incorrect code/, 'a wrong code is refused')
    await page.fill('#totp-login-code', oathtool(secret))
    await page.click('#totp-login-form button[type=submit]')
    t.match(await waitText(page, '#status', /signed in as/), 'signed in as alice')
    await shot('alice-signed-in-with-code')
    await logout()
  })

  t.test('"use a recovery code instead"', async (t) => {
    await passwordSignIn('alice', 'alice-secret')
    await page.waitForSelector('#totp-step', { state: 'visible' })
    await page.click('#totp-use-recovery')
    t.equal(await page.textContent('#totp-login-label'), 'Recovery code')
    await page.fill('#totp-login-code', recoveryCodes[0]!)
    await shot('alice-recovery-code')
    await page.click('#totp-login-form button[type=submit]')
    t.match(await waitText(page, '#status', /signed in as/), 'signed in as alice')
    t.match(await waitText(page, '#totp-state', /9 recovery/), /9 recovery codes left/)
    t.notOk(await isShown(page, '#totp-codes'), 'the recovery codes are not shown again')
    t.equal(await page.locator('#totp-code-list li').count(), 0)
    await shot('alice-signed-in-with-recovery-code')
    await logout()
  })
}
