/**
 * "Where you're signed in" on the demo page, in headless Chromium with two browser contexts (two devices with
 * their own cookies): both sign alice in, each lists both sessions with its own marked "this device", and one
 * signs the other out: that one is refused from its next request on.
 */
import t from 'tap'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { chromiumBrowser, chromiumMissing, isShown, waitText } from './browser.js'
import { startDemo, type StartedDemo } from '../../helpers/demo.js'

const missing = chromiumMissing()
if (missing !== undefined) {
  t.comment(`browser tests skipped: ${missing}`)
  t.test('where you\'re signed in, in Chromium', { skip: missing }, async () => {})
} else {
  const started: StartedDemo = await startDemo({ AUTH_SECRET: 'browser-sessions-secret-0123456789abcdef' })
  const browser: Browser = await chromiumBrowser()
  const devices: BrowserContext[] = []
  t.teardown(async () => { for (const context of devices) await context.close(); await started.stop() })
  const home = `${started.demo.url}/`

  async function device (): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1000, height: 900 } })
    devices.push(context)
    context.setDefaultTimeout(60_000) // as browser.ts: a limit on a hang, not a measure
    const page = await context.newPage()
    await page.goto(home)
    await waitText(page, '#status', /not signed in/)
    await page.fill('#direct-form input[name=user]', 'alice')
    await page.fill('#direct-form input[name=passwd]', 'alice-secret')
    await page.check('#captcha-check')
    await page.click('#direct-form button[type=submit]')
    await waitText(page, '#status', /signed in as alice/)
    return page
  }

  const rows = async (page: Page): Promise<string[]> => await page.$$eval('#session-list li', (lis) => lis.map((li) => (li as unknown as { textContent: string }).textContent))

  t.test('two devices: each lists both, and one signs the other out', async (t) => {
    const laptop = await device()
    const phone = await device()
    await laptop.reload()
    await waitText(laptop, '#session-list', /Chrome[\s\S]*this device/)
    t.ok(await isShown(laptop, '#sessions'), 'the card is shown when signed in')
    const seen = await rows(laptop)
    t.equal(seen.length, 2, 'both sessions listed')
    t.match(seen[0], /Chrome on Linux.*via local.*last seen just now.*this device/, 'the current one first, marked')
    t.notMatch(seen[1], /this device/)
    t.match((await rows(phone))[0], /this device/, 'the phone marks its own')

    // The laptop signs the phone out.
    await laptop.click('#session-list li:not(:has(.this-device)) button')
    await laptop.waitForFunction(() => (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }).document.querySelectorAll('#session-list li').length === 1)
    t.match((await rows(laptop))[0], /this device/, 'only the laptop is left')

    await phone.reload()
    await waitText(phone, '#status', /^not signed in$/)
    t.notOk(await isShown(phone, '#sessions'), 'the phone is signed out: no card')
    await phone.click('button[data-api="/api/private"]')
    t.match(await waitText(phone, '#api-result', /→ \d{3}/), /→ 401 denied[\s\S]*GATEHOUSE_SESSION_REVOKED/, 'its session is refused')

    await laptop.click('button[data-api="/api/private"]')
    t.match(await waitText(laptop, '#api-result', /→ \d{3}/), /→ 200 allowed/, 'the laptop is still signed in')
  })

  t.test('sign out everywhere else, then this device itself', async (t) => {
    const a = await device()
    await device()
    await device()
    await a.reload()
    await waitText(a, '#session-list', /this device/)
    t.ok((await rows(a)).length >= 3)
    await a.click('#sessions-others')
    await a.waitForFunction(() => (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }).document.querySelectorAll('#session-list li').length === 1)
    t.notOk(await isShown(a, '#sessions-others'), 'nothing else to sign out')
    await a.click('#session-list li button')
    await waitText(a, '#status', /^not signed in$/)
    t.notOk(await isShown(a, '#sessions'), 'signing this device out signs the page out')
  })
}
