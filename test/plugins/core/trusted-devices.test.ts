/**
 * "Trust this device" (issue 36 item 4) over real HTTP: a password + authenticator-app login with `trustDevice`
 * gives the browser a signed, HttpOnly, per-user device cookie, and that browser's next password logins skip the
 * code; another user's cookie, a forged one, a forgotten one, an expired one, or one sent by a header client does
 * not; the session list shows and forgets them, `revokeUser` ends them, and every step is audited.
 */
import t, { type Test } from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import Fastify from 'fastify'
import { authPlugin } from '../../../auth.js'
import type { AuditEvent } from '../../../lib/audit/events.js'
import { cookieName } from '../../../plugins/core/signin/trusted-devices.js'
import { oathtool, passwordLogin, secondStep, startApp, withTotp, xsrf, type TotpApp } from '../../helpers/totp-app.js'
import type { Client } from '../../helpers/client.js'

const events: AuditEvent[] = []
const onEvent = (e: AuditEvent): void => { events.push(e) }
const ALICE = 'local_' // ids start with the provider's name; the whole id is read from /auth/user
const deviceCookies = (c: Client): string[] => [...c.jar.cookies.keys()].filter((n) => n.startsWith('gatehouse-device-'))

async function userIdOf (c: Client): Promise<string> {
  const me = await c.fetch('/auth/user', { headers: xsrf(c) })
  return (await me.json() as { id: string }).id
}

// A fake Date, moved one time step before each code, so that no code is refused as one used already.
let clock: FakeTimers.InstalledClock
function code (secret: string): string {
  clock.tick(30_000)
  return oathtool(secret)
}

/** Password, then the code with `trustDevice`: the browser is trusted. */
async function trustedLogin (c: Client, user: string, secret: string): Promise<Response> {
  t.equal((await passwordLogin(c, user)).status, 401, 'the password alone asks for the code')
  return await secondStep(c, { code: code(secret), trustDevice: true })
}

async function app (t: Test, core: Record<string, unknown> = { trustedDevices: true }): Promise<TotpApp> {
  clock = FakeTimers.install({ now: Date.now(), toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  return await startApp(t, {}, { onEvent, ...core })
}

t.test('a trusted browser skips the code at its next logins; an untrusted one does not', async (t) => {
  const a = await app(t)
  const alice = await withTotp(a, 'alice')
  const done = await trustedLogin(alice.c, 'alice', alice.secret)
  t.equal(done.status, 200)
  const set = done.headers.getSetCookie().find((l) => l.startsWith('gatehouse-device-'))!
  t.match(set, /HttpOnly/)
  t.match(set, /SameSite=Strict/)
  t.match(set, /Path=\/auth/)
  t.match(set, /Max-Age=2592000/, '30 days by default')
  const id = await userIdOf(alice.c)
  t.ok(id.startsWith(ALICE))
  t.same(deviceCookies(alice.c), [cookieName(id)], 'named for this user')
  t.equal(events.filter((e) => e.type === 'trusted_device.added' && e.userId === id).map((e) => e.reason).join(), 'totp')
  await alice.c.fetch('/auth/logout')
  const again = await passwordLogin(alice.c, 'alice')
  t.equal(again.status, 200, 'the password alone signs in on the trusted browser')
  t.ok(events.some((e) => e.type === 'trusted_device.used' && e.userId === id))
  t.equal((await passwordLogin(alice.c, 'alice', 'wrong')).status, 403, 'the password is still checked')

  // Without trustDevice nothing is remembered.
  const bob = await withTotp(a, 'bob')
  t.equal((await passwordLogin(bob.c, 'bob')).status, 401)
  t.equal((await secondStep(bob.c, { code: code(bob.secret) })).status, 200)
  t.same(deviceCookies(bob.c), [])
  await bob.c.fetch('/auth/logout')
  t.equal((await passwordLogin(bob.c, 'bob')).status, 401, 'still asks for the code')
})

t.test("another user's device cookie, a forged one or a session token as one is refused", async (t) => {
  const a = await app(t)
  const alice = await withTotp(a, 'alice')
  const bob = await withTotp(a, 'bob')
  t.equal((await trustedLogin(bob.c, 'bob', bob.secret)).status, 200)
  const bobsCookie = bob.c.jar.get(deviceCookies(bob.c)[0]!)!
  const session = bob.c.jar.get('JWT')!
  t.equal((await trustedLogin(alice.c, 'alice', alice.secret)).status, 200)
  const aliceId = await userIdOf(alice.c)
  await alice.c.fetch('/auth/logout')
  // An attacker with alice's password, not her phone, in a browser of their own.
  const eve = a.client()
  for (const [value, reason] of [[bobsCookie, 'other_user'], ['forged.device.cookie', 'invalid'], [session, 'invalid']] as const) {
    eve.jar.cookies.set(cookieName(aliceId), { name: cookieName(aliceId), value, attrs: {} })
    const r = await passwordLogin(eve, 'alice')
    t.equal(r.status, 401, reason)
    t.equal((await r.json() as { code: string }).code, 'GATEHOUSE_SECOND_FACTOR')
    t.equal(events.filter((e) => e.type === 'trusted_device.refused' && e.userId === aliceId).at(-1)?.reason, reason)
    await eve.fetch('/auth/logout')
  }
})

t.test('never for header clients: not given, not honoured', async (t) => {
  const a = await app(t)
  const alice = await withTotp(a, 'alice')
  t.equal((await passwordLogin(alice.c, 'alice')).status, 401)
  const given = await alice.c.fetch('/auth/totp/login', { method: 'POST', headers: { authorization: 'Bearer app-token' }, json: { code: code(alice.secret), trustDevice: true } })
  t.equal(given.status, 200)
  t.same(deviceCookies(alice.c), [], 'a header client gets no device cookie')
  await alice.c.fetch('/auth/logout')
  t.equal((await trustedLogin(alice.c, 'alice', alice.secret)).status, 200)
  await alice.c.fetch('/auth/logout')
  const withHeader = await alice.c.fetch('/auth/local/login', { method: 'POST', headers: { 'x-jwt': 'app-token' }, json: { user: 'alice', passwd: 'alice-secret' } })
  t.equal(withHeader.status, 401, 'a trusted cookie sent by a header client does not skip the code')
})

t.test('the session list shows and forgets trusted browsers; revokeUser ends them', async (t) => {
  const a = await app(t)
  const alice = await withTotp(a, 'alice')
  t.equal((await trustedLogin(alice.c, 'alice', alice.secret)).status, 200)
  const list = await alice.c.fetch('/auth/sessions/devices', { headers: xsrf(alice.c) })
  t.equal(list.status, 200)
  const devices = await list.json() as Array<{ id: string; current: boolean; device: string; expiresAt: string }>
  t.equal(devices.length, 1)
  t.equal(devices[0]!.current, true)
  t.equal((await alice.c.fetch('/auth/sessions/devices/nope', { method: 'DELETE', headers: xsrf(alice.c) })).status, 404)
  const forget = await alice.c.fetch(`/auth/sessions/devices/${devices[0]!.id}`, { method: 'DELETE', headers: xsrf(alice.c) })
  t.equal(forget.status, 204)
  const id = await userIdOf(alice.c)
  await alice.c.fetch('/auth/logout')
  t.equal((await passwordLogin(alice.c, 'alice')).status, 401, 'a forgotten browser asks for the code again')
  t.equal(events.filter((e) => e.type === 'trusted_device.refused' && e.userId === id).at(-1)?.reason, 'forgotten')

  t.equal((await secondStep(alice.c, { code: code(alice.secret), trustDevice: '1' })).status, 200)
  await alice.c.fetch('/auth/logout')
  await a.app.auth.revokeUser(id)
  t.equal((await passwordLogin(alice.c, 'alice')).status, 401, 'revokeUser ends the trust')
  t.ok(events.some((e) => e.type === 'trusted_device.removed' && e.reason === 'revokeUser' && e.userId === id))
})

t.test('the trust ends after ttl; off unless asked for', async (t) => {
  const a = await app(t, { trustedDevices: { ttl: '1h' } })
  const alice = await withTotp(a, 'alice')
  const done = await trustedLogin(alice.c, 'alice', alice.secret)
  t.match(done.headers.getSetCookie().find((l) => l.startsWith('gatehouse-device-')), /Max-Age=3600/)
  await alice.c.fetch('/auth/logout')
  clock.tick(3_601_000)
  t.equal((await passwordLogin(alice.c, 'alice')).status, 401)

  const off = await startApp(t, {}, {})
  const bob = await withTotp(off, 'bob')
  t.equal((await trustedLogin(bob.c, 'bob', bob.secret)).status, 200)
  t.same(deviceCookies(bob.c), [], 'without trustedDevices the flag does nothing')
  t.equal((await bob.c.fetch('/auth/sessions/devices', { headers: xsrf(bob.c) })).status, 404)
})

t.test('a malformed flag is a 400; options are checked', async (t) => {
  const a = await app(t)
  const alice = await withTotp(a, 'alice')
  t.equal((await passwordLogin(alice.c, 'alice')).status, 401)
  const bad = await secondStep(alice.c, { code: code(alice.secret), trustDevice: 'yes' })
  t.equal(bad.status, 400)
  t.same(deviceCookies(alice.c), [])
  for (const [trustedDevices, option] of [[{ ttl: '30m' }, 'trustedDevices.ttl'], [{ maxPerUser: 0 }, 'trustedDevices.maxPerUser'], [{ days: 3 }, 'trustedDevices.days']] as const) {
    const bare = Fastify()
    bare.register(authPlugin, { secret: () => 'x'.repeat(40), url: 'http://127.0.0.1', trustedDevices } as never)
    await t.rejects(bare.ready(), { name: 'OptionsError', option }, option)
    await bare.close()
  }
})
