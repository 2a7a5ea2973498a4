/**
 * The red-team scenario of issue 33, end to end over HTTP: a thief holds a copy of the owner's cookie session, 20
 * days old (cookie sessions refresh for 31 days and keep their sign-in time). The thief cannot add an authenticator
 * app or a passkey (neither in the cookie session nor with the token in a header), cannot pass a route behind
 * `recent()`, not even after the owner confirmed a code on another device, cannot get recovery codes or remove the
 * owner's app, and cannot end the owner's other sessions; the owner, signed in again, sees the old session in the
 * list and ends it, which ends the thief.
 */
import t from 'tap'
import { oathtool } from '../../helpers/totp-app.js'
import { accountApp, addApp, call, fakeClock, passwordLogin, sessionIdOf, signedIn, signIn, signInWithCode, xsrf } from '../../helpers/account-app.js'

const DAY = 86_400_000

t.test('a thief with a copy of a 20-day-old session bends nothing; the owner ends it from the list', async (t) => {
  const clock = fakeClock(t)
  const app = await accountApp(t)
  const owner = app.client()
  await signIn(owner, 'alice')
  const stolenId = sessionIdOf(owner)
  const thief = app.copyOf(owner)
  clock.tick(20 * DAY)
  t.ok(await signedIn(thief), 'the copy is a live session: it refreshes')
  t.equal(sessionIdOf(thief), stolenId, 'the same session')

  // Step-up: nothing confirmed in this session.
  const stepUp = await call(thief, 'POST', '/change-password')
  t.equal(stepUp.status, 401)
  t.match(await stepUp.json(), { code: 'GATEHOUSE_STEP_UP' })

  // No authenticator app, no passkey: the sign-in is 20 days old, and a header token never changes factors.
  const enrol = await call(thief, 'POST', '/auth/totp/enrol')
  t.equal(enrol.status, 401)
  t.match(await enrol.json(), { code: 'GATEHOUSE_REAUTHENTICATE' })
  const guessed = await call(thief, 'POST', '/auth/totp/enrol', { password: 'guess' })
  t.equal(guessed.status, 403, 'a wrong password')
  t.match(await guessed.json(), { code: 'GATEHOUSE_CREDENTIALS' })
  const token = thief.jar.get('JWT')!
  const bare = app.client()
  const byHeader = await bare.fetch('/auth/totp/enrol', { method: 'POST', headers: { 'x-jwt': token }, json: {} })
  t.equal(byHeader.status, 403)
  t.match(await byHeader.json(), { code: 'GATEHOUSE_FORBIDDEN' })
  const passkey = await call(thief, 'POST', '/auth/passkey/register/options')
  t.equal(passkey.status, 401)
  t.match(await passkey.json(), { code: 'GATEHOUSE_REAUTHENTICATE' })
  t.equal((await bare.fetch('/auth/passkey/register/options', { method: 'POST', headers: { 'x-jwt': token }, json: {} })).status, 403)
  t.same(await (await call(thief, 'GET', '/auth/totp/status')).json(), { enabled: false, pending: false, recoveryCodesLeft: 0 }, 'nothing added')
  t.same(await (await call(thief, 'GET', '/auth/passkey/credentials')).json(), [])

  // The owner signs in again on another device: the password alone (no app of the thief's in the way).
  const device = app.client()
  t.equal((await passwordLogin(device, 'alice')).status, 200, 'the password alone signs the owner in')
  const { secret, recoveryCodes } = await addApp(device)
  clock.tick(60_000)
  t.equal((await call(device, 'POST', '/auth/totp/verify', { code: oathtool(secret) })).status, 200, 'the owner confirms a code')
  t.equal((await call(device, 'POST', '/change-password')).status, 200, 'which opens the owner\'s session')
  const still = await call(thief, 'POST', '/change-password')
  t.equal(still.status, 401, 'and not the thief\'s')
  t.match(await still.json(), { code: 'GATEHOUSE_STEP_UP' })

  // No recovery codes, no removal of the owner's app, no guessing past the sign-in check.
  for (const [method, path] of [['POST', '/auth/totp/recovery-codes'], ['DELETE', '/auth/totp/']]) {
    for (const body of [{}, { code: '123456' }, { recoveryCode: recoveryCodes[0] }]) {
      const res = await call(thief, method, path, body)
      t.equal(res.status, 401, `${method} ${path} ${JSON.stringify(body)}`)
      t.match(await res.json(), { code: 'GATEHOUSE_REAUTHENTICATE' })
    }
  }
  t.same(await (await call(device, 'GET', '/auth/totp/status')).json(), { enabled: true, pending: false, recoveryCodesLeft: 10 }, 'the owner\'s app and codes are untouched')

  // The owner's other session stays.
  const others = await call(thief, 'DELETE', '/auth/sessions')
  t.equal(others.status, 401)
  t.match(await others.json(), { code: 'GATEHOUSE_REAUTHENTICATE' })
  const one = await call(thief, 'DELETE', `/auth/sessions/${encodeURIComponent(sessionIdOf(device))}`)
  t.equal(one.status, 401)
  t.ok(await signedIn(device), 'the owner is still signed in')

  // The owner sees the old session and ends it: the thief is out.
  const listed = await (await call(device, 'GET', '/auth/sessions')).json() as Array<{ id: string; current: boolean }>
  t.same(listed.map((s) => [s.id === stolenId, s.current]).sort(), [[false, true], [true, false]], 'the old session is listed beside the current one')
  t.equal((await call(device, 'DELETE', `/auth/sessions/${encodeURIComponent(stolenId)}`)).status, 204)
  const out = await thief.fetch('/auth/user', { headers: xsrf(thief) })
  t.equal(out.status, 401)
  t.match(await out.json(), { code: 'GATEHOUSE_SESSION_REVOKED' })
  t.ok(await signedIn(device))

  // The owner's next sign-in asks for the owner's own app.
  const next = app.client()
  clock.tick(30_000)
  await signInWithCode(next, 'alice', secret)
  t.ok(await signedIn(next))
  t.same(await (await call(next, 'GET', '/auth/passkey/credentials')).json(), [], 'no passkey of the thief\'s either')
})
