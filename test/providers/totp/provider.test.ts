/**
 * Authenticator-app codes end to end over HTTP on a fake clock: enrolment (the secret read out of the served QR
 * code by zbarimg, codes computed by oathtool), the code as a second factor of a password login, ±1 step of drift,
 * recovery codes, removal, and the step-up hook.
 */
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { parseSetCookie } from '../../helpers/client.js'
import { userId } from '../../../lib/user.js'
import { enrol, oathtool, passwordLogin, readQr, secondStep, secretOf, signIn, startApp, withTotp, xsrf } from '../../helpers/totp-app.js'

const PENDING = 'gatehouse-totp-totp-pending'
// A fixed instant in the middle of a 30-second step, so that ±1 step is exact.
const START = Date.UTC(2026, 10, 25, 12, 0, 15)

function fakeClock (t: { teardown(fn: () => unknown): void }): FakeTimers.InstalledClock {
  const clock = FakeTimers.install({ now: START, toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  return clock
}

t.test('enrolment: a 160-bit secret in an otpauth URI and an SVG QR code, confirmed by one code', async (t) => {
  fakeClock(t)
  const app = await startApp(t)
  const c = app.client()
  await signIn(c, 'alice')
  t.same(await (await c.fetch('/auth/totp/status', { headers: xsrf(c) })).json(), { enabled: false, pending: false, recoveryCodesLeft: 0 })

  const res = await c.fetch('/auth/totp/enrol', { method: 'POST', headers: xsrf(c), json: {} })
  t.equal(res.status, 201)
  const body = await res.json() as { uri: string; secret: string; qr: string; digits: number; period: number }
  t.match(body.qr, /^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/, 'the QR code is an SVG')
  const uri = await readQr(body.qr)
  t.equal(uri, body.uri, 'zbarimg reads the URI out of the served QR code')
  const u = new URL(uri)
  t.equal(u.protocol, 'otpauth:')
  t.equal(u.host, 'totp')
  t.equal(decodeURIComponent(u.pathname), '/localhost:alice')
  t.same(Object.fromEntries(u.searchParams), { issuer: 'localhost', secret: body.secret, algorithm: 'SHA1', digits: '6', period: '30' })
  t.ok(Buffer.from(body.secret.replace(/=+$/, ''), 'ascii').length * 5 >= 160, 'at least 160 bits')
  t.equal(body.secret.length, 32, '20 bytes in base32')
  t.same(await (await c.fetch('/auth/totp/status', { headers: xsrf(c) })).json(), { enabled: false, pending: true, recoveryCodesLeft: 0 }, 'not counted before a code confirms it')

  const secret = secretOf(uri)
  const confirmed = await c.fetch('/auth/totp/enrol/confirm', { method: 'POST', headers: xsrf(c), json: { code: oathtool(secret) } })
  t.equal(confirmed.status, 200)
  const { status, recoveryCodes } = await confirmed.json() as { status: string; recoveryCodes: string[] }
  t.equal(status, 'enabled')
  t.equal(recoveryCodes.length, 10)
  t.equal(new Set(recoveryCodes).size, 10)
  for (const code of recoveryCodes) t.match(code, /^[0-9A-HJKMNP-TV-Z]{4}(?:-[0-9A-HJKMNP-TV-Z]{4}){5}$/, '24 characters of 32: 120 bits each')
  t.same(await (await c.fetch('/auth/totp/status', { headers: xsrf(c) })).json(), { enabled: true, pending: false, recoveryCodesLeft: 10 })

  const again = await c.fetch('/auth/totp/enrol', { method: 'POST', headers: xsrf(c), json: {} })
  t.equal(again.status, 409, 'a second app only after removing the first')
  t.match(await again.json(), { code: 'GATEHOUSE_TOTP' })
})

t.test('enrolment needs a session (and its XSRF header)', async (t) => {
  const app = await startApp(t)
  const c = app.client()
  t.equal((await c.fetch('/auth/totp/enrol', { method: 'POST', json: {} })).status, 401)
  await signIn(c, 'alice')
  t.equal((await c.fetch('/auth/totp/enrol', { method: 'POST', json: {} })).status, 401, 'no XSRF header')
})

t.test('second factor: the password alone gives no session; the code does, once', async (t) => {
  const clock = fakeClock(t)
  const app = await startApp(t)
  const { c, secret } = await withTotp(app, 'alice')
  clock.tick(30_000) // the enrolment's code is spent: the next step's

  const res = await passwordLogin(c, 'alice')
  t.equal(res.status, 401)
  t.same(await res.json(), {
    error: 'second factor required',
    details: 'confirm with a code from the authenticator app (or a recovery code): POST /auth/totp/login',
    code: 'GATEHOUSE_SECOND_FACTOR',
    methods: ['totp']
  })
  const cookies = res.headers.getSetCookie().map(parseSetCookie)
  t.same(cookies.map((k) => k.name), [PENDING], 'the pending login only: no session cookie')
  t.match(cookies[0]!.attrs, { path: '/auth/totp/login', httponly: true, samesite: 'Strict' })
  t.equal(c.jar.get('JWT'), undefined)

  const code = oathtool(secret)
  const ok = await secondStep(c, { code })
  t.equal(ok.status, 200)
  t.match(await ok.json(), { name: 'alice' })
  t.ok(c.jar.get('JWT'), 'a session')

  // The same code again, after a new password step: refused, nothing issued.
  await c.fetch('/auth/logout')
  t.equal((await passwordLogin(c, 'alice')).status, 401)
  const replay = await secondStep(c, { code })
  t.equal(replay.status, 403)
  t.match(await replay.json(), { code: 'GATEHOUSE_ALREADY_USED' })
  t.equal(c.jar.get('JWT'), undefined)
  t.ok(c.jar.get(PENDING), 'the pending login is still there')
  clock.tick(30_000)
  t.equal((await secondStep(c, { code: oathtool(secret) })).status, 200, 'the next code signs in')
})

t.test('clock drift: the step before the current one is accepted; none ahead, none two behind', async (t) => {
  const clock = fakeClock(t)
  const app = await startApp(t)
  const { c, secret } = await withTotp(app, 'alice')
  clock.tick(5 * 30_000)
  for (const [step, status] of [[-2, 403], [2, 403], [1, 403], [-1, 200], [0, 200]] as const) {
    await c.fetch('/auth/logout')
    t.equal((await passwordLogin(c, 'alice')).status, 401)
    const res = await secondStep(c, { code: oathtool(secret, Date.now(), step) })
    t.equal(res.status, status, `step ${step}`)
    if (status === 403) t.match(await res.json(), { code: 'GATEHOUSE_CREDENTIALS', details: 'incorrect code' })
  }
})

t.test('two parallel completions of one pending login give one session', async (t) => {
  const clock = fakeClock(t)
  const app = await startApp(t)
  const { c, secret } = await withTotp(app, 'alice')
  clock.tick(30_000)
  t.equal((await passwordLogin(c, 'alice')).status, 401)
  const [a, b] = await Promise.all([secondStep(c, { code: oathtool(secret) }), secondStep(c, { code: oathtool(secret, Date.now(), -1) })])
  t.same([a.status, b.status].sort(), [200, 403])
})

t.test('recovery codes: each once, says how many are left, regenerating replaces all', async (t) => {
  const clock = fakeClock(t)
  const app = await startApp(t)
  const { c, secret, recoveryCodes } = await withTotp(app, 'alice')
  t.equal((await passwordLogin(c, 'alice')).status, 401)
  const res = await secondStep(c, { recoveryCode: recoveryCodes[3]!.toLowerCase().replace(/-/g, ' ') })
  t.equal(res.status, 200)
  t.equal(res.headers.get('gatehouse-recovery-codes-left'), '9')
  t.same(await (await c.fetch('/auth/totp/status', { headers: xsrf(c) })).json(), { enabled: true, pending: false, recoveryCodesLeft: 9 })

  await c.fetch('/auth/logout')
  t.equal((await passwordLogin(c, 'alice')).status, 401)
  const twice = await secondStep(c, { recoveryCode: recoveryCodes[3] })
  t.equal(twice.status, 403)
  t.match(await twice.json(), { code: 'GATEHOUSE_CREDENTIALS', details: 'incorrect recovery code' })

  t.equal((await secondStep(c, { recoveryCode: recoveryCodes[4] })).status, 200)
  clock.tick(6 * 60_000) // the sign-in is no longer recent
  const stale = await c.fetch('/auth/totp/recovery-codes', { method: 'POST', headers: xsrf(c), json: {} })
  t.equal(stale.status, 401)
  t.match(await stale.json(), { code: 'GATEHOUSE_REAUTHENTICATE' }, 'the sign-in is not fresh: the password is asked')
  const noCode = await c.fetch('/auth/totp/recovery-codes', { method: 'POST', headers: xsrf(c), json: { password: 'alice-secret' } })
  t.equal(noCode.status, 401)
  t.match(await noCode.json(), { code: 'GATEHOUSE_STEP_UP' }, 'and a code, the factor not confirmed recently in this session')
  const fresh = await c.fetch('/auth/totp/recovery-codes', { method: 'POST', headers: xsrf(c), json: { password: 'alice-secret', code: oathtool(secret) } })
  t.equal(fresh.status, 200)
  const { recoveryCodes: next } = await fresh.json() as { recoveryCodes: string[] }
  t.equal(next.length, 10)
  await c.fetch('/auth/logout')
  t.equal((await passwordLogin(c, 'alice')).status, 401)
  t.equal((await secondStep(c, { recoveryCode: recoveryCodes[5] })).status, 403, 'an old code is gone')
  t.equal((await secondStep(c, { recoveryCode: next[0] })).status, 200, 'a new one works')
})

t.test('removal needs the password (or a fresh sign-in) and a fresh code (or a recent sign-in with one); then the password alone signs in', async (t) => {
  const clock = fakeClock(t)
  const app = await startApp(t)
  const { c, secret } = await withTotp(app, 'alice')
  clock.tick(6 * 60_000)
  await signInWithCode(c, secret)
  clock.tick(6 * 60_000)
  const stale = await c.fetch('/auth/totp/', { method: 'DELETE', headers: xsrf(c), json: {} })
  t.equal(stale.status, 401)
  t.match(await stale.json(), { code: 'GATEHOUSE_REAUTHENTICATE' })
  const password = 'alice-secret'
  const noCode = await c.fetch('/auth/totp/', { method: 'DELETE', headers: xsrf(c), json: { password } })
  t.equal(noCode.status, 401)
  t.match(await noCode.json(), { code: 'GATEHOUSE_STEP_UP' })
  const wrong = await c.fetch('/auth/totp/', { method: 'DELETE', headers: xsrf(c), json: { password, code: oathtool(secret, Date.now(), 3) } })
  t.equal(wrong.status, 403)
  t.same(await (await c.fetch('/auth/totp/status', { headers: xsrf(c) })).json(), { enabled: true, pending: false, recoveryCodesLeft: 10 }, 'nothing removed')
  const removed = await c.fetch('/auth/totp/', { method: 'DELETE', headers: xsrf(c), json: { password, code: oathtool(secret) } })
  t.equal(removed.status, 200)
  await c.fetch('/auth/logout')
  t.equal((await passwordLogin(c, 'alice')).status, 200, 'no second factor any more')

  // Right after a sign-in with a code, no code is asked again.
  clock.tick(30_000)
  const again = await enrol(c)
  await c.fetch('/auth/logout')
  clock.tick(30_000)
  await signInWithCode(c, again.secret)
  t.equal((await c.fetch('/auth/totp/', { method: 'DELETE', headers: xsrf(c), json: {} })).status, 200)
})

t.test('step-up: fastify.auth.recent answers 401 GATEHOUSE_STEP_UP until a code is confirmed', async (t) => {
  const clock = fakeClock(t)
  const app = await startApp(t)
  const anon = app.client()
  const none = await anon.fetch('/change-password', { method: 'POST', json: {} })
  t.equal(none.status, 401)
  t.match(await none.json(), { code: 'GATEHOUSE_UNAUTHORIZED' })

  const { c, secret } = await withTotp(app, 'alice')
  clock.tick(6 * 60_000)
  await signInWithCode(c, secret)
  t.equal((await c.fetch('/change-password', { method: 'POST', headers: xsrf(c), json: {} })).status, 200, 'the sign-in with a code is recent')
  clock.tick(5 * 60_000 + 1000)
  const stale = await c.fetch('/change-password', { method: 'POST', headers: xsrf(c), json: {} })
  t.equal(stale.status, 401)
  t.same(await stale.json(), { error: 'second factor required', details: 'confirm a second factor again, then retry', code: 'GATEHOUSE_STEP_UP' })
  t.equal(stale.headers.get('cache-control'), 'no-store')
  const verified = await c.fetch('/auth/totp/verify', { method: 'POST', headers: xsrf(c), json: { code: oathtool(secret) } })
  t.equal(verified.status, 200)
  t.equal((await c.fetch('/change-password', { method: 'POST', headers: xsrf(c), json: {} })).status, 200)

  // A user who signed in with the password alone (no app) is asked too.
  const bob = app.client()
  await signIn(bob, 'bob')
  t.equal((await bob.fetch('/change-password', { method: 'POST', headers: xsrf(bob), json: {} })).status, 401)
})

t.test('recent() options are checked', async (t) => {
  const app = await startApp(t)
  t.throws(() => app.app.auth.recent({} as never), { option: 'recent.within' })
  t.throws(() => app.app.auth.recent({ within: '2d' }), { option: 'recent.within' })
  t.throws(() => app.app.auth.recent({ within: '5m', extra: 1 } as never), { code: 'GATEHOUSE_OPTION' })
})

async function signInWithCode (c: ReturnType<Awaited<ReturnType<typeof startApp>>['client']>, secret: string): Promise<void> {
  await c.fetch('/auth/logout')
  const pw = await passwordLogin(c, 'alice')
  if (pw.status !== 401) throw new Error(`password step: ${pw.status}`)
  const res = await secondStep(c, { code: oathtool(secret) })
  if (res.status !== 200) throw new Error(`code step: ${res.status} ${await res.text()}`)
}

t.test('the provider as an entry of the root\'s providers list ({ kind: \'totp\' })', async (t) => {
  fakeClock(t)
  const { listen, client } = await import('../../helpers/client.js')
  const { authPlugin } = await import('../../../index.js')
  const { KEY, SECRET } = await import('../../helpers/totp-app.js')
  const { app, base } = await listen(async (app) => {
    await app.register(authPlugin, {
      secret: () => SECRET,
      url: 'http://localhost:8080',
      providers: [{ kind: 'direct', name: 'local', checker: (user, passwd) => passwd === `${user}-secret` }, { kind: 'totp', encryptionKey: KEY, secondFactor: ['local'] }]
    })
  })
  t.teardown(() => app.close())
  const c = client(base)
  t.same(await (await c.fetch('/auth/list')).json(), ['local', 'totp'])
  await signIn(c, 'alice')
  await enrol(c)
  await c.fetch('/auth/logout')
  t.match(await (await passwordLogin(c, 'alice')).json(), { code: 'GATEHOUSE_SECOND_FACTOR', methods: ['totp'] })
})

t.test('second factor: a password answered 401 completes no login behind the answer (no session issued or listed)', async (t) => {
  const clock = fakeClock(t)
  const events: string[] = []
  const app = await startApp(t, {}, { onEvent: (e) => { events.push(e.type) } })
  const { c } = await withTotp(app, 'alice')
  clock.tick(30_000)
  const before = await app.app.auth.listSessions(userId('local', 'alice'))
  events.length = 0
  const res = await passwordLogin(c, 'alice')
  t.equal(res.status, 401)
  t.same(events, ['login.second_factor_required'], 'the one event: no login.succeeded behind the 401')
  const after = await app.app.auth.listSessions(userId('local', 'alice'))
  t.equal(after.length, before.length, 'no session listed for the pending login')
})
