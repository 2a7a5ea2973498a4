/**
 * Step-up belongs to the session that did it (ASVS 5.0 7.5.3), over HTTP: a code confirmed on one device opens
 * `recent()`, new recovery codes and removal for that session only, not for the user's other sessions; a sign-in
 * with a code counts for the session it creates; another user's code confirms nothing; a basic-auth user has no
 * session to confirm a factor in.
 */
import t from 'tap'
import { oathtool } from '../../helpers/totp-app.js'
import { accountApp, addApp, call, fakeClock, PASSWORDS, signIn, signInWithCode } from '../../helpers/account-app.js'

t.test('a code confirmed on one device opens nothing for the user\'s other session', async (t) => {
  const clock = fakeClock(t)
  const app = await accountApp(t)
  const setup = app.client()
  await signIn(setup, 'alice')
  const { secret } = await addApp(setup)
  const [a, b] = [app.client(), app.client()]
  clock.tick(30_000)
  await signInWithCode(a, 'alice', secret)
  clock.tick(30_000)
  await signInWithCode(b, 'alice', secret)
  t.equal((await call(b, 'POST', '/change-password')).status, 200, 'a sign-in with a code is a confirmation in its own session')
  clock.tick(6 * 60_000)
  t.equal((await call(a, 'POST', '/auth/totp/verify', { code: oathtool(secret) })).status, 200)
  t.equal((await call(a, 'POST', '/change-password')).status, 200, 'the session that confirmed')
  const other = await call(b, 'POST', '/change-password')
  t.equal(other.status, 401, 'not the other one')
  t.match(await other.json(), { code: 'GATEHOUSE_STEP_UP' })
  for (const [method, path] of [['POST', '/auth/totp/recovery-codes'], ['DELETE', '/auth/totp/']]) {
    const res = await call(b, method, path, { password: PASSWORDS.alice })
    t.equal(res.status, 401, `${method} ${path}: the password alone does not stand for the second factor`)
    t.match(await res.json(), { code: 'GATEHOUSE_STEP_UP' })
  }
  const passed = await call(a, 'POST', '/auth/totp/recovery-codes', { password: PASSWORDS.alice })
  t.equal(passed.status, 200, 'the session that confirmed gets new codes (with the password: its sign-in is older than 5 minutes)')
  t.same(await (await call(b, 'GET', '/auth/totp/status')).json(), { enabled: true, pending: false, recoveryCodesLeft: 10 })
})

t.test('step-up with another user\'s code, or a recovery code spent already, confirms nothing', async (t) => {
  const clock = fakeClock(t)
  const app = await accountApp(t)
  const alice = app.client()
  const bob = app.client()
  await signIn(alice, 'alice')
  await signIn(bob, 'bob')
  const { recoveryCodes } = await addApp(alice)
  const { secret: bobs } = await addApp(bob)
  clock.tick(30_000)
  const foreign = await call(alice, 'POST', '/auth/totp/verify', { code: oathtool(bobs) })
  t.equal(foreign.status, 403)
  t.match(await foreign.json(), { code: 'GATEHOUSE_CREDENTIALS', details: 'incorrect code' })
  t.equal((await call(alice, 'POST', '/change-password')).status, 401, 'nothing recorded')
  t.equal((await call(bob, 'POST', '/auth/totp/verify', { code: oathtool(bobs) })).status, 200, 'bob\'s code is still his to use')

  const spent = await call(alice, 'POST', '/auth/totp/verify', { recoveryCode: recoveryCodes[0] })
  t.equal(spent.status, 200)
  t.same(await spent.json(), { status: 'confirmed', factor: 'recovery' })
  t.equal((await call(alice, 'POST', '/change-password')).status, 200)
  clock.tick(6 * 60_000)
  const again = await call(alice, 'POST', '/auth/totp/verify', { recoveryCode: recoveryCodes[0] })
  t.equal(again.status, 403, 'a recovery code is spent once')
  t.equal((await call(alice, 'POST', '/change-password')).status, 401)
  t.same(await (await call(alice, 'GET', '/auth/totp/status')).json(), { enabled: true, pending: false, recoveryCodesLeft: 9 })
  const none = await call(alice, 'POST', '/auth/totp/verify', {})
  t.equal(none.status, 400)
  t.match(await none.json(), { code: 'GATEHOUSE_BAD_REQUEST' })
})

t.test('a basic-auth user has no session to confirm a factor in', async (t) => {
  fakeClock(t)
  const app = await accountApp(t, { basicAuth: { adminPasswd: 'admin-secret-0123456789' } })
  const basic = { authorization: `Basic ${Buffer.from('admin:admin-secret-0123456789').toString('base64')}` }
  const res = await app.client().fetch('/change-password', { method: 'POST', headers: basic, json: {} })
  t.equal(res.status, 401)
  t.match(await res.json(), { code: 'GATEHOUSE_STEP_UP' })
  const withCookie = await app.client().fetch('/change-password', { method: 'POST', headers: { ...basic, cookie: 'JWT=not-a-token; XSRF-TOKEN=x' }, json: {} })
  t.equal(withCookie.status, 401, 'beside a session cookie that does not verify')
  t.same(await withCookie.json(), { error: 'second factor required', details: 'confirm a second factor again, then retry', code: 'GATEHOUSE_STEP_UP' })
})
