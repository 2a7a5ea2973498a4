/**
 * Bad input to the routes that change factors (issue 33's list): an enrolment confirmed with a wrong, reused,
 * malformed or 1 MB code; a second enrolment while one is pending; removal with a recovery code spent already;
 * step-up with another user's code. Each is a 4xx JSON error with a code, and nothing changes: the enrolment still
 * waits for its right code, the app and its recovery codes stay, no factor is confirmed.
 */
import t from 'tap'
import { oathtool } from '../../helpers/totp-app.js'
import { accountApp, addApp, call, fakeClock, signIn } from '../../helpers/account-app.js'

t.test('an enrolment confirmed with a wrong, reused, malformed or 1 MB code: refused, still waiting for its code', async (t) => {
  const clock = fakeClock(t)
  const app = await accountApp(t)
  const c = app.client()
  await signIn(c, 'alice')
  const bob = app.client()
  await signIn(bob, 'bob')
  const { secret: bobs } = await addApp(bob)
  const { secret } = await (await call(c, 'POST', '/auth/totp/enrol')).json() as { secret: string }
  clock.tick(30_000)
  const used = oathtool(secret)
  // Another session of alice's confirms nothing, but its code is taken: the same code here is then a replay.
  t.equal((await call(bob, 'POST', '/auth/totp/verify', { code: oathtool(bobs) })).status, 200)
  const cases: Array<[string, unknown, number, string]> = [
    ['a wrong code', oathtool(secret, Date.now(), 2), 403, 'GATEHOUSE_CREDENTIALS'],
    ['another user\'s code', oathtool(bobs), 403, 'GATEHOUSE_CREDENTIALS'],
    ['five digits', '12345', 400, 'GATEHOUSE_BAD_REQUEST'],
    ['letters', 'abcdef', 400, 'GATEHOUSE_BAD_REQUEST'],
    ['a number', 123456, 400, 'GATEHOUSE_BAD_REQUEST'],
    ['an object', { code: used }, 400, 'GATEHOUSE_BAD_REQUEST'],
    ['nothing', undefined, 400, 'GATEHOUSE_BAD_REQUEST']
  ]
  for (const [what, code, status, errorCode] of cases) {
    const res = await call(c, 'POST', '/auth/totp/enrol/confirm', code === undefined ? {} : { code })
    t.equal(res.status, status, what)
    t.match(await res.json(), { code: errorCode }, what)
  }
  const huge = await c.fetch('/auth/totp/enrol/confirm', { method: 'POST', headers: { 'x-xsrf-token': c.jar.get('XSRF-TOKEN')!, 'content-type': 'application/json' }, body: JSON.stringify({ code: '1'.repeat(1024 * 1024) }) })
  t.equal(huge.status, 413, '1 MB')
  t.match(await huge.json(), { code: 'GATEHOUSE_TOO_LARGE' })
  t.same(await (await call(c, 'GET', '/auth/totp/status')).json(), { enabled: false, pending: true, recoveryCodesLeft: 0 }, 'still waiting')

  t.equal((await call(c, 'POST', '/auth/totp/enrol/confirm', { code: used })).status, 200, 'the right code confirms it')
  const reused = await call(c, 'POST', '/auth/totp/enrol/confirm', { code: used })
  t.equal(reused.status, 409, 'the same code again: nothing left to confirm')
  t.match(await reused.json(), { code: 'GATEHOUSE_TOTP' })
  const replay = await call(c, 'POST', '/auth/totp/verify', { code: used })
  t.equal(replay.status, 403, 'nor is the enrolment\'s code a step-up afterwards')
  t.match(await replay.json(), { code: 'GATEHOUSE_ALREADY_USED' })
  t.same(await (await call(c, 'GET', '/auth/totp/status')).json(), { enabled: true, pending: false, recoveryCodesLeft: 10 })
})

t.test('two confirmations of one enrolment in parallel: one app, one set of recovery codes', async (t) => {
  fakeClock(t)
  const app = await accountApp(t)
  const c = app.client()
  await signIn(c, 'alice')
  const { secret } = await (await call(c, 'POST', '/auth/totp/enrol')).json() as { secret: string }
  const code = oathtool(secret)
  const answers = await Promise.all([call(c, 'POST', '/auth/totp/enrol/confirm', { code }), call(c, 'POST', '/auth/totp/enrol/confirm', { code })])
  const [won, lost] = answers[0]!.status === 200 ? answers : [answers[1]!, answers[0]!]
  t.equal(won!.status, 200)
  // The loser finds the step taken (403) or the enrolment confirmed already (409): either way nothing of its own.
  t.match(await lost!.json(), { code: /^GATEHOUSE_(ALREADY_USED|TOTP)$/ })
  const { recoveryCodes } = await won!.json() as { recoveryCodes: string[] }
  t.same(await (await call(c, 'GET', '/auth/totp/status')).json(), { enabled: true, pending: false, recoveryCodesLeft: 10 })
  t.equal((await call(c, 'POST', '/auth/totp/verify', { recoveryCode: recoveryCodes[0] })).status, 200, 'the winner\'s codes are the ones kept')
})

t.test('a second enrolment while one is pending: 409, the first one unchanged', async (t) => {
  fakeClock(t)
  const app = await accountApp(t)
  const [a, b] = [app.client(), app.client()]
  await signIn(a, 'alice')
  await signIn(b, 'alice')
  const { secret } = await (await call(a, 'POST', '/auth/totp/enrol')).json() as { secret: string }
  const second = await call(b, 'POST', '/auth/totp/enrol')
  t.equal(second.status, 409)
  t.same(await second.json(), { error: 'enrolment in progress', details: 'an authenticator app is being added in another session: finish it there, or begin again in 10 minutes', code: 'GATEHOUSE_TOTP' })
  t.equal((await call(a, 'POST', '/auth/totp/enrol/confirm', { code: oathtool(secret) })).status, 200, 'the first secret still confirms')
})

t.test('removal with a recovery code spent already: 403, the app and its codes stay', async (t) => {
  const clock = fakeClock(t)
  const app = await accountApp(t)
  const c = app.client()
  await signIn(c, 'alice')
  const { recoveryCodes } = await addApp(c)
  t.equal((await call(c, 'POST', '/auth/totp/verify', { recoveryCode: recoveryCodes[0] })).status, 200)
  clock.tick(6 * 60_000)
  const password = 'alice-secret'
  for (const recoveryCode of [recoveryCodes[0], recoveryCodes[0]!.toLowerCase()]) {
    const res = await call(c, 'DELETE', '/auth/totp/', { password, recoveryCode })
    t.equal(res.status, 403)
    t.match(await res.json(), { code: 'GATEHOUSE_CREDENTIALS', details: 'incorrect recovery code' })
  }
  const malformed = await call(c, 'DELETE', '/auth/totp/', { password, recoveryCode: 'ABC' })
  t.equal(malformed.status, 400)
  t.same(await (await call(c, 'GET', '/auth/totp/status')).json(), { enabled: true, pending: false, recoveryCodesLeft: 9 }, 'nothing removed, nothing spent')
  t.equal((await call(c, 'DELETE', '/auth/totp/', { password, recoveryCode: recoveryCodes[1] })).status, 200, 'an unspent one removes it')
})
