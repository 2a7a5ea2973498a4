/**
 * A user who holds a passkey and an authenticator app: the password step names both (`methods`), and either
 * completes the login; a user holding only one is asked for that one.
 */
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { authPlugin, passkeyProvider, safeEqual, totpProvider } from '../../../index.js'
import { client, listen, type Client } from '../../helpers/client.js'
import { SoftAuthenticator } from '../../helpers/authenticator.js'
import { addPasskey, passkeyLogin } from '../../helpers/passkey-app.js'
import { enrol, KEY, oathtool, passwordLogin, secondStep, signIn, SECRET, URL_BASE } from '../../helpers/totp-app.js'

const USERS: Record<string, string> = { alice: 'alice-secret', bob: 'bob-secret' }

async function start (t: { teardown(fn: () => unknown): void }): Promise<() => Client> {
  const { app, base } = await listen(async (app) => {
    await app.register(authPlugin, {
      secret: () => SECRET,
      url: URL_BASE,
      rateLimit: { login: { max: 1000 } },
      providers: [{ kind: 'direct', name: 'local', checker: (user, passwd) => Object.hasOwn(USERS, user) && safeEqual(USERS[user]!, passwd) }]
    })
    await app.register(passkeyProvider, { secondFactor: ['local'] })
    await app.register(totpProvider, { encryptionKey: KEY, secondFactor: ['local'] })
    app.post('/remove-something', { preHandler: app.auth.recent({ within: '5m', factor: 'passkey' }) }, async () => ({ status: 'removed' }))
  })
  t.teardown(() => app.close())
  return () => client(base)
}

t.test('passkey and authenticator app: the password step names both, either completes', async (t) => {
  const clock = FakeTimers.install({ now: Date.UTC(2026, 10, 25, 12, 0, 15), toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const browser = await start(t)
  const c = browser()
  const authn = new SoftAuthenticator(URL_BASE)
  await signIn(c, 'alice')
  const { credential } = await addPasskey(c, authn)
  const { secret } = await enrol(c)
  await c.fetch('/auth/logout')
  clock.tick(30_000)

  const res = await passwordLogin(c, 'alice')
  t.equal(res.status, 401)
  t.same(await res.json(), {
    error: 'second factor required',
    details: 'confirm with a passkey: POST /auth/passkey/login/options, then /auth/passkey/login; or confirm with a code from the authenticator app (or a recovery code): POST /auth/totp/login',
    code: 'GATEHOUSE_SECOND_FACTOR',
    methods: ['passkey', 'totp']
  })
  t.equal(c.jar.get('JWT'), undefined)
  const pending = c.jar.get('gatehouse-passkey-passkey-pending')!
  t.ok(pending, 'a pending passkey login too')
  t.equal((await secondStep(c, { code: oathtool(secret) })).status, 200, 'the code completes it')
  // The same password login cannot be completed a second time with the passkey.
  const other = browser()
  other.jar.cookies.set('gatehouse-passkey-passkey-pending', { name: 'gatehouse-passkey-passkey-pending', value: pending, attrs: {} })
  const twice = await passkeyLogin(other, authn, credential)
  t.equal(twice.status, 403)
  t.match(await twice.json(), { code: 'GATEHOUSE_ALREADY_USED' })
  t.equal(other.jar.get('JWT'), undefined)

  await c.fetch('/auth/logout')
  t.equal((await passwordLogin(c, 'alice')).status, 401)
  const byPasskey = await passkeyLogin(c, authn, credential)
  t.equal(byPasskey.status, 200, 'the passkey completes it')
  const xsrf = { 'x-xsrf-token': c.jar.get('XSRF-TOKEN') ?? '' }
  t.equal((await c.fetch('/remove-something', { method: 'POST', headers: xsrf, json: {} })).status, 200, 'a passkey sign-in counts for recent({ factor: "passkey" })')
  clock.tick(6 * 60_000)
  const stale = await c.fetch('/remove-something', { method: 'POST', headers: xsrf, json: {} })
  t.equal(stale.status, 401)
  t.match(await stale.json(), { code: 'GATEHOUSE_STEP_UP', details: 'confirm the passkey factor again, then retry' })

  const bob = browser()
  await signIn(bob, 'bob')
  await enrol(bob)
  await bob.fetch('/auth/logout')
  const only = await passwordLogin(bob, 'bob')
  t.match(await only.json(), { methods: ['totp'] }, 'a user without a passkey is asked for a code only')
})
