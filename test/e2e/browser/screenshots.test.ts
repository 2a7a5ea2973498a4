/**
 * The demo as a product page, in headless Chromium: what the library is and how to install it, the code beside
 * each sign-in method, aligned forms, the favicon, the dev OAuth2 server's login page in the same style, the
 * "Sign in a device" card and the device code entry page, and the README's screenshots (signed out, the dev login
 * page, signed in, the card, the device page). Screenshots go to .tap/screenshots/screenshots/; `npm run
 * screenshots` also writes the README's copies to docs/screenshots/.
 */
import t from 'tap'
import { copyFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { chromiumMissing, launch, passwordSignIn, waitImage, waitText, type TestBrowser } from './browser.js'
import { startDemo, type StartedDemo } from '../../helpers/demo.js'

const missing = chromiumMissing()
const toDocs = process.env.GATEHOUSE_SCREENSHOTS === 'docs'
const docsDir = join(process.cwd(), 'docs', 'screenshots')

if (missing !== undefined) {
  t.comment(`browser tests skipped: ${missing}`)
  t.test('the demo page in Chromium', { skip: missing }, async () => {})
} else {
  const started: StartedDemo = await startDemo({ AUTH_SECRET: 'browser-screenshots-secret-0123456789abcdef' })
  const browser: TestBrowser = await launch(import.meta.url)
  t.teardown(async () => { await browser.close(); await started.stop() })
  t.comment(`screenshots: ${browser.dir}${toDocs ? ` and ${docsDir}` : ''}`)
  const { page } = browser
  const home = `${started.demo.url}/`
  await page.setViewportSize({ width: 1120, height: 900 })

  /** A screenshot for the README: always under .tap, and in docs/ when asked to. */
  async function readmeShot (name: string): Promise<void> {
    const file = await browser.shot(name)
    if (toDocs) {
      mkdirSync(docsDir, { recursive: true })
      copyFileSync(file, join(docsDir, `${name}.png`))
    }
  }

  /** A screenshot of one element of `on` (the page by default), for the docs, like `readmeShot`. */
  async function elementShot (name: string, selector: string, on: Page = page): Promise<void> {
    const file = join(browser.dir, `${name}.png`)
    await on.locator(selector).screenshot({ path: file })
    if (toDocs) {
      mkdirSync(docsDir, { recursive: true })
      copyFileSync(file, join(docsDir, `${name}.png`))
    }
  }

  /** Left edge and width of each element, to compare alignment. */
  async function boxes (selectors: string[]): Promise<Array<{ x: number; width: number }>> {
    const out: Array<{ x: number; width: number }> = []
    for (const s of selectors) {
      const b = await page.locator(s).boundingBox()
      if (b === null) throw new Error(`${s} is not shown`)
      out.push({ x: Math.round(b.x), width: Math.round(b.width) })
    }
    return out
  }

  t.test('signed out: what it is, how to install it, the code beside each method, aligned forms', async (t) => {
    await browser.context.clearCookies()
    await page.goto(home)
    await waitText(page, '#status', /^not signed in$/)
    t.match(await page.textContent('.pitch'), /Sign-in for Fastify 5/)
    t.equal(await page.textContent('.install code'), 'npm i fastify-gatehouse')
    for (const [method, code] of [
      ['#method-password', /app\.register\(directProvider, \{[\s\S]*checker/],
      ['#method-oauth2', /app\.register\(oauth2Provider, \{[\s\S]*name: 'github', cid, csecret/],
      ['#method-email', /app\.register\(emailProvider, \{[\s\S]*sender: new SmtpSender/]
    ] as const) {
      t.ok(await page.isVisible(method), `${method} shown`)
      t.match(await page.textContent(`${method} pre.code`), code, `${method} shows the code that enables it`)
    }
    t.notOk(await page.isVisible('#telegram'), 'Telegram is off without TELEGRAM_TOKEN')
    const provider = await page.$$eval('#oauth-buttons a', (as) => as.map((a) => (a as unknown as { dataset: { provider: string } }).dataset.provider))
    t.same(provider, ['dev', 'custom'])

    const password = await boxes(['#direct-user', '#direct-passwd'])
    t.equal(password[0]!.x, password[1]!.x, 'password form inputs share a left edge')
    t.equal(password[0]!.width, password[1]!.width, 'and a width')
    const email = await boxes(['#email-user', '#email-address', '#email-token'])
    t.ok(email.every((b) => b.x === email[0]!.x && b.width === email[0]!.width), 'e-mail form inputs aligned')
    t.equal(email[0]!.x, password[0]!.x, 'both forms on one grid')
    t.ok(password[0]!.width >= 200, `inputs are wide enough (${password[0]!.width}px)`)

    const icon = await page.evaluate(async () => {
      const res = await fetch('/favicon.svg')
      return { status: res.status, type: res.headers.get('content-type'), body: await res.text() }
    })
    t.match(icon, { status: 200, type: 'image/svg+xml', body: /^<svg / }, 'favicon served')
    t.equal(await page.getAttribute('link[rel=icon]', 'href'), '/favicon.svg')
    await readmeShot('signed-out')
  })

  t.test('the dev OAuth2 server\'s login page is styled like the demo', async (t) => {
    await page.goto(home)
    await waitText(page, '#status', /not signed in/)
    await page.click('#oauth-buttons a[data-provider="dev"]')
    await page.waitForSelector('input[name=user]')
    t.match(await page.textContent('h1'), /Sign in/)
    t.match(await page.textContent('.bar'), /local OAuth2 server/)
    const style = await page.$eval('button[type=submit]:not([name])', (el) => {
      const cs = (globalThis as unknown as { getComputedStyle (e: unknown): { backgroundColor: string; borderRadius: string } }).getComputedStyle(el)
      return { background: cs.backgroundColor, radius: cs.borderRadius }
    })
    t.same(style, { background: 'rgb(47, 91, 211)', radius: '7px' }, 'the demo\'s button colour and shape')
    await page.fill('input[name=user]', 'dora')
    await page.setViewportSize({ width: 1120, height: 480 })
    await readmeShot('dev-login')
    await page.setViewportSize({ width: 1120, height: 900 })
    await page.click('button[type=submit]:not([name])')
    await page.waitForURL(home)
    t.match(await waitText(page, '#status', /signed in as/), 'signed in as dora')
  })

  t.test('signed in: the user, the avatar and a guarded route\'s answer', async (t) => {
    t.ok((await waitImage(page, '#avatar')).width > 0, 'avatar shown')
    t.match(await page.textContent('#user-extra'), /dora@dev\.example/)
    await page.click('button[data-api="/api/private"]')
    t.match(await waitText(page, '#api-result', /→/), /→ 200 allowed[\s\S]*hello dora/)
    t.notOk(await page.isVisible('#sign-in'), 'the sign-in methods are hidden')
    t.ok(await page.isVisible('#device-sign-in'), 'the "Sign in a device" card is shown')
    await readmeShot('signed-in')
    await page.click('#logout')
    await waitText(page, '#status', /^not signed in$/)
  })

  t.test('the password form without its captcha box ticked: the page says so and nobody is signed in', async (t) => {
    await browser.context.clearCookies()
    await page.goto(home)
    await waitText(page, '#status', /^not signed in$/)
    await page.fill('#direct-form input[name=user]', 'alice')
    await page.fill('#direct-form input[name=passwd]', 'alice-secret')
    const answered = page.waitForResponse((r) => r.url().includes('/auth/local/login'))
    await page.click('#direct-form button[type=submit]')
    t.equal((await answered).status(), 400)
    t.match(await waitText(page, '#message', /captcha/), 'Sign-in failed: a solved captcha is required (field cf-turnstile-response)')
    t.equal(await page.textContent('#status'), 'not signed in')
  })

  t.test('"Sign in a device": the demo CLI\'s code, approved on the device page in another tab', async (t) => {
    await browser.context.clearCookies()
    await page.goto(home)
    await waitText(page, '#status', /^not signed in$/)
    t.notOk(await page.isVisible('#device-sign-in'), 'no card signed out')
    await passwordSignIn(page, 'alice', 'alice-secret')
    await waitText(page, '#status', /signed in as alice/)
    t.ok(await page.isVisible('#device-sign-in'), 'the card, signed in')
    await page.reload()
    await waitText(page, '#status', /signed in as alice/)
    t.ok(await page.isVisible('#device-sign-in'), 'and on a page opened signed in')
    t.equal(await page.getAttribute('#device-enter', 'href'), '/auth/device', 'it links the device code entry page')
    t.equal(await page.textContent('#device-curl'), `curl -d client_id=demo-cli ${started.demo.url}/auth/device/code`)
    await page.click('#device-try')
    const code = await waitText(page, '#device-code', /^[A-Z]{4}-[A-Z]{4}$/)
    await elementShot('device-card', '#device-sign-in')
    const [tab] = await Promise.all([browser.context.waitForEvent('page'), page.click('#device-complete')])
    await tab.waitForSelector('#approve')
    t.equal(new URL(tab.url()).pathname, '/auth/device')
    t.equal(await tab.inputValue('#user_code'), code, 'the device page with the code filled in')
    await tab.setViewportSize({ width: 560, height: 300 })
    await elementShot('device-code-entry', 'html', tab)
    await tab.click('#approve')
    t.equal(await waitText(tab, '#message', /signed in/), 'Demo CLI is signed in. You can return to it.')
    await tab.close()
    t.match(await waitText(page, '#device-state', /^Signed in/), /the demo CLI got an access token \(\d+ s\) and a refresh token/, 'the page, polling as the CLI, got its pair')
  })

  t.test('signed out, the device page sends the browser to the demo page, which comes back after the sign-in; never elsewhere', async (t) => {
    await browser.context.clearCookies()
    await page.goto(`${started.demo.url}/auth/device?user_code=BCDF-GHJK`)
    t.equal(`${new URL(page.url()).pathname}${new URL(page.url()).search}`, `/?from=${encodeURIComponent('/auth/device?user_code=BCDF-GHJK')}`)
    t.match(await waitText(page, '#message', /waiting/), /Sign in to continue/)
    await passwordSignIn(page, 'alice', 'alice-secret')
    await page.waitForURL((u) => u.pathname === '/auth/device')
    t.equal(await page.inputValue('#user_code'), 'BCDF-GHJK', 'back on the device page with its code')
    // Another origin on loopback (nothing listens on port 1): a followed link would leave the demo, never the machine.
    for (const from of ['//127.0.0.1:1/x', 'http://127.0.0.1:1/', '/\\127.0.0.1:1/']) {
      await browser.context.clearCookies()
      await page.goto(`${home}?from=${encodeURIComponent(from)}`)
      await waitText(page, '#status', /^not signed in$/)
      await passwordSignIn(page, 'alice', 'alice-secret')
      await waitText(page, '#status', /signed in as alice/)
      t.equal(new URL(page.url()).origin, new URL(home).origin, `from=${from} is not followed`)
    }
  })
}
