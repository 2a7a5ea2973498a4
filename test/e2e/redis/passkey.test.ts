/**
 * Two instances behind one URL sharing a real redis-server (state store and passkey store): options asked on one
 * are answered on the other, for adding a passkey, signing in and the second factor; a challenge or a pending login
 * spent on one is refused on the other.
 */
import t, { type Test } from 'tap'
import { client, type Client } from '../../helpers/client.js'
import { RedisServer, redisMissingReason } from '../../helpers/redis-server.js'
import { authenticator, startApp, xsrf, type LoginOptions, type PasskeyApp } from '../../helpers/passkey-app.js'

const missing = redisMissingReason()
if (missing !== undefined) {
  t.test('passkeys on two instances sharing Redis', { skip: missing }, async () => {})
} else {
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())

  async function pair (t: Test): Promise<[PasskeyApp, PasskeyApp]> {
    const shared = { store: redis.url, stateStore: redis.url, secondFactor: ['local'] }
    return [await startApp(t, shared), await startApp(t, shared)]
  }

  /** A client whose requests go to `app`, carrying the cookies of `from`. */
  const on = (app: PasskeyApp, from: Client): Client => app.client(from.jar)

  t.test('options on one instance, the answer on the other', async (t) => {
    const [a, b] = await pair(t)
    const authn = authenticator()
    const alice = a.client()
    t.equal((await alice.fetch('/auth/local/login', { method: 'POST', json: { user: 'alice', passwd: 'alice-secret' } })).status, 200)

    // Adding a passkey: options from A, answer to B.
    const opts = await (await alice.fetch('/auth/passkey/register/options', { method: 'POST', headers: xsrf(alice), json: {} })).json()
    const { credential, json } = authn.create(opts as Parameters<typeof authn.create>[0])
    const added = await on(b, alice).fetch('/auth/passkey/register', { method: 'POST', headers: xsrf(alice), json })
    t.equal(added.status, 201)
    t.same((await (await on(a, alice).fetch('/auth/passkey/credentials', { headers: xsrf(alice) })).json() as Array<{ id: string }>).map((p) => p.id), [credential.id], 'A sees what B stored')
    await alice.fetch('/auth/logout')

    // Signing in: options from B, answer to A; the same answer replayed to B is refused.
    const browser = b.client()
    const options = await (await browser.fetch('/auth/passkey/login/options', { method: 'POST', json: {} })).json() as LoginOptions
    const cookie = browser.jar.get('gatehouse-passkey-passkey-login')!
    const assertion = authn.get(options, credential)
    const signed = await on(a, browser).fetch('/auth/passkey/login', { method: 'POST', json: assertion })
    t.equal(signed.status, 200)
    t.match(await signed.json(), { name: 'alice' })
    const replay = b.client()
    replay.jar.cookies.set('gatehouse-passkey-passkey-login', { name: 'gatehouse-passkey-passkey-login', value: cookie, attrs: {} })
    const again = await replay.fetch('/auth/passkey/login', { method: 'POST', json: assertion })
    t.equal(again.status, 403)
    t.match(await again.json(), { code: 'GATEHOUSE_ALREADY_USED' })
    t.equal(replay.jar.get('JWT'), undefined)
  })

  t.test('second factor across instances: password on A, passkey options on B, answer on A, replay on B', async (t) => {
    const [a, b] = await pair(t)
    const authn = authenticator()
    const setup = a.client()
    await setup.fetch('/auth/local/login', { method: 'POST', json: { user: 'bob', passwd: 'bob-secret' } })
    const opts = await (await setup.fetch('/auth/passkey/register/options', { method: 'POST', headers: xsrf(setup), json: {} })).json()
    const { credential, json } = authn.create(opts as Parameters<typeof authn.create>[0])
    t.equal((await setup.fetch('/auth/passkey/register', { method: 'POST', headers: xsrf(setup), json })).status, 201)

    const browser = a.client()
    const pw = await browser.fetch('/auth/local/login', { method: 'POST', json: { user: 'bob', passwd: 'bob-secret' } })
    t.equal(pw.status, 401)
    t.match(await pw.json(), { code: 'GATEHOUSE_SECOND_FACTOR' })
    const pending = browser.jar.get('gatehouse-passkey-passkey-pending')!
    const options = await (await on(b, browser).fetch('/auth/passkey/login/options', { method: 'POST', json: {} })).json() as LoginOptions
    t.same(options.allowCredentials!.map((x) => x.id), [credential.id], 'B found bob\'s pending login and his passkeys')
    const done = await browser.fetch('/auth/passkey/login', { method: 'POST', json: authn.get(options, credential) })
    t.equal(done.status, 200)
    t.match(await done.json(), { name: 'bob' })

    const thief = b.client()
    thief.jar.cookies.set('gatehouse-passkey-passkey-pending', { name: 'gatehouse-passkey-passkey-pending', value: pending, attrs: {} })
    const o2 = await (await thief.fetch('/auth/passkey/login/options', { method: 'POST', json: {} })).json() as LoginOptions
    const replay = await thief.fetch('/auth/passkey/login', { method: 'POST', json: authn.get(o2, credential) })
    t.equal(replay.status, 403)
    t.match(await replay.json(), { code: 'GATEHOUSE_ALREADY_USED' })
    t.equal(thief.jar.get('JWT'), undefined)
  })
}
