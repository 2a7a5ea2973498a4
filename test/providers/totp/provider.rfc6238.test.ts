/**
 * RFC 6238 Appendix B over HTTP: a password sign-in whose second factor is the RFC's code at the RFC's time, on a
 * fake clock. The user's authenticator secret is the RFC's seed: it is sealed with the provider's own sealer
 * (seal.ts, the key the app is given) and put in the TOTP store the app uses, as a confirmed enrolment would leave
 * it (an enrolment of the product makes its own random secret). One app takes SHA1 codes, one SHA512 codes,
 * both 8 digits and `window: 0`.
 */
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { MemoryTotpStore } from '../../../stores/index.js'
import { sealer } from '../../../providers/totp/seal.js'
import { KEY, passwordLogin, secondStep, signIn, startApp, xsrf, type TotpApp } from '../../helpers/totp-app.js'

// RFC 6238 Appendix B: the seeds, and two rows of the table (time in seconds, 8-digit codes).
const SEED_SHA1 = '12345678901234567890'
const SEED_SHA512 = '1234567890123456789012345678901234567890123456789012345678901234'
const AT_1111111109 = { seconds: 1111111109, SHA1: '07081804', SHA256: '68084774', SHA512: '25091201' }
const AT_2000000000 = { seconds: 2000000000, SHA1: '69279037', SHA256: '90698825', SHA512: '38618901' }
const SHA1_AT_1234567890 = '89005924'

/** Gives `user` the RFC's seed as a confirmed authenticator app; signs the browser out again. */
async function seedAuthenticator (t: { ok(v: unknown, m?: string): void }, app: TotpApp, store: MemoryTotpStore, user: string, seed: string): Promise<ReturnType<TotpApp['client']>> {
  const c = app.client()
  await signIn(c, user) // no authenticator app yet: the password alone signs in, and tells the user's id
  const { id } = await (await c.fetch('/auth/user', { headers: xsrf(c) })).json() as { id: string }
  const secret = sealer(Buffer.from(KEY, 'hex')).seal(id, Buffer.from(seed, 'ascii'))
  t.ok(await store.enrol(id, { secret, confirmed: false, created: Date.now() }), 'enrolled')
  t.ok(await store.confirm(id, secret, []), 'confirmed')
  await c.fetch('/auth/logout')
  return c
}

t.test('SHA1, 8 digits, at 1111111109 s: the RFC\'s code is the second factor, other rows\' codes are not', async (t) => {
  const clock = FakeTimers.install({ now: AT_1111111109.seconds * 1000, toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const store = new MemoryTotpStore()
  const app = await startApp(t, { store, digits: 8, window: 0 })
  const c = await seedAuthenticator(t, app, store, 'alice', SEED_SHA1)

  const first = await passwordLogin(c, 'alice')
  t.equal(first.status, 401)
  t.match(await first.json(), { code: 'GATEHOUSE_SECOND_FACTOR', methods: ['totp'] })
  for (const [what, code] of [['SHA256\'s code of the same time', AT_1111111109.SHA256], ['SHA1\'s code of 1234567890 s', SHA1_AT_1234567890], ['SHA1\'s code of 2000000000 s', AT_2000000000.SHA1]]) {
    const res = await secondStep(c, { code })
    t.equal(res.status, 403, what)
    t.match(await res.json(), { code: 'GATEHOUSE_CREDENTIALS', details: 'incorrect code' })
    t.equal(c.jar.get('JWT'), undefined, 'no session')
  }
  const ok = await secondStep(c, { code: AT_1111111109.SHA1 })
  t.equal(ok.status, 200, 'RFC 6238 B: 07081804')
  t.match(await ok.json(), { name: 'alice' })
  t.ok(c.jar.get('JWT'), 'a session')
  t.equal((await c.fetch('/auth/user', { headers: xsrf(c) })).status, 200)
})

t.test('SHA512, 8 digits, 64-byte seed, at 2000000000 s', async (t) => {
  const clock = FakeTimers.install({ now: AT_2000000000.seconds * 1000, toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const store = new MemoryTotpStore()
  const app = await startApp(t, { store, algorithm: 'SHA512', digits: 8, window: 0 })
  const c = await seedAuthenticator(t, app, store, 'bob', SEED_SHA512)

  t.equal((await passwordLogin(c, 'bob')).status, 401)
  t.equal((await secondStep(c, { code: AT_2000000000.SHA1 })).status, 403, 'the SHA1 code of the same time')
  t.equal((await secondStep(c, { code: AT_1111111109.SHA512 })).status, 403, 'the SHA512 code of another time')
  const ok = await secondStep(c, { code: AT_2000000000.SHA512 })
  t.equal(ok.status, 200, 'RFC 6238 B: 38618901')
  t.match(await ok.json(), { name: 'bob' })
  t.ok(c.jar.get('JWT'), 'a session')
})
