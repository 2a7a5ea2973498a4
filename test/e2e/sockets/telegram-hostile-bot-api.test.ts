/**
 * A Bot API that trickles or floods (as a broken proxy in front of it might): every Bot API call has its own
 * deadline that closes the connection, and a byte cap. A login request then answers 503 naming Telegram and
 * nothing of its answer; a flooded or trickling photo download costs the user the photo (identicon), not the
 * login; a trickling long poll does not keep `close()` waiting.
 */
import t from 'tap'
import { once } from 'node:events'
import { authPlugin } from '../../../auth.js'
import { funcLogger } from '../../../lib/logger.js'
import { telegramProvider } from '../../../providers/index.js'
import { client, listen } from '../../helpers/client.js'
import { BOT_TOKEN, BotApiStandIn } from '../../helpers/bot-api-standin.js'

const api = new BotApiStandIn()
await api.start()
t.teardown(() => api.stop())
const logs: string[] = []
const REQUEST_TIMEOUT_MS = 600

const { app, base } = await listen(async (app) => {
  await app.register(authPlugin, { secret: () => 'telegram-hostile-secret-0123456789', url: 'http://127.0.0.1', logger: funcLogger((l) => logs.push(l)) })
  await app.register(telegramProvider, { token: BOT_TOKEN, apiUrl: api.url, requestTimeout: REQUEST_TIMEOUT_MS, retryDelay: '20ms', requestTtl: '2m' })
  // Not polling, so its getMe (asked once, at the first login request, then kept) is still to come.
  await app.register(telegramProvider, { name: 'tgask', token: BOT_TOKEN, apiUrl: api.url, requestTimeout: REQUEST_TIMEOUT_MS, polling: false })
})
t.teardown(() => app.close())
await api.polling()

const UNAVAILABLE = { error: 'telegram unavailable', details: 'the Telegram Bot API did not answer usably; try again later', code: 'GATEHOUSE_UNAVAILABLE' }

async function allHostileClosed (): Promise<void> {
  while (api.hostileOpen > 0) await once(api, 'hostile-closed')
}

t.test('getMe trickling: 503 at the request deadline, the connection closed', async (t) => {
  api.hostile.set('getMe', 'trickle')
  t.teardown(() => api.hostile.delete('getMe'))
  const started = performance.now()
  const r = await client(base).fetch('/auth/tgask/login', { signal: AbortSignal.timeout(10_000) })
  const took = Math.round(performance.now() - started)
  t.equal(r.status, 503)
  t.same(await r.json(), UNAVAILABLE)
  t.ok(took >= REQUEST_TIMEOUT_MS - 20 && took < REQUEST_TIMEOUT_MS + 1500, `answered at the deadline (${took} ms)`)
  await allHostileClosed()
  t.pass('no Bot API connection left open')
  t.ok(logs.includes('[WARN] telegram tgask: getMe failed: getMe: Bot API unreachable (timed out)'), 'the cause is logged')
})

t.test('getMe flooding 64 MiB: 503 at the 4 MiB cap, not a 64 MiB read', async (t) => {
  api.hostile.set('getMe', 'huge')
  t.teardown(() => api.hostile.delete('getMe'))
  const before = process.memoryUsage.rss()
  const r = await client(base).fetch('/auth/tgask/login')
  t.equal(r.status, 503)
  t.same(await r.json(), UNAVAILABLE)
  t.ok(process.memoryUsage.rss() - before < 50 * 2 ** 20, 'memory stays bounded')
  t.ok(logs.includes('[WARN] telegram tgask: getMe failed: getMe: answer larger than 4194304 bytes'))
  await allHostileClosed()
})

t.test('a photo download that trickles or floods costs the photo, not the login', async (t) => {
  for (const kind of ['trickle', 'huge'] as const) {
    const user = { id: kind === 'trickle' ? 3101 : 3102, is_bot: false, first_name: `Photo ${kind}` }
    api.photos.set(user.id, Buffer.from('not used'))
    api.hostile.set('file', kind)
    const c = client(base)
    const r = await c.fetch('/auth/telegram/login')
    t.equal(r.status, 200)
    const { token } = await r.json() as { token: string }
    const answered = api.nextMessage()
    api.say(user, `/start ${token}`)
    await answered
    const started = performance.now()
    const done = await c.fetch(`/auth/telegram/login?token=${token}`, { signal: AbortSignal.timeout(10_000) })
    t.equal(done.status, 200, `${kind}: signed in`)
    t.ok(performance.now() - started < REQUEST_TIMEOUT_MS + 1500, `${kind}: within the download deadline`)
    const body = await done.json() as { picture: string }
    t.equal((await fetch(base + new URL(body.picture).pathname)).status, 200, `${kind}: an identicon is served`)
    api.hostile.delete('file')
    await allHostileClosed()
  }
  t.ok(logs.some((l) => l === '[WARN] telegram telegram: avatar not taken: download: Bot API unreachable (timed out)'), 'trickle logged')
  t.ok(logs.some((l) => l === '[WARN] telegram telegram: avatar not taken: download: file larger than 5242880 bytes'), 'flood logged')
  t.notOk(logs.some((l) => l.includes(BOT_TOKEN)), 'the bot token never reaches the log')
})

t.test('close() stops a trickling long poll at once', async (t) => {
  const own = new BotApiStandIn()
  await own.start()
  t.teardown(() => own.stop())
  own.hostile.set('getUpdates', 'trickle')
  const { app: extra } = await listen(async (app) => {
    await app.register(authPlugin, { secret: () => 'x-secret-0123456789-0123456789-0123', url: 'http://127.0.0.1' })
    await app.register(telegramProvider, { token: BOT_TOKEN, apiUrl: own.url })
  })
  while (!own.calls.includes('getUpdates')) await once(own, 'call')
  const started = performance.now()
  await extra.close()
  t.ok(performance.now() - started < 2000, 'close did not wait for the poll deadline (10 s + 30 s)')
  while (own.hostileOpen > 0) await once(own, 'hostile-closed')
  t.pass('the poll connection is closed')
})
