/**
 * Changing factors needs a fresh sign-in (ASVS 5.0 7.5.1), over HTTP: enrolling an authenticator app is not a
 * step-up; a cookie session signed in longer ago than `reauthentication.within` adds no app until the password
 * comes with the request; a header token never does; the enrolment belongs to the session that began it; the
 * options are checked.
 */
import t from 'tap'
import Fastify from 'fastify'
import { authPlugin, userId } from '../../../index.js'
import { oathtool } from '../../helpers/totp-app.js'
import { accountApp, addApp, call, fakeClock, passwordLogin, PASSWORDS, signIn } from '../../helpers/account-app.js'
import { signIn as sessionOf } from '../../../testing.js'
import { injectFetch } from '../../helpers/app.js'
import type { FastifyInstance } from 'fastify'

const DAY = 86_400_000

/** A cookie session made by the app itself (no login) for `user`, as a browser would send it. */
async function signInAs (app: FastifyInstance, user: { name: string; id: string }): Promise<{ fetch: (path: string, init: { method: string; headers: Record<string, string>; json: unknown }) => Promise<Response>; xsrf: Record<string, string> }> {
  const { cookies, headers } = await sessionOf(app, user)
  const send = injectFetch(app)
  const cookie = Object.entries(cookies).map(([k, v]) => `${k}=${v}`).join('; ')
  return {
    xsrf: { ...headers },
    fetch: async (path, init) => await send(path, { method: init.method, headers: { ...init.headers, cookie, 'content-type': 'application/json' }, body: JSON.stringify(init.json) })
  }
}

t.test('enrolling an app is not a step-up: recent() still asks after the enrolment\'s code', async (t) => {
  fakeClock(t)
  const app = await accountApp(t)
  const c = app.client()
  await signIn(c, 'alice')
  t.equal((await call(c, 'POST', '/change-password')).status, 401)
  await addApp(c)
  const after = await call(c, 'POST', '/change-password')
  t.equal(after.status, 401, 'the code that confirmed the new app confirmed nothing about the user')
  t.match(await after.json(), { code: 'GATEHOUSE_STEP_UP' })
})

t.test('a 20-day-old cookie session adds an app only with the password in the request', async (t) => {
  const clock = fakeClock(t)
  const app = await accountApp(t)
  const c = app.client()
  await signIn(c, 'alice')
  clock.tick(20 * DAY)
  const stale = await call(c, 'POST', '/auth/totp/enrol')
  t.equal(stale.status, 401)
  t.same(await stale.json(), {
    error: 're-authentication required',
    details: 'this session signed in too long ago for this change: sign in again, or send the password (`password`) or a passkey assertion (`passkey`) with this request',
    code: 'GATEHOUSE_REAUTHENTICATE'
  })
  for (const [password, status, code] of [['wrong', 403, 'GATEHOUSE_CREDENTIALS'], ['', 400, 'GATEHOUSE_BAD_REQUEST'], [['a'], 400, 'GATEHOUSE_BAD_REQUEST'], ['x'.repeat(5000), 400, 'GATEHOUSE_BAD_REQUEST']] as const) {
    const res = await call(c, 'POST', '/auth/totp/enrol', { password })
    t.equal(res.status, status, `password ${JSON.stringify(password).slice(0, 20)}`)
    t.match(await res.json(), { code })
  }
  t.same(await (await call(c, 'GET', '/auth/totp/status')).json(), { enabled: false, pending: false, recoveryCodesLeft: 0 }, 'nothing begun')
  const { secret } = await addApp(c, { password: PASSWORDS.alice })
  t.match(secret, /^[A-Z2-7]{32}$/, 'the password in the request re-authenticates')
  t.same(await (await call(c, 'GET', '/auth/totp/status')).json(), { enabled: true, pending: false, recoveryCodesLeft: 10 })
})

t.test('within `reauthentication.within` of the sign-in, no password is asked; the window is an option', async (t) => {
  const clock = fakeClock(t)
  const app = await accountApp(t, { reauthentication: { within: '1m' } })
  const c = app.client()
  await signIn(c, 'alice')
  clock.tick(59_000)
  t.equal((await call(c, 'POST', '/auth/totp/enrol')).status, 201, '59 s after the sign-in')
  clock.tick(2_000)
  t.equal((await call(c, 'POST', '/auth/totp/enrol')).status, 401, '61 s after')
})

t.test('a header or query token never changes factors, fresh as it may be', async (t) => {
  fakeClock(t)
  const app = await accountApp(t, { tokenSources: { query: true } })
  const c = app.client()
  await signIn(c, 'alice')
  const token = c.jar.get('JWT')!
  const bare = app.client()
  for (const [path, init] of [
    ['/auth/totp/enrol', { method: 'POST', headers: { 'x-jwt': token }, json: {} }],
    [`/auth/totp/enrol?token=${token}`, { method: 'POST', json: {} }],
    ['/auth/passkey/register/options', { method: 'POST', headers: { 'x-jwt': token }, json: {} }],
    ['/auth/sessions', { method: 'DELETE', headers: { 'x-jwt': token }, json: {} }]
  ] as const) {
    const res = await bare.fetch(path, init)
    t.equal(res.status, 403, path.slice(0, 30))
    t.match(await res.json(), { code: 'GATEHOUSE_FORBIDDEN', details: /never with a token in a header or URL/ })
  }
  t.same(await (await call(c, 'GET', '/auth/totp/status')).json(), { enabled: false, pending: false, recoveryCodesLeft: 0 })
})

t.test('the enrolment is the session\'s that began it: confirmed there only, and no other session begins one meanwhile', async (t) => {
  const clock = fakeClock(t)
  const app = await accountApp(t)
  const a = app.client()
  const b = app.client()
  await signIn(a, 'alice')
  await signIn(b, 'alice')
  const begun = await call(a, 'POST', '/auth/totp/enrol')
  t.equal(begun.status, 201)
  const { secret } = await begun.json() as { secret: string }
  const second = await call(b, 'POST', '/auth/totp/enrol')
  t.equal(second.status, 409, 'a second enrolment while one is pending')
  t.match(await second.json(), { code: 'GATEHOUSE_TOTP', error: 'enrolment in progress' })
  const elsewhere = await call(b, 'POST', '/auth/totp/enrol/confirm', { code: oathtool(secret) })
  t.equal(elsewhere.status, 409, 'another session cannot confirm it')
  t.match(await elsewhere.json(), { code: 'GATEHOUSE_TOTP' })
  const again = await call(a, 'POST', '/auth/totp/enrol')
  t.equal(again.status, 201, 'the session that began it may begin again (a new secret)')
  const { secret: replaced } = await again.json() as { secret: string }
  t.not(replaced, secret)
  t.equal((await call(a, 'POST', '/auth/totp/enrol/confirm', { code: oathtool(secret) })).status, 403, 'the replaced secret\'s code is refused')
  clock.tick(30_000)
  t.equal((await call(a, 'POST', '/auth/totp/enrol/confirm', { code: oathtool(replaced) })).status, 200)
  t.same(await (await call(b, 'GET', '/auth/totp/status')).json(), { enabled: true, pending: false, recoveryCodesLeft: 10 })
})

t.test('an enrolment left waiting expires after 10 minutes: then another session may begin one', async (t) => {
  const clock = fakeClock(t)
  const app = await accountApp(t, { reauthentication: { within: '1h' } })
  const a = app.client()
  const b = app.client()
  await signIn(a, 'alice')
  await signIn(b, 'alice')
  const { secret } = await (await call(a, 'POST', '/auth/totp/enrol')).json() as { secret: string }
  clock.tick(10 * 60_000 + 1)
  t.equal((await call(a, 'POST', '/auth/totp/enrol/confirm', { code: oathtool(secret) })).status, 409, 'too late to confirm')
  t.equal((await call(b, 'POST', '/auth/totp/enrol')).status, 201)
})

t.test('a password re-authenticates only a user of the provider that holds it, and wrong ones count toward its lockout', async (t) => {
  const clock = fakeClock(t)
  const app = await accountApp(t, { rateLimit: { failures: { perAccount: 2, perIp: 0 } } })
  // A session of another provider's "alice" (an OAuth2 account, say): local alice's password is not hers.
  const other = await signInAs(app.app, { name: 'alice', id: 'github_1234' })
  // And a session the app made for local bob's account under alice's name: alice's password is not bob's.
  const renamed = await signInAs(app.app, { name: 'alice', id: userId('local', 'bob') })
  const c = app.client()
  await signIn(c, 'alice')
  clock.tick(20 * 60_000)
  const foreign = await other.fetch('/auth/totp/enrol', { method: 'POST', headers: other.xsrf, json: { password: PASSWORDS.alice } })
  t.equal(foreign.status, 401)
  t.match(await foreign.json(), { code: 'GATEHOUSE_REAUTHENTICATE', details: /this account has no password here/ })
  const mismatch = await renamed.fetch('/auth/totp/enrol', { method: 'POST', headers: renamed.xsrf, json: { password: PASSWORDS.alice } })
  t.equal(mismatch.status, 403)
  t.match(await mismatch.json(), { code: 'GATEHOUSE_CREDENTIALS' })
  for (let i = 0; i < 2; i++) t.equal((await call(c, 'POST', '/auth/totp/enrol', { password: 'guess' })).status, 403)
  const locked = await call(c, 'POST', '/auth/totp/enrol', { password: PASSWORDS.alice })
  t.equal(locked.status, 429, 'the account is locked, as after wrong passwords at the sign-in')
  t.equal((await passwordLogin(app.client(), 'alice')).status, 429, 'the sign-in too: one lockout')
})

t.test('reauthentication options are checked at registration', async (t) => {
  const cases: Array<[unknown, string]> = [
    [{ within: 0 }, 'reauthentication.within'],
    [{ within: '2h' }, 'reauthentication.within'],
    [{ within: 'soon' }, 'reauthentication.within'],
    [{ otherSessions: 'yes' }, 'reauthentication.otherSessions'],
    [{ other: true }, 'reauthentication'],
    ['5m', 'reauthentication']
  ]
  for (const [value, option] of cases) {
    const app = Fastify()
    app.register(authPlugin, { secret: () => 'x'.repeat(32), url: 'http://localhost', reauthentication: value as never })
    await t.rejects(app.ready(), { code: 'GATEHOUSE_OPTION', option }, JSON.stringify(value))
    await app.close()
  }
})
