/**
 * Bad input to the code routes: each a 4xx with a code, and nothing consumed (the pending login, the enrolment,
 * the recovery codes and the code's time step all stay usable). Plus the lockout: wrong codes count per account,
 * and a user without an authenticator app gets the same answer as a wrong code.
 */
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { userId as userIdOf } from '../../../index.js'
import { MemoryTotpStore } from '../../../stores/totp/index.js'
import { oathtool, passwordLogin, readQr, secondStep, secretOf, signIn, startApp, withTotp, xsrf } from '../../helpers/totp-app.js'

const START = Date.UTC(2026, 10, 25, 12, 0, 15)
const PENDING = 'gatehouse-totp-totp-pending'
const ALICE = userIdOf('local', 'alice')

function fakeClock (t: { teardown(fn: () => unknown): void }): FakeTimers.InstalledClock {
  const clock = FakeTimers.install({ now: START, toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  return clock
}

t.test('the second step refuses bad codes and keeps the pending login and the code', async (t) => {
  const clock = fakeClock(t)
  const app = await startApp(t)
  const { c, secret, recoveryCodes } = await withTotp(app, 'alice')
  const bob = await withTotp(app, 'bob')
  clock.tick(5 * 30_000)
  t.equal((await passwordLogin(c, 'alice')).status, 401)
  const pending = c.jar.get(PENDING)

  const cases: Array<[string, Record<string, unknown>, number, string]> = [
    ['too short', { code: '12345' }, 400, 'GATEHOUSE_BAD_REQUEST'],
    ['too long', { code: '1234567' }, 400, 'GATEHOUSE_BAD_REQUEST'],
    ['non-digits', { code: '12a456' }, 400, 'GATEHOUSE_BAD_REQUEST'],
    ['a number, not text', { code: 123456 }, 400, 'GATEHOUSE_BAD_REQUEST'],
    ['nothing', {}, 400, 'GATEHOUSE_BAD_REQUEST'],
    ['previous-but-one step', { code: oathtool(secret, Date.now(), -2) }, 403, 'GATEHOUSE_CREDENTIALS'],
    ['another user\'s code', { code: oathtool(bob.secret) }, 403, 'GATEHOUSE_CREDENTIALS'],
    ['malformed recovery code', { recoveryCode: 'ABCD-EFGH' }, 400, 'GATEHOUSE_BAD_REQUEST'],
    ['another user\'s recovery code', { recoveryCode: bob.recoveryCodes[0] }, 403, 'GATEHOUSE_CREDENTIALS']
  ]
  for (const [what, body, status, code] of cases) {
    const res = await secondStep(c, body)
    t.equal(res.status, status, what)
    t.match(await res.json(), { code }, what)
    t.equal(c.jar.get('JWT'), undefined, `${what}: no session`)
    t.equal(c.jar.get(PENDING), pending, `${what}: the pending login is kept`)
  }
  const notJson = await c.fetch('/auth/totp/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[1]' })
  t.equal(notJson.status, 400)
  t.equal((await secondStep(c, { code: oathtool(secret) })).status, 200, 'the right code still signs in')
  t.equal(recoveryCodes.length, 10)
  t.same(await (await c.fetch('/auth/totp/status', { headers: xsrf(c) })).json(), { enabled: true, pending: false, recoveryCodesLeft: 10 }, 'no recovery code spent')
  t.equal((await bob.c.fetch('/auth/logout')).status, 200)
})

t.test('the second step without a pending login is refused', async (t) => {
  const app = await startApp(t)
  const c = app.client()
  const res = await secondStep(c, { code: '123456' })
  t.equal(res.status, 401)
  t.match(await res.json(), { code: 'GATEHOUSE_HANDSHAKE' })
  c.jar.cookies.set(PENDING, { name: PENDING, value: 'forged', attrs: {} })
  t.equal((await secondStep(c, { code: '123456' })).status, 401)
})

t.test('enrolment confirmed with a wrong code: refused, the enrolment waits for a right one', async (t) => {
  fakeClock(t)
  const app = await startApp(t)
  const c = app.client()
  await signIn(c, 'alice')
  const noEnrolment = await c.fetch('/auth/totp/enrol/confirm', { method: 'POST', headers: xsrf(c), json: { code: '123456' } })
  t.equal(noEnrolment.status, 409)
  t.match(await noEnrolment.json(), { code: 'GATEHOUSE_TOTP' })
  const { qr } = await (await c.fetch('/auth/totp/enrol', { method: 'POST', headers: xsrf(c), json: {} })).json() as { qr: string }
  const secret = secretOf(await readQr(qr))
  for (const code of [oathtool(secret, Date.now(), 2), '00000', 'abcdef']) {
    const res = await c.fetch('/auth/totp/enrol/confirm', { method: 'POST', headers: xsrf(c), json: { code } })
    t.ok(res.status === 400 || res.status === 403, `${code}: ${res.status}`)
    t.match(await res.json(), { code: /^GATEHOUSE_(BAD_REQUEST|CREDENTIALS)$/ })
  }
  t.same(await (await c.fetch('/auth/totp/status', { headers: xsrf(c) })).json(), { enabled: false, pending: true, recoveryCodesLeft: 0 })
  t.equal((await c.fetch('/auth/totp/enrol/confirm', { method: 'POST', headers: xsrf(c), json: { code: oathtool(secret) } })).status, 200)
})

t.test('a stored secret that does not decrypt: 409 GATEHOUSE_TOTP, not counted, nothing consumed', async (t) => {
  const clock = fakeClock(t)
  const store = new MemoryTotpStore()
  const app = await startApp(t, { store })
  const { c, secret } = await withTotp(app, 'alice')
  const entry = (await store.get(ALICE))!
  // The sealed secret with one byte of its ciphertext changed: AES-GCM refuses it.
  const parts = entry.secret.split('.')
  const ct = Buffer.from(parts[2]!, 'base64url')
  ct[0]! ^= 1
  parts[2] = ct.toString('base64url')
  await store.remove(ALICE)
  await store.enrol(ALICE, { ...entry, secret: parts.join('.') })
  await store.confirm(ALICE, parts.join('.'), [])
  clock.tick(30_000)
  t.equal((await passwordLogin(c, 'alice')).status, 401)
  const res = await secondStep(c, { code: oathtool(secret) })
  t.equal(res.status, 409)
  t.match(await res.json(), { code: 'GATEHOUSE_TOTP', error: 'authenticator secret unreadable' })
  t.ok(c.jar.get(PENDING), 'the pending login is kept')
})

t.test('an unconfirmed enrolment is no factor: its codes do not verify', async (t) => {
  fakeClock(t)
  const app = await startApp(t)
  const c = app.client()
  await signIn(c, 'alice')
  const { qr } = await (await c.fetch('/auth/totp/enrol', { method: 'POST', headers: xsrf(c), json: {} })).json() as { qr: string }
  const secret = secretOf(await readQr(qr))
  const res = await c.fetch('/auth/totp/verify', { method: 'POST', headers: xsrf(c), json: { code: oathtool(secret) } })
  t.equal(res.status, 403)
  t.match(await res.json(), { code: 'GATEHOUSE_CREDENTIALS' })
  await c.fetch('/auth/logout')
  t.equal((await passwordLogin(c, 'alice')).status, 200, 'the password alone signs in')
})

t.test('a sealed secret copied to another user does not open for them', async (t) => {
  const clock = fakeClock(t)
  const store = new MemoryTotpStore()
  const app = await startApp(t, { store })
  const alice = await withTotp(app, 'alice')
  const bob = await withTotp(app, 'bob')
  const BOB = userIdOf('local', 'bob')
  const aliceEntry = (await store.get(ALICE))!
  await store.remove(BOB)
  await store.enrol(BOB, aliceEntry)
  await store.confirm(BOB, aliceEntry.secret, [])
  clock.tick(30_000)
  t.equal((await passwordLogin(bob.c, 'bob')).status, 401)
  const res = await secondStep(bob.c, { code: oathtool(alice.secret) })
  t.equal(res.status, 409, 'bound to its user: alice\'s code does not sign bob in')
  t.match(await res.json(), { code: 'GATEHOUSE_TOTP' })
})

t.test('wrong codes lock the account out; a user without an app gets the same answer', async (t) => {
  const clock = fakeClock(t)
  const app = await startApp(t, {}, { rateLimit: { login: { max: 1000 }, failures: { perAccount: 3, perIp: 0 } } })
  const { c, secret } = await withTotp(app, 'alice')
  clock.tick(5 * 30_000)
  t.equal((await passwordLogin(c, 'alice')).status, 401)
  for (let i = 0; i < 3; i++) {
    const res = await secondStep(c, { code: oathtool(secret, Date.now(), 5) })
    t.equal(res.status, 403)
  }
  const locked = await secondStep(c, { code: oathtool(secret) })
  t.equal(locked.status, 429, 'locked: even the right code waits')
  t.ok(Number(locked.headers.get('retry-after')) > 0)
  clock.tick(2 * 60_000)
  t.equal((await secondStep(c, { code: oathtool(secret) })).status, 200, 'after the lockout the right code signs in')

  // Step-up check of a user without an authenticator app: the same 403 as a wrong code.
  const bob = app.client()
  await signIn(bob, 'bob')
  const none = await bob.fetch('/auth/totp/verify', { method: 'POST', headers: xsrf(bob), json: { code: '123456' } })
  const wrong = await c.fetch('/auth/totp/verify', { method: 'POST', headers: xsrf(c), json: { code: oathtool(secret, Date.now(), 5) } })
  t.equal(none.status, 403)
  t.same(await none.json(), await wrong.json(), 'the same body')
})

t.test('wrong recovery codes count toward the same lockout', async (t) => {
  fakeClock(t)
  const app = await startApp(t, {}, { rateLimit: { login: { max: 1000 }, failures: { perAccount: 2, perIp: 0 } } })
  const { c, recoveryCodes } = await withTotp(app, 'alice')
  t.equal((await passwordLogin(c, 'alice')).status, 401)
  for (const wrong of ['AAAA-AAAA-AAAA', 'BBBB-BBBB-BBBB']) t.equal((await secondStep(c, { recoveryCode: wrong })).status, 403)
  const locked = await secondStep(c, { recoveryCode: recoveryCodes[0] })
  t.equal(locked.status, 429)
  t.match(await locked.json(), { code: 'GATEHOUSE_RATE_LIMITED' })
  const bob = await withTotp(app, 'bob')
  t.equal((await passwordLogin(bob.c, 'bob')).status, 401)
  t.equal((await secondStep(bob.c, { recoveryCode: bob.recoveryCodes[0] })).status, 200, 'another account is not locked')
})

t.test('a replayed code on the step-up route is refused and spends nothing', async (t) => {
  const clock = fakeClock(t)
  const app = await startApp(t)
  const { c, secret } = await withTotp(app, 'alice')
  clock.tick(30_000)
  t.equal((await passwordLogin(c, 'alice')).status, 401)
  const code = oathtool(secret)
  t.equal((await secondStep(c, { code })).status, 200)
  const replay = await c.fetch('/auth/totp/verify', { method: 'POST', headers: xsrf(c), json: { code } })
  t.equal(replay.status, 403)
  t.match(await replay.json(), { code: 'GATEHOUSE_ALREADY_USED' })
})

