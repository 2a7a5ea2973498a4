/**
 * The demo page in headless Chromium, Telegram login against a local Bot API stand-in (TELEGRAM_API_URL):
 * the page shows the bot's deep link, the "user" presses start in the bot, the page's polling signs in.
 */
import t from 'tap'
import { chromiumMissing, launch, waitText, type TestBrowser } from './browser.js'
import { startDemo, type StartedDemo } from '../../helpers/demo.js'
import { BOT_TOKEN, BOT_USERNAME, BotApiStandIn } from '../../helpers/bot-api-standin.js'

const missing = chromiumMissing()
if (missing !== undefined) {
  t.comment(`browser tests skipped: ${missing}`)
  t.test('telegram login in Chromium', { skip: missing }, async () => {})
} else {
  const bot = new BotApiStandIn()
  await bot.start()
  const started: StartedDemo = await startDemo({ AUTH_SECRET: 'browser-telegram-secret-0123456789abcdef', TELEGRAM_TOKEN: BOT_TOKEN, TELEGRAM_API_URL: bot.url })
  const browser: TestBrowser = await launch(import.meta.url)
  t.teardown(async () => { await browser.close(); await started.stop(); await bot.stop() })
  t.comment(`screenshots: ${browser.dir}`)
  const { page, shot } = browser

  t.test('the deep link names the bot; pressing start in the bot signs the page in', async (t) => {
    t.ok(started.demo.providers.includes('telegram'), 'telegram is on')
    await page.goto(`${started.demo.url}/`)
    await waitText(page, '#status', /not signed in/)
    await page.click('#telegram-start')
    const link = await page.waitForSelector('#telegram-link a')
    const href = new URL((await link.getAttribute('href'))!)
    t.equal(href.origin + href.pathname, `https://t.me/${BOT_USERNAME}`)
    const token = href.searchParams.get('start')!
    t.match(token, /^[A-Za-z0-9_-]{16,64}$/)
    await shot('telegram-deep-link')
    bot.say({ id: 4242, first_name: 'Tom', username: 'tom_tg' }, `/start ${token}`)
    t.match(await waitText(page, '#status', /signed in as/), /signed in as Tom/)
    t.match(await page.textContent('#user-id'), /^telegram_[0-9a-f]{40}$/)
    await shot('telegram-signed-in')
    t.ok(bot.sent.some((m) => m.chat_id === 4242), 'the bot answered the user')
  })
}
