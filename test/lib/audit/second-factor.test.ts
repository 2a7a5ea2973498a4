/**
 * Audit events of the authenticator app and of step-up, produced by real requests: an app added
 * (`second_factor.added`, `recovery_codes.created`), codes confirmed or refused for step-up (`step_up.succeeded`,
 * `step_up.refused` with the factor as reason, `not_recent` from `recent()`), new recovery codes, the app removed;
 * a wrong code at the second step of a sign-in is `login.failed` with reason `totp` (`recovery_code` for a
 * recovery code), not `bad_credentials`; a passkey confirming a change is a step-up with reason `passkey`.
 */
import t from 'tap'
import { oathtool } from '../../helpers/totp-app.js'
import { accountApp, addApp, addPasskey, authenticator, call, fakeClock, passkeyAssertion, passwordLogin, signIn } from '../../helpers/account-app.js'
import { typesOf } from './app.js'

/** The one event of a list; the list itself (which matches no event) when it holds another number. */
const only = (events: unknown[]): unknown => events.length === 1 ? events[0] : events

t.test('an app added, step-ups confirmed and refused, new codes, the app removed', async (t) => {
  const clock = fakeClock(t)
  const app = await accountApp(t)
  const c = app.client()
  await signIn(c, 'alice')
  const userId = app.events[0]!.userId
  app.events.length = 0
  const { secret, recoveryCodes } = await addApp(c)
  t.same(typesOf(app.events), ['second_factor.added', 'recovery_codes.created'])
  t.match(app.events[0], { provider: 'totp', userId, reason: 'totp', outcome: 'success' })
  t.match(app.events[1], { provider: 'totp', userId, reason: 'enrolment', count: 10, outcome: 'success' })

  const steps: Array<[Record<string, unknown>, number, string, string]> = [
    [{ code: '000000' === oathtool(secret) ? '111111' : '000000' }, 403, 'step_up.refused', 'totp'],
    [{ recoveryCode: 'AAAA-BBBB-CCCC' }, 403, 'step_up.refused', 'recovery_code'],
    [{ recoveryCode: recoveryCodes[0] }, 200, 'step_up.succeeded', 'recovery_code']
  ]
  for (const [body, status, type, reason] of steps) {
    app.events.length = 0
    t.equal((await call(c, 'POST', '/auth/totp/verify', body)).status, status, JSON.stringify(body))
    t.same(typesOf(app.events), [type])
    t.match(app.events[0], { provider: 'totp', userId, reason, outcome: type === 'step_up.succeeded' ? 'success' : 'failure' })
  }
  clock.tick(30_000)
  app.events.length = 0
  t.equal((await call(c, 'POST', '/auth/totp/verify', { code: oathtool(secret) })).status, 200)
  t.match(only(app.events), { type: 'step_up.succeeded', reason: 'totp', userId })

  app.events.length = 0
  t.equal((await call(c, 'POST', '/auth/totp/recovery-codes')).status, 200)
  t.match(only(app.events), { type: 'recovery_codes.created', reason: 'replaced', count: 10, userId })

  clock.tick(6 * 60_000)
  app.events.length = 0
  t.equal((await call(c, 'POST', '/change-password')).status, 401)
  t.match(only(app.events), { type: 'step_up.refused', reason: 'not_recent', userId, outcome: 'failure' })

  clock.tick(30_000)
  app.events.length = 0
  t.equal((await call(c, 'DELETE', '/auth/totp/', { password: 'alice-secret', code: oathtool(secret) })).status, 200)
  t.same(typesOf(app.events), ['step_up.succeeded', 'second_factor.removed'])
  t.match(app.events[1], { provider: 'totp', userId, reason: 'totp', outcome: 'success' })
})

t.test('a wrong code at the second step of a sign-in is login.failed with reason totp; a wrong recovery code, recovery_code', async (t) => {
  const clock = fakeClock(t)
  const app = await accountApp(t)
  const setup = app.client()
  await signIn(setup, 'alice')
  const { secret } = await addApp(setup)
  clock.tick(30_000)
  const c = app.client()
  t.equal((await passwordLogin(c, 'alice')).status, 401)
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ code: oathtool(secret, Date.now(), 3) }, 'totp'],
    [{ recoveryCode: 'AAAA-BBBB-CCCC' }, 'recovery_code']
  ]
  for (const [body, reason] of cases) {
    app.events.length = 0
    t.equal((await c.fetch('/auth/totp/login', { method: 'POST', json: body })).status, 403)
    t.match(only(app.events), { type: 'login.failed', provider: 'totp', reason, status: 403 })
  }
})

t.test('a passkey confirming a change is a step-up with reason passkey; another user\'s passkey is refused', async (t) => {
  const clock = fakeClock(t)
  const app = await accountApp(t)
  const c = app.client()
  await signIn(c, 'alice')
  const authn = authenticator()
  const credential = await addPasskey(c, authn)
  const bob = app.client()
  await signIn(bob, 'bob')
  const bobs = await addPasskey(bob, authn)
  clock.tick(20 * 60_000)
  const userId = app.events[0]!.userId
  app.events.length = 0
  // The session's token has expired meanwhile: its refresh is an event of its own, left out here.
  const decisions = (): unknown[] => app.events.filter((e) => e.type !== 'session.refreshed')
  const foreign = await call(c, 'POST', '/auth/totp/enrol', { passkey: await passkeyAssertion(c, authn, bobs) })
  t.equal(foreign.status, 403)
  t.match(await foreign.json(), { code: 'GATEHOUSE_CREDENTIALS' })
  t.match(only(decisions()), { type: 'step_up.refused', reason: 'passkey', provider: 'passkey', userId })
  app.events.length = 0
  t.equal((await call(c, 'POST', '/auth/totp/enrol', { passkey: await passkeyAssertion(c, authn, credential) })).status, 201)
  t.match(only(decisions()), { type: 'step_up.succeeded', reason: 'passkey', provider: 'passkey', userId })
  t.equal((await call(c, 'POST', '/change-password')).status, 200, 'recent() sees the passkey in this session')
})
