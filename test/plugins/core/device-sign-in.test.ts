/**
 * CLI sign-in (RFC 8628) driven by openid-client: the device asks for a code, a signed-in user approves it on the
 * device page, the device's polling gets the pair; pending, slow_down, denial, expiry, replays, and user-code
 * guessing throttled per address and audited.
 */
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import * as oidc from 'openid-client'
import { clientsApp, pollOnClock } from '../../helpers/clients-app.js'

const s = await clientsApp()
t.teardown(s.close)
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

async function signedIn (name: string): Promise<{ cookie: string; xsrf: string }> {
  const r = await s.app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: name, passwd: 'x' } })
  const jar = Object.fromEntries(r.cookies.map((c) => [c.name, c.value]))
  return { cookie: `JWT=${jar.JWT!}; XSRF-TOKEN=${jar['XSRF-TOKEN']!}`, xsrf: jar['XSRF-TOKEN']! }
}

async function decide (user: { cookie: string; xsrf: string }, code: string, action: string, ip = '10.0.0.1', extra: Record<string, string> = {}) {
  return await s.app.inject({
    method: 'POST',
    url: '/auth/device',
    remoteAddress: ip,
    headers: { ...FORM, cookie: user.cookie, origin: s.base, 'sec-fetch-site': 'same-origin', ...extra },
    payload: new URLSearchParams({ user_code: code, action, xsrf: user.xsrf }).toString()
  })
}

const poll = async (deviceCode: string) => await s.app.inject({ method: 'POST', url: '/auth/token', headers: FORM, payload: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', client_id: 'cli', device_code: deviceCode }).toString() })

t.test('openid-client: device code, a user approves on the device page, polling gets the pair', async (t) => {
  const config = await s.discover('cli')
  t.equal(config.serverMetadata().device_authorization_endpoint, `${s.base}/auth/device/code`)
  const da = await oidc.initiateDeviceAuthorization(config, {})
  t.match(da.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/)
  t.equal(da.verification_uri, `${s.base}/auth/device`)
  t.equal(da.interval, 5)
  let r = await poll(da.device_code)
  t.equal(r.json().error, 'authorization_pending')
  t.equal(r.headers['cache-control'], 'no-store')
  r = await poll(da.device_code)
  t.equal(r.json().error, 'slow_down', 'polled again at once')

  const user = await signedIn('ann')
  const page = await s.app.inject({ url: `/auth/device?user_code=${da.user_code.toLowerCase()}`, headers: { cookie: user.cookie } })
  t.equal(page.statusCode, 200)
  t.match(page.body, da.user_code)
  r = await decide(user, da.user_code.replace('-', '').toLowerCase(), 'approve')
  t.equal(r.statusCode, 200)
  t.match(r.body, /Demo CLI is signed in/)
  t.ok(s.events.some((e) => e.type === 'device.approved' && e.clientId === 'cli'))

  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  clock.tick(11_000)
  r = await poll(da.device_code)
  clock.uninstall()
  t.equal(r.statusCode, 200)
  const tokens = r.json()
  t.match(tokens, { token_type: 'Bearer', expires_in: 900 })
  t.equal((await s.app.inject({ url: '/private', headers: { authorization: `Bearer ${tokens.access_token as string}` } })).json().name, 'ann')
  r = await poll(da.device_code)
  t.equal(r.json().error, 'invalid_grant', 'polled after the exchange')
  t.ok(await oidc.refreshTokenGrant(config, tokens.refresh_token as string), 'the device refreshes with a standard client')
})

t.test('openid-client polls until the user approves', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const config = await s.discover('cli')
  const da = await oidc.initiateDeviceAuthorization(config, {})
  const user = await signedIn('bob')
  // The person approves between the device's first and second poll.
  const { polled, answers } = pollOnClock(s, config, da, clock, async (n) => { if (n === 2) t.equal((await decide(user, da.user_code, 'approve', '10.0.0.2')).statusCode, 200, 'approved') })
  const tokens = await polled
  if (tokens instanceof Error) throw tokens
  t.same(answers, ['authorization_pending', 'tokens'], 'pending until the approval, then the pair, each poll at the interval')
  t.equal((await s.app.inject({ url: '/private', headers: { authorization: `Bearer ${tokens.access_token}` } })).json().name, 'bob')
})

t.test('denied, expired, other clients', async (t) => {
  const config = await s.discover('cli')
  const user = await signedIn('cat')
  const denied = await oidc.initiateDeviceAuthorization(config, {})
  t.equal((await decide(user, denied.user_code, 'deny', '10.0.0.3')).statusCode, 200)
  t.ok(s.events.some((e) => e.type === 'device.denied' && e.reason === 'denied'))
  t.equal((await poll(denied.device_code)).json().error, 'access_denied')
  const late = await oidc.initiateDeviceAuthorization(config, {})
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  clock.tick(601_000)
  t.equal((await poll(late.device_code)).json().error, 'expired_token')
  t.equal((await decide(user, late.user_code, 'approve', '10.0.0.3')).statusCode, 400, 'an expired code cannot be approved')
  clock.uninstall()
  for (const [client, error] of [['mobile', 'unauthorized_client'], ['nobody', 'invalid_client']]) {
    const r = await s.app.inject({ method: 'POST', url: '/auth/device/code', headers: FORM, payload: `client_id=${client}` })
    t.equal(r.json().error, error, client)
  }
  const da = await oidc.initiateDeviceAuthorization(config, {})
  const r = await s.app.inject({ method: 'POST', url: '/auth/token', headers: FORM, payload: `grant_type=urn:ietf:params:oauth:grant-type:device_code&client_id=mobile&device_code=${da.device_code}` })
  t.equal(r.json().error, 'unauthorized_client', 'a native client cannot poll a device code')
})

t.test('the device page: sign-in first, same-origin approvals with the page\'s XSRF value only', async (t) => {
  const config = await s.discover('cli')
  const da = await oidc.initiateDeviceAuthorization(config, {})
  const page = await s.app.inject({ url: `/auth/device?user_code=${da.user_code}` })
  t.equal(page.statusCode, 302)
  t.match(page.headers.location, /\/login\?from=%2Fauth%2Fdevice%3Fuser_code%3D/)
  const user = await signedIn('dan')
  t.equal((await decide(user, da.user_code, 'approve', '10.0.0.4', { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' })).statusCode, 403, 'cross-site')
  t.equal((await decide({ ...user, xsrf: 'wrong' }, da.user_code, 'approve', '10.0.0.4')).statusCode, 403, 'without the page\'s XSRF value')
  t.equal((await decide({ cookie: '', xsrf: 'x' }, da.user_code, 'approve', '10.0.0.4')).statusCode, 401, 'signed out')
  t.equal((await poll(da.device_code)).json().error, 'authorization_pending', 'none of these approved anything')
})

t.test('user-code guessing: wrong codes are audited, and past 10 an address is refused even the right one', async (t) => {
  const config = await s.discover('cli')
  const da = await oidc.initiateDeviceAuthorization(config, {})
  const user = await signedIn('eve')
  const before = s.events.filter((e) => e.type === 'device.denied' && e.reason === 'unknown_code').length
  for (let i = 0; i < 10; i++) t.equal((await decide(user, 'BCDF-GHJ' + 'KLMNP'[i % 5]!, 'approve', '10.9.9.9')).statusCode, 400)
  t.equal(s.events.filter((e) => e.type === 'device.denied' && e.reason === 'unknown_code').length - before, 10, 'each wrong code audited')
  const r = await decide(user, da.user_code, 'approve', '10.9.9.9')
  t.equal(r.statusCode, 429, 'the 11th try is refused, right or not')
  t.ok(s.events.some((e) => e.type === 'rate_limited' && e.reason === 'device_code'))
  t.equal((await poll(da.device_code)).json().error, 'authorization_pending', 'nothing approved')
  t.equal((await decide(user, da.user_code, 'approve', '10.0.0.5')).statusCode, 200, 'another address still approves')
})

t.test('the page of a complete verification link names the client before the user decides; a wrong code there is a counted guess', async (t) => {
  const config = await s.discover('cli')
  const da = await oidc.initiateDeviceAuthorization(config, {})
  const user = await signedIn('fay')
  const page = await s.app.inject({ url: `/auth/device?user_code=${da.user_code}`, headers: { cookie: user.cookie }, remoteAddress: '10.7.7.7' })
  t.equal(page.statusCode, 200)
  t.match(page.body, /<p id="asking">Sign in <strong>Demo CLI<\/strong> as you\?/, 'the client is named before Approve/Deny')
  t.match(page.body, `value="${da.user_code}"`)
  t.equal((await poll(da.device_code)).json().error, 'authorization_pending', 'looking decided nothing and used nothing up')
  const typedOnly = await s.app.inject({ url: '/auth/device', headers: { cookie: user.cookie }, remoteAddress: '10.7.7.7' })
  t.notMatch(typedOnly.body, 'id="asking"', 'without a code: the plain entry page')

  for (let i = 0; i < 10; i++) {
    const wrong = await s.app.inject({ url: `/auth/device?user_code=BCDF-GHJ${'KLMNP'[i % 5]!}`, headers: { cookie: user.cookie }, remoteAddress: '10.7.7.8' })
    t.equal(wrong.statusCode, 200)
    t.notMatch(wrong.body, 'id="asking"', 'a wrong code names no client')
    t.match(wrong.body, 'That code is not valid')
  }
  const eleventh = await s.app.inject({ url: `/auth/device?user_code=${da.user_code}`, headers: { cookie: user.cookie }, remoteAddress: '10.7.7.8' })
  t.equal(eleventh.statusCode, 429, 'past 10 wrong look-ups an address learns nothing more, right code or not')
  t.equal((await decide(user, da.user_code, 'approve', '10.7.7.8')).statusCode, 429, 'and decides nothing')
  t.equal((await decide(user, da.user_code, 'approve', '10.7.7.7')).statusCode, 200, 'another address still approves')
})
