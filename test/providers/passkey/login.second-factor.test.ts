/**
 * Passkeys as a second factor of the direct provider `local` (opt-in with `secondFactor: ['local']`): a right
 * password of a user with a passkey yields a pending login (no session) that only that user's passkey completes,
 * once; users without a passkey sign in as before; without the option nothing changes.
 */
import t, { type Test } from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { MemoryPasskeyStore } from '../../../stores/index.js'
import { parseSetCookie, type Client } from '../../helpers/client.js'
import { addPasskey, authenticator, loginOptions, passwordLogin, passkeyLogin, signIn, startApp, withPasskey, xsrf } from '../../helpers/passkey-app.js'

const PENDING = 'gatehouse-passkey-passkey-pending'

async function noSession (t: Test, c: Client): Promise<void> {
  t.equal(c.jar.get('JWT'), undefined, 'no session cookie')
  t.equal((await c.fetch('/auth/user', { headers: xsrf(c) })).status, 401, 'not signed in')
}

t.test('a password login of a user with a passkey waits for the passkey; the passkey completes it', async (t) => {
  const app = await startApp(t, { secondFactor: ['local'] })
  const { c, authn, credential } = await withPasskey(app, 'alice')

  const res = await passwordLogin(c, 'alice', undefined, '?session=1&from=http://localhost:8080/home')
  t.equal(res.status, 401)
  t.same(await res.json(), {
    error: 'second factor required',
    details: 'confirm with a passkey: POST /auth/passkey/login/options, then /auth/passkey/login',
    code: 'GATEHOUSE_SECOND_FACTOR',
    methods: ['passkey']
  })
  t.equal(res.headers.get('cache-control'), 'no-store')
  const cookies = res.headers.getSetCookie().map(parseSetCookie)
  t.same(cookies.map((k) => k.name), [PENDING], 'the pending login only: no session cookie')
  t.match(cookies[0]!.attrs, { path: '/auth/passkey/login', httponly: true, samesite: 'Strict', 'max-age': '300' })
  await noSession(t, c)

  // The pending token is not a session, whichever way it is presented.
  const pending = c.jar.get(PENDING)!
  t.equal((await c.fetch('/auth/user', { headers: { 'x-jwt': pending } })).status, 401)
  t.equal((await c.fetch(`/auth/user?token=${pending}`)).status, 401)

  const options = await loginOptions(c)
  t.same(options.allowCredentials!.map((a) => a.id), [credential.id], 'only this user\'s passkeys are asked for')
  t.equal(options.userVerification, 'preferred', 'the password was the knowledge factor')
  const done = await c.fetch('/auth/passkey/login', { method: 'POST', json: authn.get(options, credential) })
  t.equal(done.status, 303, 'the password login\'s from is kept')
  t.equal(done.headers.get('location'), 'http://localhost:8080/home')
  const jwt = done.headers.getSetCookie().map(parseSetCookie).find((k) => k.name === 'JWT')!
  t.equal(jwt.attrs['max-age'], undefined, 'and its session=1')
  t.equal(c.jar.get(PENDING), undefined, 'the pending cookie is cleared')
  t.match(await (await c.fetch('/auth/user', { headers: xsrf(c) })).json(), { name: 'alice' })
})

t.test('users without a passkey sign in with the password alone; providers not named are not affected', async (t) => {
  const { client } = await startApp(t, { secondFactor: ['local'] })
  const c = client()
  const res = await passwordLogin(c, 'bob')
  t.equal(res.status, 200)
  t.ok(c.jar.get('JWT'))
})

t.test('without secondFactor a passkey changes nothing for password logins', async (t) => {
  const { c } = await withPasskey(await startApp(t), 'alice')
  const res = await passwordLogin(c, 'alice')
  t.equal(res.status, 200)
})

t.test('a wrong password never reaches the second factor', async (t) => {
  const { c } = await withPasskey(await startApp(t, { secondFactor: ['local'] }), 'alice')
  const res = await passwordLogin(c, 'alice', 'wrong')
  t.equal(res.status, 403)
  t.match(await res.json(), { code: 'GATEHOUSE_CREDENTIALS' })
  t.same(res.headers.getSetCookie(), [], 'no pending login')
})

t.test('the pending login is completed once, and only by that user\'s passkey', async (t) => {
  const store = new MemoryPasskeyStore()
  const { client } = await startApp(t, { secondFactor: ['local'], store })
  const alice = client()
  const bob = client()
  const authn = authenticator()
  await signIn(alice, 'alice')
  await signIn(bob, 'bob')
  const aliceKey = (await addPasskey(alice, authn)).credential
  const bobKey = (await addPasskey(bob, authn)).credential
  await bob.fetch('/auth/logout')

  t.equal((await passwordLogin(bob, 'bob')).status, 401)
  // bob's pending login answered with alice's passkey (a client that ignores allowCredentials).
  const wrong = await passkeyLogin(bob, authn, aliceKey)
  t.equal(wrong.status, 403)
  t.match(await wrong.json(), { code: 'GATEHOUSE_CREDENTIALS' })
  await noSession(t, bob)
  t.equal((await store.get(aliceKey.id))?.counter, 0, 'alice\'s passkey was not used')

  // The pending login survived the refused passkey (it was not spent); bob's own completes it.
  const pending = bob.jar.get(PENDING)!
  const ok = await passkeyLogin(bob, authn, bobKey)
  t.equal(ok.status, 200)
  t.match(await ok.json(), { name: 'bob' })

  // Replaying the spent pending login in a fresh browser.
  const thief = client()
  thief.jar.cookies.set(PENDING, { name: PENDING, value: pending, attrs: {} })
  const replay = await passkeyLogin(thief, authn, bobKey)
  t.equal(replay.status, 403)
  t.match(await replay.json(), { code: 'GATEHOUSE_ALREADY_USED' })
  await noSession(t, thief)
})

t.test('a pending login expires; the options then fall back to a normal sign-in', async (t) => {
  const app = await startApp(t, { secondFactor: ['local'], pendingTtl: '1s' })
  const { c } = await withPasskey(app, 'alice')
  t.equal((await passwordLogin(c, 'alice')).status, 401)
  const pending = c.jar.get(PENDING)!
  // Only the clock moves (tokens count whole seconds: two seconds are past any boundary).
  const clock = FakeTimers.install({ now: Date.now(), toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  clock.tick(2_000)
  const options = await loginOptions(c)
  t.equal(options.allowCredentials, undefined, 'an expired pending login is ignored: discoverable options')
  t.equal(c.jar.get(PENDING), pending, 'the cookie itself was not touched')
})

t.test('a pending login is not issued for an audience the app refuses', async (t) => {
  const { client } = await startApp(t, { secondFactor: ['local'] }, { audiences: ['site-a'] })
  const c = client()
  await passwordLogin(c, 'alice', undefined, '?aud=site-a')
  await addPasskey(c, authenticator())
  await c.fetch('/auth/logout')
  const res = await passwordLogin(c, 'alice', undefined, '?aud=site-b')
  t.equal(res.status, 403)
  t.match(await res.json(), { code: 'GATEHOUSE_FORBIDDEN' })
  t.same(res.headers.getSetCookie(), [], 'no pending login')
})
