/**
 * Throttling of the routes that take no password: confirmation sends per destination address and per client
 * (the attack pass mailed one inbox 100 times in 10.8 s), Telegram login requests and OAuth2 login starts per
 * client; and every count shared by two instances behind one Redis.
 */
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import type { FastifyInstance } from 'fastify'
import { authPlugin } from '../../../auth.js'
import { oauth2Provider, telegramProvider, verifyProvider } from '../../../providers/index.js'
import { RedisStateStore } from '../../../stores/state/redis.js'
import { client, listen } from '../../helpers/client.js'
import { fromAddress } from '../../helpers/http-from.js'
import { BOT_TOKEN, BotApiStandIn } from '../../helpers/bot-api-standin.js'
import { RedisServer, redisMissingReason } from '../../helpers/redis-server.js'

const SECRET = () => 'sends-test-secret-0123456789abcdef'

const api = new BotApiStandIn()
await api.start()
t.teardown(() => api.stop())

interface Started { app: FastifyInstance; base: string; mails: Array<{ address: string; text: string }> }

async function start (opts: Record<string, unknown> = {}): Promise<Started> {
  const mails: Started['mails'] = []
  const { app, base } = await listen(async (app) => {
    await app.register(authPlugin, { secret: SECRET, url: 'http://127.0.0.1', ...opts })
    await app.register(verifyProvider, { name: 'email', template: '{{.User}}: {{.Token}}', sender: (address: string, text: string) => { mails.push({ address, text }) } })
    await app.register(telegramProvider, { token: BOT_TOKEN, apiUrl: api.url, polling: false })
    await app.register(oauth2Provider, {
      name: 'custom', cid: 'c', csecret: 's', endpoint: { authURL: 'http://127.0.0.1:1/authorize', tokenURL: 'http://127.0.0.1:1/token' }, infoURL: 'http://127.0.0.1:1/user', mapUser: (d: Record<string, unknown>) => ({ id: String(d.id) })
    })
  })
  t.teardown(() => app.close())
  return { app, base, mails }
}

t.test('one inbox: five messages an hour, then 429 with Retry-After; nothing more is sent', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const { base, mails } = await start({ rateLimit: { login: { max: 1000 } } })
  const c = client(base)
  const statuses: number[] = []
  for (let i = 0; i < 100; i++) statuses.push((await c.fetch(`/auth/email/login?user=u${i}&address=victim@example.com`)).status)
  t.same(statuses.slice(0, 5), Array(5).fill(200))
  t.ok(statuses.slice(5).every((s) => s === 429), 'the 95 others: 429')
  t.equal(mails.length, 5, 'five messages reached the inbox, not a hundred')
  // From another address (the first one is past its own limit of twenty by now).
  const other = fromAddress('127.0.0.3')
  t.teardown(() => other.close())
  const r = await other.fetch(`${base}/auth/email/login?user=again&address=VICTIM@example.com`)
  t.equal(r.status, 429, 'the destination compares without letter case, whoever asks')
  t.equal(r.headers['retry-after'], '3600')
  t.same(JSON.parse(r.body), { error: 'too many requests', details: 'too many confirmation messages to this address', code: 'GATEHOUSE_RATE_LIMITED' })
  t.equal((await other.fetch(`${base}/auth/email/login?user=me&address=other@example.com`)).status, 200, 'another destination still gets its message')
  clock.tick(3_600_000)
  t.equal((await c.fetch('/auth/email/login?user=later&address=victim@example.com')).status, 200, 'an hour later')
  t.equal(mails.length, 7)
})

t.test('one client: twenty messages an hour whatever the addresses', async (t) => {
  const { base, mails } = await start({ rateLimit: { login: { max: 1000 } } })
  const c = client(base)
  const statuses: number[] = []
  for (let i = 0; i < 25; i++) statuses.push((await c.fetch(`/auth/email/login?user=u&address=a${i}@example.com`)).status)
  t.same(statuses, [...Array(20).fill(200), ...Array(5).fill(429)])
  t.equal(mails.length, 20)
  const r = await c.fetch('/auth/email/login?user=u&address=last@example.com')
  t.same(await r.json(), { error: 'too many requests', details: 'too many confirmation messages from this address', code: 'GATEHOUSE_RATE_LIMITED' })
})

t.test('Telegram login requests and OAuth2 login starts count per client', async (t) => {
  const { base } = await start({ rateLimit: { login: { max: 3 } } })
  const c = client(base)
  const tg: number[] = []
  for (let i = 0; i < 4; i++) tg.push((await c.fetch('/auth/telegram/login')).status)
  t.same(tg, [200, 200, 200, 429], 'Telegram: the fourth request is refused')
  const other = await start({ rateLimit: { login: { max: 3 } } })
  const oauth: number[] = []
  for (let i = 0; i < 4; i++) oauth.push((await client(other.base).fetch('/auth/custom/login')).status)
  t.same(oauth, [302, 302, 302, 429], 'OAuth2: the fourth start is refused')
  const last = await client(other.base).fetch('/auth/custom/login')
  t.equal(last.headers.get('location'), null, 'no redirect to the provider')
  t.equal(last.headers.get('set-cookie'), null, 'no handshake cookie')
})

t.test('polling for a Telegram login does not count', async (t) => {
  const { base } = await start({ rateLimit: { login: { max: 2 } } })
  const c = client(base)
  const r = await c.fetch('/auth/telegram/login')
  const { token } = await r.json() as { token: string }
  for (let i = 0; i < 10; i++) t.equal((await c.fetch(`/auth/telegram/login?token=${token}`)).status, 404, 'still waiting')
  t.equal((await c.fetch('/auth/telegram/login')).status, 200, 'a second request is within the limit')
})

const missing = redisMissingReason()
t.test('two instances sharing Redis share every count', { skip: missing ?? false }, async (t) => {
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())
  const users: Record<string, string> = { admin: 'admin-secret' }
  const instance = async (): Promise<string> => {
    const store = new RedisStateStore(redis.url)
    t.teardown(() => store.close())
    const { app, base } = await listen(async (app) => {
      await app.register(authPlugin, { secret: SECRET, url: 'http://127.0.0.1', stateStore: store, rateLimit: { login: { max: 15 } }, providers: [{ kind: 'direct', name: 'local', checker: (u: string, p: string) => users[u] === p }] })
      await app.register(verifyProvider, { name: 'email', template: '{{.Token}}', sender: () => {} })
    })
    t.teardown(() => app.close())
    return base
  }
  const [a, b] = [await instance(), await instance()]
  const login = async (base: string, passwd: string): Promise<number> =>
    (await client(base).fetch('/auth/local/login', { method: 'POST', json: { user: 'admin', passwd } })).status
  const guesses: number[] = []
  for (let i = 0; i < 6; i++) guesses.push(await login(i % 2 === 0 ? a : b, `guess-${i}`))
  t.same(guesses, [403, 403, 403, 403, 403, 429], 'failures on both instances add up to one lockout')
  t.equal(await login(a, 'admin-secret'), 429, 'instance A refuses the right password')
  t.equal(await login(b, 'admin-secret'), 429, 'instance B too')
  const sends: number[] = []
  for (let i = 0; i < 6; i++) sends.push((await client(i % 2 === 0 ? a : b).fetch('/auth/email/login?user=u&address=shared@example.com')).status)
  t.same(sends, [200, 200, 200, 200, 200, 429], 'sends to one address add up across instances')
  // Login requests: 6 guesses, 2 right passwords and 6 sends so far; the limit of 15 holds across both.
  t.equal((await client(a).fetch('/auth/email/login?user=u&address=new@example.com')).status, 200, 'the 15th request')
  const over = await client(b).fetch('/auth/email/login?user=u&address=new2@example.com')
  t.equal(over.status, 429, 'the 16th, on the other instance')
  t.match(await over.json(), { details: 'too many login requests from this address' })
})
