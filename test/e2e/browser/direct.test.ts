/**
 * The demo page in headless Chromium, direct login: alice (editor) and admin through the form, the API
 * buttons' allowed and denied answers, logout, and a wrong password shown on the page.
 */
import t from 'tap'
import { chromiumMissing, isShown, launch, waitText, type TestBrowser } from './browser.js'
import { startDemo, type StartedDemo } from '../../helpers/demo.js'

const missing = chromiumMissing()
if (missing !== undefined) {
  t.comment(`browser tests skipped: ${missing}`)
  t.test('direct login in Chromium', { skip: missing }, async () => {})
} else {
  const started: StartedDemo = await startDemo({ AUTH_SECRET: 'browser-direct-secret-0123456789abcdef' })
  const browser: TestBrowser = await launch(import.meta.url)
  t.teardown(async () => { await browser.close(); await started.stop() })
  t.comment(`screenshots: ${browser.dir}`)
  const { page, shot } = browser
  const home = `${started.demo.url}/`

  async function signIn (user: string, passwd: string): Promise<void> {
    await page.fill('#direct-form input[name=user]', user)
    await page.fill('#direct-form input[name=passwd]', passwd)
    await page.check('#captcha-check')
    await page.click('#direct-form button[type=submit]')
  }

  async function callApi (path: string): Promise<string> {
    await page.click(`button[data-api="${path}"]`)
    return await waitText(page, '#api-result', new RegExp(`^${path.replace(/\//g, '\\/')} → \\d{3} (allowed|denied)`))
  }

  t.beforeEach(async () => {
    await browser.context.clearCookies()
    await page.goto(home)
    await waitText(page, '#status', /not signed in/)
  })

  /** What the page gets wrong while `fn` runs: console errors and answers of 400 or more. */
  async function failures (fn: () => Promise<void>): Promise<string[]> {
    const seen: string[] = []
    const onConsole = (m: { type(): string; text(): string }): void => { if (m.type() === 'error') seen.push(`console: ${m.text()}`) }
    const onResponse = (r: { status(): number; url(): string }): void => { if (r.status() >= 400) seen.push(`${r.status()} ${new URL(r.url()).pathname}`) }
    page.on('console', onConsole)
    page.on('response', onResponse)
    try {
      await fn()
    } finally {
      page.off('console', onConsole)
      page.off('response', onResponse)
    }
    return seen
  }

  t.test('the signed-out page asks nothing it knows will be refused: no 401, no console error (issue 37 item 16)', async (t) => {
    await browser.context.clearCookies()
    const requests: string[] = []
    const onRequest = (r: { url(): string }): void => { requests.push(new URL(r.url()).pathname) }
    page.on('request', onRequest)
    t.same(await failures(async () => {
      await page.goto(home, { waitUntil: 'networkidle' })
      await waitText(page, '#status', /^not signed in$/)
    }), [], 'a fresh visit')
    page.off('request', onRequest)
    t.notOk(requests.includes('/auth/user'), 'no /auth/user without a session cookie')
    t.ok(requests.includes('/auth/list'), 'the provider list is read')
    t.same(await failures(async () => {
      await signIn('alice', 'alice-secret')
      await waitText(page, '#status', /signed in as alice/)
      await page.reload({ waitUntil: 'networkidle' })
      await waitText(page, '#status', /signed in as alice/)
    }), [], 'signed in, and reloaded: the user, her passkeys, authenticator app and sessions are read')
    t.same(await failures(async () => {
      await page.click('#logout')
      await waitText(page, '#status', /^not signed in$/)
      await page.reload({ waitUntil: 'networkidle' })
      await waitText(page, '#status', /^not signed in$/)
    }), [], 'signed out again, and reloaded')
  })

  t.test('alice signs in; private and editor allowed, admin denied; logout signs out', async (t) => {
    await shot('alice-signed-out')
    t.match(await callApi('/api/private'), /→ 401 denied/, 'signed out: private denied')
    await signIn('alice', 'alice-secret')
    t.match(await waitText(page, '#status', /signed in as/), 'signed in as alice')
    t.match(await page.textContent('#user-extra'), /role: editor/)
    t.notOk(await isShown(page, '#sign-in'), 'the sign-in panel is hidden')
    await shot('alice-signed-in')
    t.match(await callApi('/api/private'), /→ 200 allowed[\s\S]*hello alice/)
    t.match(await callApi('/api/editor'), /→ 200 allowed[\s\S]*editor area/)
    t.match(await callApi('/api/admin'), /→ 403 denied/)
    await shot('alice-admin-denied')
    await page.click('#logout')
    await waitText(page, '#status', /^not signed in$/)
    t.ok(await isShown(page, '#sign-in'), 'the sign-in panel is back')
    t.match(await callApi('/api/private'), /→ 401 denied/, 'the session is gone')
    t.notOk((await browser.context.cookies()).some((c) => c.name === 'JWT'), 'no JWT cookie left')
    await shot('alice-logged-out')
  })

  t.test('admin signs in; admin allowed, editor denied', async (t) => {
    await signIn('admin', 'admin-secret')
    await waitText(page, '#status', /signed in as admin/)
    t.match(await page.textContent('#user-extra'), /admin/)
    t.match(await callApi('/api/admin'), /→ 200 allowed[\s\S]*welcome admin/)
    t.match(await callApi('/api/editor'), /→ 403 denied/)
    await shot('admin-signed-in')
    await page.click('#logout')
    await waitText(page, '#status', /^not signed in$/)
  })

  t.test('a wrong password shows the error on the page and signs nobody in', async (t) => {
    await signIn('alice', 'not-her-password')
    t.match(await waitText(page, '#message', /Sign-in failed/), /Sign-in failed: .+/)
    t.ok(await isShown(page, '#message'))
    t.equal(await page.textContent('#status'), 'not signed in')
    t.match(await callApi('/api/private'), /→ 401 denied/)
    await shot('wrong-password')
  })
}
