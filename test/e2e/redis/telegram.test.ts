import t from 'tap'
import { EventEmitter, once } from 'node:events'
import { authPlugin } from '../../../auth.js'
import { funcLogger } from '../../../lib/logging/logger.js'
import { RedisStateStore } from '../../../stores/state/index.js'
import { telegramProvider } from '../../../providers/telegram/provider.js'
import { client, listen, type Client } from '../../helpers/client.js'
import { RedisServer, redisMissingReason } from '../../helpers/redis-server.js'
import { BOT_TOKEN, BotApiStandIn } from '../../helpers/bot-api-standin.js'

const missing = redisMissingReason()
if (missing !== undefined) console.log(`# skipping Telegram Redis tests: ${missing}`)

const ada = { id: 4242, is_bot: false, first_name: 'Ada' }

t.test('two instances sharing Redis', { skip: missing ?? false }, async (t) => {
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())
  const api = new BotApiStandIn()
  await api.start()
  t.teardown(() => api.stop())
  const logs: string[] = []
  const logged = new EventEmitter()
  // A command timeout that a loaded machine's slow answer does not reach (a generous bound: commands take
  // milliseconds), and that the outage test waits for once.
  const storeA = new RedisStateStore(redis.url, { commandTimeoutMs: 2000 })
  const storeB = new RedisStateStore(redis.url, { commandTimeoutMs: 2000 })
  t.teardown(() => storeA.close())
  t.teardown(() => storeB.close())

  // Only A polls the bot (Telegram gives each update to one poller); B serves browsers only. A registers the
  // plugin, B goes through fastify.auth.addTelegramProvider.
  const mk = (store: RedisStateStore, polling: boolean) => listen(async (app) => {
    await app.register(authPlugin, { secret: () => 'shared-secret-0123456789-0123456789abcdef', url: 'http://127.0.0.1', logger: funcLogger((l) => { logs.push(l); logged.emit('line', l) }) })
    const o = { token: BOT_TOKEN, apiUrl: api.url, stateStore: store, polling, retryDelay: '20ms', successMsg: 'ok', errorMsg: 'no' }
    if (polling) await app.register(telegramProvider, o)
    else app.auth.addTelegramProvider(o)
  })
  const a = await mk(storeA, true)
  const b = await mk(storeB, false)
  t.teardown(() => a.app.close())
  t.teardown(() => b.app.close())
  await api.polling()

  async function ask (c: Client): Promise<string> {
    const r = await c.fetch('/auth/telegram/login')
    t.equal(r.status, 200)
    return (await r.json() as { token: string }).token
  }
  async function pressStart (token: string): Promise<string> {
    const answer = api.nextMessage()
    api.say(ada, `/start ${token}`)
    return (await answer).text
  }

  t.test('asked on one instance, completed on the other (both ways)', async (t) => {
    for (const [askOn, collectOn] of [[a, b], [b, a]] as const) {
      const jar = client(askOn.base).jar
      const token = await ask(client(askOn.base, jar))
      const other = client(collectOn.base, jar)
      t.equal((await other.fetch(`/auth/telegram/login?token=${token}`)).status, 404, 'not yet confirmed')
      t.equal(await pressStart(token), 'ok')
      const r = await other.fetch(`/auth/telegram/login?token=${token}`)
      t.equal(r.status, 200)
      t.equal((await r.json() as { name: string }).name, 'Ada')
      t.equal((await client(askOn.base, jar).fetch(`/auth/telegram/login?token=${token}`)).status, 403, 'handshake cookie was cleared')
    }
  })

  t.test('a start press during a store outage is kept and confirmed when the store answers again', async (t) => {
    const jar = client(b.base).jar
    const token = await ask(client(b.base, jar))
    // Redis hangs (every command stalls) until the poller has noticed: its lookups time out and the update is
    // postponed; then Redis runs again and the retried update is confirmed.
    const postponed = new Promise<void>((resolve) => {
      const seen = (l: string): void => { if (/update \d+ postponed: Redis did not answer/.test(l)) { logged.off('line', seen); resolve() } }
      logged.on('line', seen)
    })
    redis.pause()
    t.teardown(() => redis.resume())
    const confirmed = pressStart(token)
    await postponed
    redis.resume()
    t.equal(await confirmed, 'ok', 'confirmed after the outage')
    t.ok(logs.some((l) => /update \d+ postponed: Redis did not answer/.test(l)), 'the outage was noticed and the update postponed')
    t.equal((await client(a.base, jar).fetch(`/auth/telegram/login?token=${token}`)).status, 200)
  })

  t.test('Redis down: clear 503s; back: logins work again', async (t) => {
    await redis.stop()
    for (const x of [a, b]) {
      const r = await client(x.base).fetch('/auth/telegram/login')
      t.equal(r.status, 503)
      t.match(await r.json(), { error: 'state store unavailable', details: 'Redis did not answer', code: 'GATEHOUSE_STATE_STORE' })
      const r2 = await client(x.base).fetch(`/auth/telegram/login?token=${'A'.repeat(24)}`, { headers: { cookie: 'x=y' } })
      t.equal(r2.status, 403, 'the browser check needs no store')
      t.equal((await r2.json() as { code: string }).code, 'GATEHOUSE_HANDSHAKE')
    }
    await redis.start()
    for (const s of [storeA, storeB]) if (s.client.status !== 'ready') await once(s.client, 'ready')
    const jar = client(a.base).jar
    const token = await ask(client(a.base, jar))
    t.equal(await pressStart(token), 'ok')
    t.equal((await client(b.base, jar).fetch(`/auth/telegram/login?token=${token}`)).status, 200)
  })
})
