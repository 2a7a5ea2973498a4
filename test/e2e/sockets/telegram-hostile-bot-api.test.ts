/**
 * A Bot API that trickles or floods (as a broken proxy in front of it might): every Bot API call has its own
 * deadline that closes the connection, and a byte cap. A login request then answers 503 naming Telegram and
 * nothing of its answer; a flooded or trickling photo download costs the user the photo (identicon), not the
 * login; a trickling long poll does not keep `close()` waiting.
 */
import t from 'tap'
import { once } from 'node:events'
import { authPlugin } from '../../../auth.js'
import { funcLogger } from '../../../lib/logging/logger.js'
import { telegramProvider } from '../../../providers/index.js'
import { client, listen } from '../../helpers/client.js'
import { BOT_TOKEN, BotApiStandIn } from '../../helpers/bot-api-standin.js'

// Two Bot APIs: one behind providers with a short request deadline, for the trickling answers (the deadline must
// end them); one behind providers whose deadline is far away, for the floods (the byte cap must end them, and a
// loaded machine must not turn one into a timeout).
const api = new BotApiStandIn()
await api.start()
t.teardown(() => api.stop())
const floodApi = new BotApiStandIn()
await floodApi.start()
t.teardown(() => floodApi.stop())
const logs: string[] = []
const REQUEST_TIMEOUT_MS = 600
const FAR_MS = 120_000

const { app, base } = await listen(async (app) => {
  await app.register(authPlugin, { secret: () => 'telegram-hostile-secret-0123456789', url: 'http://127.0.0.1', logger: funcLogger((l) => logs.push(l)) })
  await app.register(telegramProvider, { token: BOT_TOKEN, apiUrl: api.url, requestTimeout: REQUEST_TIMEOUT_MS, retryDelay: '20ms', requestTtl: '2m' })
  // Not polling, so its getMe (asked once, at the first login request, then kept) is still to come.
  await app.register(telegramProvider, { name: 'tgask', token: BOT_TOKEN, apiUrl: api.url, requestTimeout: REQUEST_TIMEOUT_MS, polling: false })
  await app.register(telegramProvider, { name: 'tgflood', token: BOT_TOKEN, apiUrl: floodApi.url, requestTimeout: FAR_MS, retryDelay: '20ms', requestTtl: '2m' })
  await app.register(telegramProvider, { name: 'tgfloodask', token: BOT_TOKEN, apiUrl: floodApi.url, requestTimeout: FAR_MS, polling: false })
})
t.teardown(() => app.close())
await api.polling()
await floodApi.polling()

const UNAVAILABLE = { error: 'telegram unavailable', details: 'the Telegram Bot API did not answer usably; try again later', code: 'GATEHOUSE_UNAVAILABLE' }

async function allHostileClosed (): Promise<void> {
  for (const a of [api, floodApi]) while (a.hostileOpen > 0) await once(a, 'hostile-closed')
}

t.test('getMe trickling: 503 at the request deadline, the connection closed', async (t) => {
  api.hostile.set('getMe', 'trickle')
  t.teardown(() => api.hostile.delete('getMe'))
  // It trickles for ever: only the deadline answers (a request held open fails on the file's time limit).
  const started = performance.now()
  const r = await client(base).fetch('/auth/tgask/login')
  const took = Math.round(performance.now() - started)
  t.equal(r.status, 503)
  t.same(await r.json(), UNAVAILABLE)
  // A lower bound only (load makes it later, never earlier).
  t.ok(took >= REQUEST_TIMEOUT_MS - 20, `answered at the deadline (${took} ms)`)
  await allHostileClosed()
  t.pass('no Bot API connection left open')
  t.ok(logs.includes('[WARN] telegram tgask: getMe failed: getMe: Bot API unreachable (timed out)'), 'the cause is logged')
})

t.test('getMe flooding 64 MiB: 503 at the 4 MiB cap, not a 64 MiB read', async (t) => {
  floodApi.hostile.set('getMe', 'huge')
  t.teardown(() => floodApi.hostile.delete('getMe'))
  const before = process.memoryUsage.rss()
  const r = await client(base).fetch('/auth/tgfloodask/login')
  t.equal(r.status, 503)
  t.same(await r.json(), UNAVAILABLE)
  t.ok(process.memoryUsage.rss() - before < 50 * 2 ** 20, 'memory stays bounded')
  t.ok(logs.includes('[WARN] telegram tgfloodask: getMe failed: getMe: answer larger than 4194304 bytes'))
  await allHostileClosed()
  t.equal(floodApi.hostileOpen, 0, 'hung up at the cap: the connection is closed')
})

t.test('a photo download that trickles or floods costs the photo, not the login', async (t) => {
  // The trickle through the provider with the short deadline (which must end it), the flood through the one whose
  // deadline is far away (the cap must end it).
  for (const [kind, name, bot] of [['trickle', 'telegram', api], ['huge', 'tgflood', floodApi]] as const) {
    const user = { id: kind === 'trickle' ? 3101 : 3102, is_bot: false, first_name: `Photo ${kind}` }
    bot.photos.set(user.id, Buffer.from('not used'))
    bot.hostile.set('file', kind)
    const c = client(base)
    const r = await c.fetch(`/auth/${name}/login`)
    t.equal(r.status, 200)
    const { token } = await r.json() as { token: string }
    const answered = bot.nextMessage()
    bot.say(user, `/start ${token}`)
    await answered
    const done = await c.fetch(`/auth/${name}/login?token=${token}`)
    t.equal(done.status, 200, `${kind}: signed in`)
    const body = await done.json() as { picture: string }
    t.equal((await fetch(base + new URL(body.picture).pathname)).status, 200, `${kind}: an identicon is served`)
    bot.hostile.delete('file')
    await allHostileClosed()
    t.equal(bot.hostileOpen, 0, `${kind}: the download's connection is closed`)
  }
  t.ok(logs.some((l) => l === '[WARN] telegram telegram: avatar not taken: download: Bot API unreachable (timed out)'), 'trickle logged')
  t.ok(logs.some((l) => l === '[WARN] telegram tgflood: avatar not taken: download: file larger than 5242880 bytes'), 'flood logged')
  t.notOk(logs.some((l) => l.includes(BOT_TOKEN)), 'the bot token never reaches the log')
})

// The long poll trickles for ever and its own deadline is 10 s + 30 s away: a close() that waited for it would
// take 40 s. 30 s is this test's limit (a generous bound: closing takes milliseconds, seconds on a loaded machine).
t.test('close() stops a trickling long poll at once', { timeout: 30_000 }, async (t) => {
  const own = new BotApiStandIn()
  await own.start()
  t.teardown(() => own.stop())
  own.hostile.set('getUpdates', 'trickle')
  const { app: extra } = await listen(async (app) => {
    await app.register(authPlugin, { secret: () => 'x-secret-0123456789-0123456789-0123', url: 'http://127.0.0.1' })
    await app.register(telegramProvider, { token: BOT_TOKEN, apiUrl: own.url })
  })
  while (!own.calls.includes('getUpdates')) await once(own, 'call')
  await extra.close()
  while (own.hostileOpen > 0) await once(own, 'hostile-closed')
  t.equal(own.hostileOpen, 0, 'the poll connection is closed')
})
