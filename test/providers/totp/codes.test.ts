/**
 * How long a code lives and how many can be tried, over HTTP on a fake clock: the previous step is accepted for
 * drift, none ahead and none older; no step at or below the last accepted one is accepted again (high-water mark);
 * and the provider's own caps of wrong codes hold with `rateLimit: false` or no account lockout: a few per pending
 * sign-in, 100 in a row per account (NIST SP 800-63B 5.2.2), a burst in parallel included.
 */
import t from 'tap'
import { oathtool } from '../../helpers/totp-app.js'
import { accountApp, addApp, call, fakeClock, passwordLogin, signIn, type AccountApp } from '../../helpers/account-app.js'
import type { Client } from '../../helpers/client.js'

const PENDING = 'gatehouse-totp-totp-pending'

async function aliceWithApp (app: AccountApp): Promise<{ c: Client; secret: string; recoveryCodes: string[] }> {
  const c = app.client()
  await signIn(c, 'alice')
  return { c, ...await addApp(c) }
}

/** A code that is wrong for `secret` now and the step before (computed once: each oathtool run is a process). */
function wrongCode (secret: string): string {
  const taken = new Set([oathtool(secret), oathtool(secret, Date.now(), -1)])
  let n = 0
  while (taken.has(String(n).padStart(6, '0'))) n++
  return String(n).padStart(6, '0')
}

const verify = async (c: Client, code: string): Promise<number> => (await call(c, 'POST', '/auth/totp/verify', { code })).status

t.test('a code lives two steps at most: the previous step for drift, none ahead, none older', async (t) => {
  const clock = fakeClock(t)
  const app = await accountApp(t)
  const { c, secret } = await aliceWithApp(app)
  clock.tick(5 * 30_000)
  const shown = oathtool(secret)
  t.equal(await verify(c, oathtool(secret, Date.now(), 1)), 403, 'the next step\'s code is not accepted yet')
  t.equal(await verify(c, oathtool(secret, Date.now(), -2)), 403, 'two steps old')
  clock.tick(30_000)
  t.equal(await verify(c, shown), 200, 'one step old: accepted (typed as its step ended)')
  clock.tick(30_000)
  t.equal(await verify(c, oathtool(secret, Date.now(), -2)), 403, 'a code is dead 60 s after its step began')
})

t.test('no step at or below the last accepted one is accepted again (a per-user high-water mark)', async (t) => {
  const clock = fakeClock(t)
  const app = await accountApp(t)
  const { c, secret } = await aliceWithApp(app)
  clock.tick(5 * 30_000)
  const older = oathtool(secret, Date.now(), -1)
  t.equal(await verify(c, oathtool(secret)), 200, 'the current step')
  const res = await call(c, 'POST', '/auth/totp/verify', { code: older })
  t.equal(res.status, 403, 'the previous step, still in the window, after the current one')
  t.match(await res.json(), { code: 'GATEHOUSE_ALREADY_USED' })
  const other = app.client()
  t.equal((await passwordLogin(other, 'alice')).status, 401)
  const login = await other.fetch('/auth/totp/login', { method: 'POST', json: { code: older } })
  t.equal(login.status, 403, 'on any route, in any session')
  clock.tick(30_000)
  t.equal(await verify(c, oathtool(secret)), 200, 'the next step is')
})

t.test('with rateLimit off, one pending sign-in takes 5 codes; the sixth ends it', async (t) => {
  const clock = fakeClock(t)
  const app = await accountApp(t, { rateLimit: false })
  const { secret } = await aliceWithApp(app)
  const c = app.client()
  clock.tick(30_000) // the enrolment's step is spent
  const bad = wrongCode(secret)
  t.equal((await passwordLogin(c, 'alice')).status, 401)
  for (let i = 1; i <= 5; i++) {
    const res = await c.fetch('/auth/totp/login', { method: 'POST', json: { code: bad } })
    t.equal(res.status, 403, `wrong code ${i}`)
  }
  const sixth = await c.fetch('/auth/totp/login', { method: 'POST', json: { code: oathtool(secret) } })
  t.equal(sixth.status, 401, 'even the right code: the sign-in has ended')
  t.match(await sixth.json(), { code: 'GATEHOUSE_HANDSHAKE', details: /sign in with the password again/ })
  t.equal(c.jar.get(PENDING), undefined, 'its cookie is cleared')
  t.equal(c.jar.get('JWT'), undefined)
  t.equal((await passwordLogin(c, 'alice')).status, 401, 'a new password sign-in')
  t.equal((await c.fetch('/auth/totp/login', { method: 'POST', json: { code: oathtool(secret) } })).status, 200, 'takes the right code')
})

t.test('with rateLimit off, 100 wrong codes in a row stop every code of the account; a recovery code gets through and starts again', async (t) => {
  const clock = fakeClock(t)
  const app = await accountApp(t, { rateLimit: false })
  const { secret, recoveryCodes } = await aliceWithApp(app)
  const c = app.client()
  clock.tick(30_000)
  const bad = wrongCode(secret)
  let wrong = 0
  while (wrong < 100) {
    t.equal((await passwordLogin(c, 'alice')).status, 401)
    for (let i = 0; i < 5 && wrong < 100; i++, wrong++) {
      const res = await c.fetch('/auth/totp/login', { method: 'POST', json: { code: bad } })
      if (res.status !== 403) t.fail(`wrong code ${wrong + 1}: ${res.status}`)
    }
  }
  t.equal((await passwordLogin(c, 'alice')).status, 401)
  const capped = await c.fetch('/auth/totp/login', { method: 'POST', json: { code: oathtool(secret) } })
  t.equal(capped.status, 429, 'the 101st code, the right one, is not checked')
  t.match(await capped.json(), { code: 'GATEHOUSE_RATE_LIMITED', details: /100 wrong codes in a row/ })
  t.ok(Number(capped.headers.get('retry-after')) > 0)
  const recovered = await c.fetch('/auth/totp/login', { method: 'POST', json: { recoveryCode: recoveryCodes[0] } })
  t.equal(recovered.status, 200, 'a recovery code signs in')
  clock.tick(30_000)
  t.equal(await verify(c, oathtool(secret)), 200, 'and codes count from zero again')
})

t.test('a burst of 400 wrong codes in parallel, no account lockout: 100 are checked, the rest refused unchecked', async (t) => {
  const clock = fakeClock(t)
  const app = await accountApp(t, { rateLimit: { failures: { perAccount: 0, perIp: 0 } } })
  const { c, secret } = await aliceWithApp(app)
  const bad = wrongCode(secret)
  const statuses = await Promise.all(Array.from({ length: 400 }, async () => await verify(c, bad)))
  t.equal(statuses.filter((s) => s === 403).length, 100, 'checked and wrong')
  t.equal(statuses.filter((s) => s === 429).length, 300, 'not checked')
  clock.tick(30_000)
  t.equal(await verify(c, oathtool(secret)), 429, 'the right code too, now')
  t.equal((await call(c, 'POST', '/change-password')).status, 401, 'nothing confirmed')
})
