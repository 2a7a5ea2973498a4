/**
 * Passkeys and the changes of factors, over HTTP with the software authenticator: adding or deleting a passkey
 * needs a fresh sign-in or the password (or another passkey's assertion) in the request; the registration is
 * finished by the session that asked for its options; a passkey assertion re-authenticates only the session it
 * was asked for, once, with user verification.
 */
import t from 'tap'
import { accountApp, addPasskey, authenticator, call, fakeClock, passkeyAssertion, PASSWORDS, signIn } from '../../helpers/account-app.js'
import type { SoftAuthenticator } from '../../helpers/authenticator.js'

const DAY = 86_400_000

t.test('a 20-day-old session adds a passkey only with the password; the registration is its own session\'s', async (t) => {
  const clock = fakeClock(t)
  const app = await accountApp(t)
  const [a, b] = [app.client(), app.client()]
  await signIn(a, 'alice')
  await signIn(b, 'alice')
  clock.tick(20 * DAY)
  const stale = await call(a, 'POST', '/auth/passkey/register/options')
  t.equal(stale.status, 401)
  t.match(await stale.json(), { code: 'GATEHOUSE_REAUTHENTICATE' })
  const authn = authenticator()
  await addPasskey(a, authn, { password: PASSWORDS.alice })
  t.equal((await (await call(a, 'GET', '/auth/passkey/credentials')).json() as unknown[]).length, 1)

  // Options asked by session b, answered with b's ceremony cookie from session a: refused.
  const opts = await call(b, 'POST', '/auth/passkey/register/options', { password: PASSWORDS.alice })
  t.equal(opts.status, 200)
  const { json } = authn.create(await opts.json() as Parameters<SoftAuthenticator['create']>[0])
  const ceremony = 'gatehouse-passkey-passkey-register'
  a.jar.cookies.set(ceremony, { ...b.jar.cookies.get(ceremony)! })
  const crossed = await call(a, 'POST', '/auth/passkey/register', json)
  t.equal(crossed.status, 403)
  t.match(await crossed.json(), { code: 'GATEHOUSE_FORBIDDEN', details: 'the passkey challenge was issued to another session' })
  t.equal((await (await call(a, 'GET', '/auth/passkey/credentials')).json() as unknown[]).length, 1, 'nothing added')
})

t.test('deleting a passkey from an old session: the password or another passkey in the request', async (t) => {
  const clock = fakeClock(t)
  const app = await accountApp(t)
  const c = app.client()
  await signIn(c, 'alice')
  const authn = authenticator()
  const first = await addPasskey(c, authn)
  const second = await addPasskey(c, authn)
  clock.tick(20 * DAY)
  const path = `/auth/passkey/credentials/${first.id}`
  const stale = await call(c, 'DELETE', path)
  t.equal(stale.status, 401)
  t.match(await stale.json(), { code: 'GATEHOUSE_REAUTHENTICATE' })
  t.equal((await call(c, 'DELETE', path, { password: 'wrong' })).status, 403)
  const deleted = await call(c, 'DELETE', path, { passkey: await passkeyAssertion(c, authn, second) })
  t.equal(deleted.status, 200)
  t.same(await deleted.json(), { status: 'deleted', id: first.id })
  t.equal((await call(c, 'DELETE', `/auth/passkey/credentials/${second.id}`, { password: PASSWORDS.alice })).status, 200)
})

t.test('a passkey assertion re-authenticates the session it was asked for, once, with user verification', async (t) => {
  const clock = fakeClock(t)
  const app = await accountApp(t)
  const [a, b] = [app.client(), app.client()]
  await signIn(a, 'alice')
  await signIn(b, 'alice')
  const authn = authenticator()
  const credential = await addPasskey(a, authn)
  clock.tick(20 * DAY)
  const enrol = async (c: typeof a, passkey: unknown): Promise<Response> => await call(c, 'POST', '/auth/totp/enrol', { passkey })

  const unasked = await enrol(a, authn.get({ challenge: 'bm90LWFza2Vk' }, credential))
  t.equal(unasked.status, 401, 'no options were asked in this session')
  t.match(await unasked.json(), { code: 'GATEHOUSE_REAUTHENTICATE', details: /no passkey confirmation was asked/ })
  const forB = await passkeyAssertion(b, authn, credential)
  t.equal((await enrol(a, forB)).status, 401, 'an assertion asked by another session')
  const options = await (await call(a, 'POST', '/auth/passkey/reauth/options')).json() as Parameters<SoftAuthenticator['get']>[0] & { userVerification: string }
  t.equal(options.userVerification, 'required')
  const noUv = await enrol(a, authn.get(options, credential, { uv: false }))
  t.equal(noUv.status, 401, 'presence alone is not a re-authentication')
  t.match(await noUv.json(), { code: 'GATEHOUSE_PASSKEY' })
  const good = await passkeyAssertion(a, authn, credential)
  t.equal((await enrol(a, good)).status, 201)
  t.equal((await enrol(a, good)).status, 401, 'each challenge once')
  const malformed = await enrol(a, { id: 'x' })
  t.equal(malformed.status, 400)
  t.match(await malformed.json(), { code: 'GATEHOUSE_BAD_REQUEST' })
})

t.test('reauth options: a cookie session of a user with a passkey', async (t) => {
  const app = await accountApp(t)
  const c = app.client()
  await signIn(c, 'alice')
  const none = await call(c, 'POST', '/auth/passkey/reauth/options')
  t.equal(none.status, 409)
  t.match(await none.json(), { code: 'GATEHOUSE_CONFLICT' })
  await addPasskey(c, authenticator())
  const bare = await app.client().fetch('/auth/passkey/reauth/options', { method: 'POST', headers: { 'x-jwt': c.jar.get('JWT')! }, json: {} })
  t.equal(bare.status, 403)
  t.equal((await app.client().fetch('/auth/passkey/reauth/options', { method: 'POST', json: {} })).status, 401)
})
