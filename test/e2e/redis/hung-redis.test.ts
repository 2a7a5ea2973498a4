/**
 * A hung Redis must not burn one-time tokens. The attack pass stopped Redis (SIGSTOP) while a confirmation
 * token was used: 503 after the command timeout, and once Redis resumed the queued `SET NX` ran anyway, so the
 * token answered 401 "already used". Now the store sends an undo behind every consuming write that failed, on
 * the same connection, so the late write is undone before anything later can see it: a 503 consumes nothing.
 * Real redis-server, frozen with SIGSTOP and resumed with SIGCONT.
 */
import t from 'tap'
import { authPlugin } from '../../../auth.js'
import { oauth2Provider, verifyProvider } from '../../../providers/index.js'
import { startLocalOAuth2Server } from '../../../servers/index.js'
import { RedisStateStore } from '../../../stores/state/redis.js'
import { client, listen } from '../../helpers/client.js'
import { RedisServer, redisMissingReason } from '../../helpers/redis-server.js'

const missing = redisMissingReason()
if (missing !== undefined) {
  t.test('hung Redis', { skip: missing }, async () => {})
} else {
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())
  const provider = await startLocalOAuth2Server({ url: 'http://127.0.0.1:0' })
  t.teardown(provider.close)

  // The providers' one-time state is in Redis (a short command timeout keeps the test quick, but not so short that
  // a loaded machine's slow answer counts as a hung Redis: 300 ms did once); the core's own store (throttling
  // counts) stays in memory, so the consuming write is the one that meets the hung Redis.
  const store = new RedisStateStore(redis.url, { commandTimeoutMs: 1000 })
  t.teardown(() => store.close())
  const mails: string[] = []
  const { app, base } = await listen(async (app) => {
    await app.register(authPlugin, { secret: () => 'hung-redis-test-secret-0123456789', url: 'http://127.0.0.1' })
    await app.register(verifyProvider, { name: 'email', template: '{{.Token}}', sender: (_a: string, text: string) => { mails.push(text) }, stateStore: store })
    await app.register(oauth2Provider, { name: 'custom', ...provider.providerOptions, stateStore: store })
  })
  t.teardown(() => app.close())

  /** Freezes Redis for the duration of `during`, then lets it run; resumed even when `during` fails. */
  async function whileHung<T> (during: () => Promise<T>): Promise<T> {
    redis.pause()
    try {
      return await during()
    } finally {
      redis.resume()
    }
  }

  t.test('a confirmation token answered 503 while Redis hangs still signs in once Redis is back', async (t) => {
    const c = client(base)
    t.equal((await c.fetch('/auth/email/login?user=ann&address=ann@example.com')).status, 200)
    const token = mails.at(-1)!
    // Redis stays frozen until this answer arrives: only the command timeout can have ended the request.
    const hung = await whileHung(async () => await c.fetch(`/auth/email/login?token=${token}`))
    t.equal(hung.status, 503, 'answered at the command timeout while Redis hung')
    t.match(await hung.json(), { error: 'state store unavailable', code: 'GATEHOUSE_STATE_STORE' })
    t.same(hung.headers.getSetCookie(), [], 'no session')
    const back = await c.fetch(`/auth/email/login?token=${token}`)
    t.equal(back.status, 200, 'the token was not consumed by the late write')
    t.equal((await back.json()).name, 'ann')
    const again = await c.fetch(`/auth/email/login?token=${token}`)
    t.equal(again.status, 401, 'and it stays one-time')
    t.match(await again.json(), { code: 'GATEHOUSE_ALREADY_USED' })
    t.equal(store.owedUndo, 0, 'every undo was answered')
  })

  t.test('an OAuth2 state answered 503 while Redis hangs is not consumed', async (t) => {
    const c = client(base)
    const start = await c.fetch('/auth/custom/login')
    t.equal(start.status, 302)
    const cookie = c.jar.header()
    const authorize = await fetch(start.headers.get('location')!, { redirect: 'manual' })
    const callback = `/auth/custom/callback${new URL(authorize.headers.get('location')!).search}`
    const hung = await whileHung(async () => await c.fetch(callback))
    t.equal(hung.status, 503)
    t.match(await hung.json(), { code: 'GATEHOUSE_STATE_STORE' })
    // The same callback again, as a reload would send it (with the handshake cookie the browser held).
    const back = await client(base).fetch(callback, { headers: { cookie } })
    t.equal(back.status, 200, 'the state is still good once Redis is back')
    t.equal((await back.json()).name, 'dev_user')
    const replay = await client(base).fetch(callback, { headers: { cookie } })
    t.equal(replay.status, 403, 'and it stays one-time')
    t.match(await replay.json(), { code: 'GATEHOUSE_ALREADY_USED' })
  })
}
