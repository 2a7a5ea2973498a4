import t from 'tap'
import { once } from 'node:events'
import { authPlugin } from '../../../auth.js'
import { RedisStateStore } from '../../../stores/state/index.js'
import { verifyProvider } from '../../../providers/email/provider.js'
import { client, listen } from '../../helpers/client.js'
import { RedisServer, redisMissingReason } from '../../helpers/redis-server.js'

const missing = redisMissingReason()
if (missing !== undefined) console.log(`# skipping verified-login Redis tests: ${missing}`)

t.test('two instances sharing Redis', { skip: missing ?? false }, async (t) => {
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())
  // A command timeout a loaded machine's slow answer does not reach (a generous bound: commands take milliseconds).
  const store = new RedisStateStore(redis.url, { commandTimeoutMs: 5000 })
  t.teardown(() => store.close())

  const outbox: string[] = []
  const sender = (_address: string, text: string): void => { outbox.push(text.slice(6)) }
  // Instance A: the plugin with a store object. Instance B: the wrapper with the same Redis by address (a store
  // the package creates and closes).
  const a = await listen(async (app) => {
    await app.register(authPlugin, { secret: () => 'shared-secret-0123456789-0123456789abcdef', url: 'http://127.0.0.1' })
    await app.register(verifyProvider, { name: 'email', template: 'token {{.Token}}', sender, stateStore: store })
  })
  const b = await listen(async (app) => {
    await app.register(authPlugin, { secret: () => 'shared-secret-0123456789-0123456789abcdef', url: 'http://127.0.0.1' })
    app.auth.addVerifProvider('email', 'token {{.Token}}', sender, { stateStore: redis.url })
  })
  t.teardown(() => a.app.close())
  t.teardown(() => b.app.close())

  async function token (): Promise<string> {
    const r = await client(a.base).fetch('/auth/email/login?user=sam&address=sam@example.com')
    t.equal(r.status, 200)
    return outbox.at(-1)!
  }

  t.test('a token consumed on one instance is refused on the other', async (t) => {
    const tk = await token()
    const first = await client(a.base).fetch(`/auth/email/login?token=${tk}`)
    t.equal(first.status, 200)
    const second = await client(b.base).fetch(`/auth/email/login?token=${tk}`)
    t.equal(second.status, 401)
    t.same(await second.json(), { error: 'unauthorized', details: 'confirmation token already used', code: 'GATEHOUSE_ALREADY_USED' })

    const tk2 = await token()
    const results = await Promise.all([a, b, a, b].map((x) => client(x.base).fetch(`/auth/email/login?token=${tk2}`)))
    t.same(results.map((r) => r.status).sort(), [200, 401, 401, 401], 'concurrent redemptions: exactly one wins')
    const codes = await Promise.all(results.filter((r) => r.status === 401).map(async (r) => (await r.json() as { code: string }).code))
    t.same(codes, Array(3).fill('GATEHOUSE_ALREADY_USED'))
  })

  t.test('Redis down: 503 JSON, the token is not consumed; back: it signs in once', async (t) => {
    const tk = await token()
    await redis.stop()
    for (const x of [a, b]) {
      const r = await client(x.base).fetch(`/auth/email/login?token=${tk}`)
      t.equal(r.status, 503)
      t.match(await r.json(), { error: 'state store unavailable', details: 'Redis did not answer', code: 'GATEHOUSE_STATE_STORE' })
      t.equal(r.headers.getSetCookie().length, 0, 'no session')
    }
    const sent = await client(a.base).fetch('/auth/email/login?user=sam&address=sam@example.com')
    t.equal(sent.status, 200, 'sending needs no store')
    await redis.start()
    if (store.client.status !== 'ready') await once(store.client, 'ready')
    const back = await client(b.base).fetch(`/auth/email/login?token=${tk}`)
    t.equal(back.status, 200, 'recovered')
    const reused = await client(a.base).fetch(`/auth/email/login?token=${tk}`)
    t.equal(reused.status, 401)
    t.equal((await reused.json() as { code: string }).code, 'GATEHOUSE_ALREADY_USED')
  })
})
