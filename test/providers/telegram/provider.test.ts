import t from 'tap'
import type { Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import FakeTimers from '@sinonjs/fake-timers'
import { createHash } from 'node:crypto'
import { once } from 'node:events'
import sharp from 'sharp'
import { authPlugin } from '../../../auth.js'
import { funcLogger } from '../../../lib/logging/logger.js'
import { telegramProvider, type TelegramOptions } from '../../../providers/index.js'
import { client, listen, parseSetCookie, type Client } from '../../helpers/client.js'
import { BOT_TOKEN, BOT_USERNAME, BotApiStandIn } from '../../helpers/bot-api-standin.js'
import type { TgUser } from '../../../providers/telegram/bot-api.js'

const api = new BotApiStandIn()
await api.start()
t.teardown(() => api.stop())

const ada = { id: 4242, is_bot: false, first_name: 'Ada', last_name: 'Lovelace', username: 'ada' }
const bob = { id: 77, is_bot: false, first_name: 'Bob' }
const SUCCESS = 'signed in, go back'
const ERROR = 'bad or expired link'
const logs: string[] = []

// The root plugin registers the avatar proxy (in-memory store by default). `plugin`: register telegramProvider
// itself rather than through fastify.auth.addTelegramProvider.
async function app (opts: Partial<TelegramOptions> = {}, plugin = false) {
  return await listen(async (app) => {
    await app.register(authPlugin, { secret: () => 'telegram-test-secret-0123456789-0123456789abcdef', url: 'http://127.0.0.1', logger: funcLogger((l) => logs.push(l)) })
    const o: TelegramOptions = { token: BOT_TOKEN, apiUrl: api.url, successMsg: SUCCESS, errorMsg: ERROR, retryDelay: '20ms', requestTtl: '2m', ...opts }
    if (plugin) await app.register(telegramProvider, o)
    else app.auth.addTelegramProvider(o)
  })
}

const main = await app({})
t.teardown(() => main.app.close())
const base = main.base
await api.polling()

async function ask (c: Client, query = ''): Promise<string> {
  const r = await c.fetch(`/auth/telegram/login${query}`)
  if (r.status !== 200) throw new Error(`ask failed: ${r.status} ${await r.text()}`)
  const body = await r.json() as { bot: string; token: string }
  return body.token
}

/** The user presses start; resolves with the bot's answer. */
async function pressStart (user: TgUser, text: string): Promise<{ chat_id: number; text: string }> {
  const answer = api.nextMessage()
  api.say(user, text)
  return await answer
}

t.test('login: {bot, token}, 404 until start, then session and user with avatar', async (t) => {
  const c = client(base)
  const r = await c.fetch('/auth/telegram/login')
  t.equal(r.status, 200)
  t.equal(r.headers.get('cache-control'), 'no-store')
  const body = await r.json() as { bot: string; token: string }
  t.same(Object.keys(body).sort(), ['bot', 'token'])
  t.equal(body.bot, BOT_USERNAME)
  t.match(body.token, /^[A-Za-z0-9_-]{16,64}$/, 'fits a t.me deep link start parameter')
  const hs = c.jar.cookies.get('gatehouse-tg-telegram')!
  t.ok(hs.attrs.httponly, 'handshake cookie is HttpOnly')
  t.equal(hs.attrs.path, '/auth/telegram')
  t.equal(hs.attrs['max-age'], '180', 'requestTtl (2m) plus the one-minute grace of a late start press')

  const waiting = await c.fetch(`/auth/telegram/login?token=${body.token}`)
  t.equal(waiting.status, 404)
  t.same(await waiting.json(), { error: 'not found', details: 'waiting for the user to press start in the bot chat', code: 'GATEHOUSE_NOT_FOUND' })
  t.equal(c.jar.get('JWT'), undefined)

  api.photos.set(ada.id, await sharp({ create: { width: 640, height: 640, channels: 3, background: { r: 200, g: 30, b: 40 } } }).png().toBuffer())
  const answer = await pressStart(ada, `/start ${body.token}`)
  t.same(answer, { chat_id: ada.id, text: SUCCESS })

  const cookieBefore = c.jar.header()
  const done = await c.fetch(`/auth/telegram/login?token=${body.token}`)
  t.equal(done.status, 200)
  const user = await done.json() as { name: string; id: string; picture: string }
  t.equal(user.name, 'Ada Lovelace')
  t.equal(user.id, 'telegram_' + createHash('sha1').update('4242').digest('hex'))
  t.match(user.picture, /^http:\/\/127\.0\.0\.1\/avatar\/[0-9a-f]{40}\.image$/)
  t.ok(c.jar.get('JWT'), 'session cookie set')
  cookieLifetime(t, done, false, 'no session flag')
  t.equal(c.jar.get('gatehouse-tg-telegram'), undefined, 'handshake cookie cleared')
  const me = await c.fetch('/auth/user', { headers: { 'x-xsrf-token': c.jar.get('XSRF-TOKEN')! } })
  t.equal((await me.json() as { name: string }).name, 'Ada Lovelace')

  const pic = await fetch(base + new URL(user.picture).pathname)
  t.equal(pic.status, 200)
  const meta = await sharp(Buffer.from(await pic.arrayBuffer())).metadata()
  t.equal(meta.width, 640, 'the 640px photo, not the 1280px one, went into the avatar proxy')
  const { data } = await sharp(Buffer.from(await (await fetch(base + new URL(user.picture).pathname)).arrayBuffer())).raw().toBuffer({ resolveWithObject: true })
  t.same([data[0], data[1], data[2]], [200, 30, 40], 'the Telegram photo bytes, not an identicon')

  const replay = await fetch(`${base}/auth/telegram/login?token=${body.token}`, { headers: { cookie: cookieBefore } })
  t.equal(replay.status, 404, 'a collected login cannot be collected again')
  t.same(await replay.json(), { error: 'not found', details: 'unknown or expired login request', code: 'GATEHOUSE_NOT_FOUND' })
})

t.test('from and the session flag (session or sess, 1 or true) are kept from the request to the session', async (t) => {
  const cases: Array<[string, boolean]> = [
    ['session=1', true], ['sess=1', true], ['session=true', true], ['sess=true', true],
    ['', false], ['sess=0', false], ['session=false', false]
  ]
  for (const [flag, sessionOnly] of cases) {
    const c = client(base)
    const token = await ask(c, '?from=' + encodeURIComponent('http://127.0.0.1/after') + '&' + flag)
    await pressStart(bob, `/start ${token}`)
    const r = await c.fetch(`/auth/telegram/login?token=${token}`)
    t.equal(r.status, 303, flag)
    t.equal(r.headers.get('location'), 'http://127.0.0.1/after')
    cookieLifetime(t, r, sessionOnly, `"${flag}"`)
  }
})

t.test('a malformed session flag: 400 before anything is stored or bound to the browser', async (t) => {
  for (const flag of ['sess=bogus', 'session=yes', 'sess=1&sess=1']) {
    const c = client(base)
    const r = await c.fetch(`/auth/telegram/login?${flag}`)
    t.equal(r.status, 400, flag)
    t.match(await r.json(), { error: 'bad request', details: /^(sess|session) must be 1, 0, true or false$/, code: 'GATEHOUSE_BAD_REQUEST' }, flag)
    t.equal(r.headers.getSetCookie().length, 0, 'no handshake cookie')
  }
})

t.test('an expired request: the bot answers ErrorMsg, the browser gets 404', async (t) => {
  const c = client(base)
  const token = await ask(c)
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  clock.tick(2 * 60_000 + 1000)
  t.same(await pressStart(ada, `/start ${token}`), { chat_id: ada.id, text: ERROR })
  let r = await c.fetch(`/auth/telegram/login?token=${token}`)
  t.equal(r.status, 404)
  t.same(await r.json(), { error: 'not found', details: 'unknown or expired login request', code: 'GATEHOUSE_NOT_FOUND' })
  clock.tick(60_000) // past the browser binding too
  r = await c.fetch(`/auth/telegram/login?token=${token}`)
  t.equal(r.status, 404)
  t.same(await r.json(), { error: 'not found', details: 'login request expired', code: 'GATEHOUSE_NOT_FOUND' })
  t.equal(c.jar.get('JWT'), undefined)
})

t.test('a start pressed just before expiry can still be collected within the grace minute', async (t) => {
  const c = client(base)
  const token = await ask(c)
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  clock.tick(2 * 60_000 - 10_000)
  t.same(await pressStart(ada, `/start ${token}`), { chat_id: ada.id, text: SUCCESS })
  clock.tick(30_000) // the request's own lifetime is over; the confirmation's grace is not
  const r = await c.fetch(`/auth/telegram/login?token=${token}`)
  t.equal(r.status, 200)
  t.ok(c.jar.get('JWT'), 'signed in')
})

t.test('the handshake cookie is cleared with the attributes it was set with', async (t) => {
  const c = client(base)
  const token = await ask(c)
  await pressStart(bob, `/start ${token}`)
  const r = await c.fetch(`/auth/telegram/login?token=${token}`)
  t.equal(r.status, 200)
  const cleared = r.headers.getSetCookie().find((h) => h.startsWith('gatehouse-tg-telegram='))
  t.ok(cleared, 'handshake cookie cleared')
  t.match(cleared, /; HttpOnly/i)
  t.match(cleared, /; SameSite=Lax/i)
  t.match(cleared, /; Path=\/auth\/telegram/)
})

t.test('a photo that cannot be taken does not fail the login: identicon instead', async (t) => {
  const carol = { id: 9001, is_bot: false, first_name: 'Carol' }
  api.photos.set(carol.id, Buffer.alloc(5 * 1024 * 1024 + 1, 1)) // over the 5 MiB download limit
  const c = client(base)
  const token = await ask(c)
  await pressStart(carol, `/start ${token}`)
  const r = await c.fetch(`/auth/telegram/login?token=${token}`)
  t.equal(r.status, 200)
  const user = await r.json() as { picture: string }
  const pic = await fetch(base + new URL(user.picture).pathname)
  t.equal(pic.status, 200, 'an avatar is still served (identicon)')
  t.ok(logs.includes('[WARN] telegram telegram: avatar not taken: download: file larger than 5242880 bytes'))
  api.photos.delete(carol.id)
})

t.test('a token redeemed from another browser is refused, before and after start', async (t) => {
  const alice = client(base)
  const mallory = client(base)
  const token = await ask(alice)
  await ask(mallory) // mallory holds a handshake cookie of her own
  const noCookie = await client(base).fetch(`/auth/telegram/login?token=${token}`)
  t.equal(noCookie.status, 403)
  t.same(await noCookie.json(), { error: 'forbidden', details: 'this login token was not issued to this browser', code: 'GATEHOUSE_HANDSHAKE' })
  const before = await mallory.fetch(`/auth/telegram/login?token=${token}`)
  t.equal(before.status, 403)
  t.equal((await before.json() as { code: string }).code, 'GATEHOUSE_HANDSHAKE')
  await pressStart(ada, `/start ${token}`)
  const after = await mallory.fetch(`/auth/telegram/login?token=${token}`)
  t.equal(after.status, 403)
  t.equal(mallory.jar.get('JWT'), undefined)
  t.equal((await alice.fetch(`/auth/telegram/login?token=${token}`)).status, 200, 'the browser that asked still gets in')
})

t.test('bad inputs in the browser: 4xx JSON, no session', async (t) => {
  const c = client(base)
  const token = await ask(c)
  const session = client(base)
  const sessionToken = await ask(session)
  await pressStart(bob, `/start ${sessionToken}`)
  t.equal((await session.fetch(`/auth/telegram/login?token=${sessionToken}`)).status, 200)
  const BAD = 'GATEHOUSE_BAD_REQUEST'
  const cases: Array<[string, Record<string, string>, number, string, RegExp]> = [
    ['?token=short', {}, 400, BAD, /malformed login token/],
    ['?token=' + encodeURIComponent('../../etc/passwd-xxxxxxxx'), {}, 400, BAD, /malformed login token/],
    [`?token=${token}&token=${token}`, {}, 400, BAD, /malformed login token/],
    ['?token=' + 'a'.repeat(65), {}, 400, BAD, /malformed login token/],
    [`?token=${token}`, { cookie: 'gatehouse-tg-telegram=forged' }, 403, 'GATEHOUSE_HANDSHAKE', /not issued to this browser/],
    [`?token=${token}`, { cookie: `gatehouse-tg-telegram=${session.jar.get('JWT') ?? 'x'}` }, 403, 'GATEHOUSE_HANDSHAKE', /not issued to this browser/],
    ['?site=%0a', {}, 400, BAD, /control characters/],
    ['?from=a&from=b', {}, 400, BAD, /from must be given once/]
  ]
  for (const [query, headers, status, code, details] of cases) {
    const r = await fetch(`${base}/auth/telegram/login${query}`, { headers })
    t.equal(r.status, status, query)
    t.match(await r.json(), { error: String, details, code }, query)
    t.equal(r.headers.getSetCookie().filter((s) => s.startsWith('JWT=')).length, 0)
  }
  const cb = await c.fetch('/auth/telegram/callback')
  t.equal(cb.status, 404)
  t.same(await cb.json(), { error: 'not found', details: 'provider "telegram" has no callback', code: 'GATEHOUSE_NOT_FOUND' })
})

t.test('bad inputs in the chat: ErrorMsg for bad start tokens, silence for the rest', async (t) => {
  const before = api.sent.length
  t.same(await pressStart(ada, '/start'), { chat_id: ada.id, text: ERROR }, 'start without a token')
  t.same(await pressStart(ada, '/start not a token!'), { chat_id: ada.id, text: ERROR }, 'garbage')
  t.same(await pressStart(ada, '/start ' + 'A'.repeat(22)), { chat_id: ada.id, text: ERROR }, 'well-formed but unknown')
  // Ignored messages are followed by a start: the next answer is for the start, so nothing came before it.
  const c = client(base)
  const token = await ask(c)
  api.say(ada, 'hello bot')
  api.say(ada, `/start ${token}`, 'group')
  api.say({ ...bob, is_bot: true }, `/start ${token}`)
  t.same(await pressStart(bob, '/start'), { chat_id: bob.id, text: ERROR })
  t.equal(api.sent.length, before + 4)
  t.equal((await c.fetch(`/auth/telegram/login?token=${token}`)).status, 404, 'group chats and bots do not confirm')
})

t.test('Bot API trouble: 503 on ask while getMe fails; the poller rides out failed polls', async (t) => {
  api.failing.set('getMe', 502)
  const other = await app({ name: 'tg2', polling: false }, true)
  t.teardown(() => other.app.close())
  const r = await client(other.base).fetch('/auth/tg2/login')
  // The client learns which peer failed, nothing of its answer; the log has the answer.
  const unavailable = { error: 'telegram unavailable', details: 'the Telegram Bot API did not answer usably; try again later', code: 'GATEHOUSE_UNAVAILABLE' }
  t.equal(r.status, 503)
  t.same(await r.json(), unavailable)
  t.ok(logs.includes('[WARN] telegram tg2: getMe failed: getMe: Stand-in failure of getMe'), 'the cause is logged')
  api.failing.delete('getMe')
  api.garbled.add('getMe')
  const garbled = await client(other.base).fetch('/auth/tg2/login')
  t.equal(garbled.status, 503)
  t.same(await garbled.json(), unavailable)
  t.ok(logs.includes('[WARN] telegram tg2: getMe failed: getMe: HTTP 502, answer is not JSON'), 'the cause is logged')
  api.garbled.delete('getMe')
  t.equal((await client(other.base).fetch('/auth/tg2/login')).status, 200)

  const c = client(base)
  const token = await ask(c)
  api.failing.set('getUpdates', 502)
  const failedPolls = api.calls.length
  // The poll waiting now ends with an update; the next polls fail until the failure is lifted.
  api.say(ada, 'wake up')
  while (api.calls.slice(failedPolls).filter((m) => m === 'getUpdates').length < 3) await once(api, 'call')
  api.failing.delete('getUpdates')
  t.same(await pressStart(ada, `/start ${token}`), { chat_id: ada.id, text: SUCCESS })
  t.ok(logs.some((l) => l.includes('getUpdates: Stand-in failure of getUpdates')), 'the failure is logged')
  t.notOk(logs.some((l) => l.includes(BOT_TOKEN)), 'the bot token never reaches the log')
})

// The stand-in holds the long poll for its 30 s: a close() that waited for it would take 30 s. 20 s is this test's
// limit (a generous bound: closing takes milliseconds, seconds on a loaded machine).
t.test('close aborts the long poll in flight and stops polling', { timeout: 20_000 }, async (t) => {
  // A Bot API of its own, so that this instance is the only poller.
  const own = new BotApiStandIn()
  await own.start()
  t.teardown(() => own.stop())
  const { app: extra } = await listen(async (app) => {
    await app.register(authPlugin, { secret: () => 'x-secret-0123456789-0123456789abcdef', url: 'http://127.0.0.1' })
    await app.register(telegramProvider, { token: BOT_TOKEN, apiUrl: own.url })
  })
  await own.polling()
  t.same(own.calls.filter((m) => m === 'getUpdates').length, 1)
  const abandoned = once(own, 'abandoned')
  await extra.close()
  await abandoned
  t.equal(own.waiting, false, 'no poll left waiting')
})

/** Builds an app, lets `add` add a provider, and expects ready() to fail with an OptionsError naming `option`. */
async function refused (t: Test, add: (app: FastifyInstance) => void, option: string, what: string): Promise<void> {
  const app = Fastify()
  await app.register(authPlugin, { secret: () => 'x-secret-0123456789-0123456789abcdef', url: 'http://127.0.0.1' })
  add(app)
  await t.rejects(async () => { await app.ready() }, { name: 'OptionsError', code: 'GATEHOUSE_OPTION', option }, what)
  await app.close()
}

t.test('options are checked at registration, for the wrapper and the plugin alike', async (t) => {
  const cases: Array<[Partial<TelegramOptions> & Record<string, unknown>, string]> = [
    [{ token: 'nope' }, 'telegram.token'],
    [{ token: undefined }, 'telegram.token'],
    [{ apiUrl: 'ftp://x' }, 'telegram.apiUrl'],
    [{ pollTimeout: '2m' }, 'telegram.pollTimeout'],
    [{ requestTtl: -1 }, 'telegram.requestTtl'],
    [{ requestTimeout: 'soon' }, 'telegram.requestTimeout'],
    [{ retryDelay: 0 }, 'telegram.retryDelay'],
    [{ polling: 'yes' as never }, 'telegram.polling'],
    [{ avatar: 1 as never }, 'telegram.avatar'],
    [{ successMsg: '' }, 'telegram.successMsg'],
    [{ errorMsg: 5 as never }, 'telegram.errorMsg'],
    [{ name: 'bad name!' }, 'telegram.name'],
    [{ stateStore: 'mysql://user:pw@x' }, 'telegram.stateStore'],
    [{ stateStore: 42 as never }, 'telegram.stateStore'],
    [{ polltimeout: 5 }, 'telegram.polltimeout']
  ]
  for (const [over, option] of cases) {
    const o = { token: BOT_TOKEN, apiUrl: api.url, polling: false, ...over } as TelegramOptions
    await refused(t, (app) => { app.auth.addTelegramProvider(o) }, option, `addTelegramProvider: ${option}`)
    await refused(t, (app) => { app.register(telegramProvider, o) }, option, `telegramProvider: ${option}`)
  }
  await refused(t, (app) => {
    app.auth.addTelegramProvider({ token: BOT_TOKEN, apiUrl: api.url, polling: false })
    app.register(telegramProvider, { token: BOT_TOKEN, apiUrl: api.url, polling: false })
  }, 'providers', 'the default name taken twice')

  const late = Fastify()
  await late.register(authPlugin, { secret: () => 'x-secret-0123456789-0123456789abcdef', url: 'http://127.0.0.1' })
  await late.ready()
  t.throws(() => late.auth.addTelegramProvider({ token: BOT_TOKEN, apiUrl: api.url, polling: false }), { code: 'GATEHOUSE_OPTION', option: 'providers' }, 'after ready')
  await late.close()
})

/** Whether a login response set session-only cookies (neither Max-Age nor Expires) or persistent ones. */
function cookieLifetime (t: Test, res: Response, sessionOnly: boolean, what: string): void {
  const cookies = res.headers.getSetCookie().map(parseSetCookie).filter((c) => c.name === 'JWT' || c.name === 'XSRF-TOKEN')
  t.same(cookies.map((c) => c.name).sort(), ['JWT', 'XSRF-TOKEN'], `${what}: both cookies set`)
  for (const c of cookies) {
    if (sessionOnly) t.notOk('max-age' in c.attrs || 'expires' in c.attrs, `${what}: ${c.name} is session-only`)
    else t.ok(Number(c.attrs['max-age']) > 0, `${what}: ${c.name} is persistent`)
  }
}
