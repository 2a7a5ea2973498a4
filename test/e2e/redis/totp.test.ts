/**
 * Two instances behind one URL sharing a real redis-server (state store and TOTP store), on a fake clock: a code
 * accepted by one is refused by the other, a pending login completed on one cannot be completed on the other, a
 * recovery code spent on one is gone on the other, and what one stores the other reads.
 */
import t, { type Test } from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { client, type Client } from '../../helpers/client.js'
import { RedisServer, redisMissingReason } from '../../helpers/redis-server.js'
import { enrol, oathtool, passwordLogin, secondStep, signIn, startApp, xsrf, type TotpApp } from '../../helpers/totp-app.js'

const missing = redisMissingReason()
if (missing !== undefined) {
  t.test('TOTP on two instances sharing Redis', { skip: missing }, async () => {})
} else {
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())

  async function pair (t: Test): Promise<[TotpApp, TotpApp, FakeTimers.InstalledClock]> {
    const clock = FakeTimers.install({ now: Date.UTC(2026, 10, 25, 12, 0, 15), toFake: ['Date'] })
    t.teardown(() => clock.uninstall())
    const shared = { store: redis.url, stateStore: redis.url }
    return [await startApp(t, shared), await startApp(t, shared), clock]
  }

  /** A client whose requests go to `app`, carrying the cookies of `from`. */
  const on = (app: TotpApp, from: Client): Client => app.client(from.jar)

  t.test('a code accepted on one instance is refused on the other', async (t) => {
    const [a, b, clock] = await pair(t)
    const alice = a.client()
    await signIn(alice, 'alice')
    const { secret } = await enrol(alice)
    t.match(await (await on(b, alice).fetch('/auth/totp/status', { headers: xsrf(alice) })).json(), { enabled: true, recoveryCodesLeft: 10 }, 'B reads what A stored')
    await alice.fetch('/auth/logout')

    // Two browsers each with a pending login; one code typed into both, one on each instance.
    const one = a.client()
    const two = b.client()
    t.equal((await passwordLogin(one, 'alice')).status, 401)
    t.equal((await passwordLogin(two, 'alice')).status, 401)
    // The next step's code (the enrolment's is spent): codes ahead of the clock are not accepted.
    clock.tick(30_000)
    const code = oathtool(secret)
    const first = await secondStep(one, { code })
    t.equal(first.status, 200)
    const replay = await secondStep(two, { code })
    t.equal(replay.status, 403)
    t.match(await replay.json(), { code: 'GATEHOUSE_ALREADY_USED' })
    t.equal(two.jar.get('JWT'), undefined)
  })

  t.test('a pending login completed on one instance cannot be completed on the other', async (t) => {
    const [a, b, clock] = await pair(t)
    const bob = a.client()
    await signIn(bob, 'bob')
    const { secret, recoveryCodes } = await enrol(bob)
    await bob.fetch('/auth/logout')
    t.equal((await passwordLogin(bob, 'bob')).status, 401)
    const pending = bob.jar.get('gatehouse-totp-totp-pending')!
    clock.tick(30_000)
    t.equal((await secondStep(on(b, bob), { code: oathtool(secret) })).status, 200)
    const copy = a.client()
    copy.jar.cookies.set('gatehouse-totp-totp-pending', { name: 'gatehouse-totp-totp-pending', value: pending, attrs: {} })
    const again = await secondStep(copy, { recoveryCode: recoveryCodes[0] })
    t.equal(again.status, 403)
    t.match(await again.json(), { code: 'GATEHOUSE_ALREADY_USED' })
    t.match(await (await on(b, bob).fetch('/auth/totp/status', { headers: xsrf(bob) })).json(), { recoveryCodesLeft: 10 }, 'the recovery code was not spent')

    // A recovery code spent through B is gone for A.
    await bob.fetch('/auth/logout')
    t.equal((await passwordLogin(bob, 'bob')).status, 401)
    t.equal((await secondStep(on(b, bob), { recoveryCode: recoveryCodes[1] })).status, 200)
    await bob.fetch('/auth/logout')
    t.equal((await passwordLogin(bob, 'bob')).status, 401)
    t.equal((await secondStep(bob, { recoveryCode: recoveryCodes[1] })).status, 403)
  })
}
