/**
 * Headless Debian Chromium driven by playwright-core, for the demo's end-to-end tests. Never downloads a
 * browser: when /usr/bin/chromium is missing, `chromiumMissing()` says why and the tests are skipped with
 * that reason (`.ci/run` installs it with apt-get, so CI always runs them).
 */
import processTap from 'tap'
import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { basename, join, resolve } from 'node:path'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'

/** Debian's Chromium; `CHROMIUM_PATH` points elsewhere (another distribution's path, or a missing one to try the skip). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/** The little of the DOM the page functions below use (they run in the browser; tsconfig has no DOM lib). */
export interface PageElement { textContent: string | null; hidden?: boolean; complete?: boolean; naturalWidth?: number; src?: string }
declare const document: { querySelector(selector: string): PageElement | null }

/** Why the browser tests cannot run here, or undefined when they can. */
export function chromiumMissing (): string | undefined {
  return existsSync(CHROMIUM) ? undefined : `no Chromium at ${CHROMIUM} (install the Debian package "chromium"; .ci/run does)`
}

export interface TestBrowser {
  context: BrowserContext
  page: Page
  /** Saves a numbered screenshot of the current page under `dir`; returns its path. */
  shot(step: string): Promise<string>
  /** Folder of this file's screenshots (under .tap/, never committed). */
  dir: string
  close(): Promise<void>
}

let running: Promise<Browser> | undefined

/**
 * The test process's one Chromium, started on first use and closed when the process's tests end: starting it is
 * most of a small browser test's cost, and the files of a test group (test/groups/) run one after the other in one
 * process. Each test file takes its own context from it (`launch`), with its own cookies and storage.
 */
export async function chromiumBrowser (): Promise<Browser> {
  running ??= chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync']
  }).then((browser) => {
    processTap.teardown(() => browser.close())
    return browser
  })
  return await running
}

/** A fresh browser context (no cookies, no storage) of the process's Chromium; screenshots go to `.tap/screenshots/<testFile>/`. */
export async function launch (testFile: string): Promise<TestBrowser> {
  const dir = resolve('.tap', 'screenshots', basename(testFile).replace(/\.test\.ts$/, ''))
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const context = await (await chromiumBrowser()).newContext({ viewport: { width: 1000, height: 900 } })
  // A limit on a hang, not a measure: Chromium on a loaded 2-core machine may take seconds for a page.
  context.setDefaultTimeout(60_000)
  const page = await context.newPage()
  let n = 0
  return {
    context,
    page,
    dir,
    async shot (step) {
      const file = join(dir, `${String(++n).padStart(2, '0')}-${step.replace(/[^a-z0-9]+/gi, '-')}.png`)
      await page.screenshot({ path: file, fullPage: true })
      return file
    },
    async close () {
      await context.close()
    }
  }
}

/** Waits until the element's text matches `re` (the page updates it after its fetch calls). */
export async function waitText (page: Page, selector: string, re: RegExp): Promise<string> {
  await page.waitForFunction(([sel, source, flags]) => {
    const el = document.querySelector(sel!)
    return el !== null && new RegExp(source!, flags).test(el.textContent ?? '')
  }, [selector, re.source, re.flags] as const)
  return (await page.textContent(selector)) ?? ''
}

/** Whether an element is shown (present and without the `hidden` attribute). */
export async function isShown (page: Page, selector: string): Promise<boolean> {
  return await page.$eval(selector, (el) => !(el as unknown as PageElement).hidden).catch(() => false)
}

/** Waits until the image is shown and decoded with a real size; returns its natural width and source. */
export async function waitImage (page: Page, selector: string): Promise<{ width: number; src: string }> {
  await page.waitForFunction((sel) => {
    const img = document.querySelector(sel)
    return img !== null && img.hidden !== true && img.complete === true && (img.naturalWidth ?? 0) > 0
  }, selector)
  return await page.$eval(selector, (el) => {
    const img = el as unknown as PageElement
    return { width: img.naturalWidth ?? 0, src: img.src ?? '' }
  })
}

/** The demo page's password form: fills it in, ticks the captcha stand-in's box and submits. */
export async function passwordSignIn (page: Page, user: string, passwd: string): Promise<void> {
  await page.fill('#direct-form input[name=user]', user)
  await page.fill('#direct-form input[name=passwd]', passwd)
  await page.check('#captcha-check')
  await page.click('#direct-form button[type=submit]')
}

/** The demo page's "Log out", awaited until the page says so. */
export async function logOut (page: Page): Promise<void> {
  await page.click('#logout')
  await waitText(page, '#status', /^not signed in$/)
}
