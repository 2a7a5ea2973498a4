/**
 * The device_code grant's own rules (RFC 8628 §3.4-3.5): a device_code is bound to the device client that asked for
 * it (another device client polling it, even after the user approved, gets nothing and takes nothing), and a client
 * polling too fast is told `slow_down` and its interval grows by 5 seconds for this and every later poll (fake
 * clock: `Date` only). Two polls at once after the approval get one pair between them.
 */
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { clientsApp } from '../../helpers/clients-app.js'
import { latencyStore } from '../../helpers/latency-store.js'

// A store with a network's latency (test/helpers/latency-store.ts): requests sent together interleave as on Redis.
const s = await clientsApp({
  stateStore: latencyStore(),
  clients: [
    { id: 'cli', kind: 'device', name: 'Demo CLI' },
    { id: 'tv', kind: 'device', name: 'Living-room TV' }
  ]
})
t.teardown(s.close)
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

async function deviceCode (client: string): Promise<{ device_code: string; user_code: string; interval: number }> {
  const r = await s.app.inject({ method: 'POST', url: '/auth/device/code', headers: FORM, payload: `client_id=${client}` })
  return r.json()
}

async function poll (client: string, code: string): Promise<{ status: number; body: Record<string, string> }> {
  const r = await s.app.inject({ method: 'POST', url: '/auth/token', headers: FORM, payload: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', client_id: client, device_code: code }).toString() })
  return { status: r.statusCode, body: r.json() }
}

async function approve (code: string, from: Record<string, string> = { origin: s.base, 'sec-fetch-site': 'same-origin' }): Promise<number> {
  const login = await s.app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'ann', passwd: 'x' } })
  const jar = Object.fromEntries(login.cookies.map((c) => [c.name, c.value]))
  const r = await s.app.inject({
    method: 'POST',
    url: '/auth/device',
    headers: { ...FORM, cookie: `JWT=${jar.JWT!}; XSRF-TOKEN=${jar['XSRF-TOKEN']!}`, ...from },
    payload: new URLSearchParams({ user_code: code, action: 'approve', xsrf: jar['XSRF-TOKEN']! }).toString()
  })
  return r.statusCode
}

t.test('a device_code is bound to the device client that asked for it', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const da = await deviceCode('cli')
  t.equal(await approve(da.user_code), 200)
  clock.tick(6_000)
  const stolen = await poll('tv', da.device_code)
  t.equal(stolen.status, 400)
  t.equal(stolen.body.error, 'invalid_grant', 'another device client polling it gets nothing, after the approval too')
  t.equal(stolen.body.access_token, undefined)
  clock.tick(6_000)
  const own = await poll('cli', da.device_code)
  t.equal(own.status, 200, 'and took nothing: the client that asked gets the pair')
  t.equal((await s.app.auth.tokens.parse(own.body.access_token!)).user?.name, 'ann')
})

t.test('an approval posted from anywhere but this site\'s own page is refused, a sibling subdomain\'s included', async (t) => {
  const da = await deviceCode('cli')
  for (const [what, from] of [
    ['a sibling subdomain (same-site)', { origin: 'http://evil.127.0.0.1.nip.example', 'sec-fetch-site': 'same-site' }],
    ['same-site without an Origin', { 'sec-fetch-site': 'same-site' }],
    ['a browser without Fetch Metadata, from another origin', { origin: 'https://evil.example' }],
    ['same-origin claimed, another Origin', { origin: 'https://evil.example', 'sec-fetch-site': 'same-origin' }],
    ['a user-typed request (none)', { 'sec-fetch-site': 'none' }]
  ] as const) {
    t.equal(await approve(da.user_code, from), 403, what)
  }
  t.equal((await poll('cli', da.device_code)).body.error, 'authorization_pending', 'nothing was approved')
  t.equal(await approve(da.user_code), 200, 'control: this site\'s own page')
})

t.test('two polls at once after the approval: one pair', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  for (let round = 0; round < 5; round++) {
    const da = await deviceCode('cli')
    t.equal(await approve(da.user_code), 200)
    clock.tick(6_000)
    const answers = await Promise.all([poll('cli', da.device_code), poll('cli', da.device_code)])
    t.equal(answers.filter((r) => r.status === 200).length, 1, `round ${round}: one pair`)
    t.ok(answers.some((r) => r.status === 400 && r.body.error === 'invalid_grant'), `round ${round}: the other is refused`)
  }
})

t.test('slow_down adds 5 seconds to the interval, for that poll and every later one', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const da = await deviceCode('cli')
  t.equal(da.interval, 5)
  const expect = async (error: string, what: string, description?: RegExp): Promise<void> => {
    const r = await poll('cli', da.device_code)
    t.equal(r.body.error, error, what)
    if (description !== undefined) t.match(r.body.error_description, description, what)
  }
  await expect('authorization_pending', 'the first poll')
  clock.tick(1_000)
  await expect('slow_down', 'a poll 1 s later', /every 10 s/)
  clock.tick(6_000)
  await expect('slow_down', '6 s later: past the first 5 s, within the 10 s the slow_down asked for', /every 15 s/)
  clock.tick(14_000)
  await expect('slow_down', '14 s later: within 15 s', /every 20 s/)
  clock.tick(20_000)
  await expect('authorization_pending', '20 s later: the interval is kept')
  clock.tick(19_000)
  await expect('slow_down', '19 s later: still too soon at 20 s', /every 25 s/)
  clock.tick(25_000)
  await expect('authorization_pending', '25 s later')
})
