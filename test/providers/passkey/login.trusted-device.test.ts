/**
 * "Trust this device" after a passkey second factor (issue 36 item 4): password, then the passkey answer with
 * `trustDevice`, gives the browser the signed, HttpOnly, per-user device cookie, and its next password logins skip
 * the passkey; a passkey as the only factor trusts nothing; another user's device cookie or a forged one is
 * refused in this path as in the authenticator-app one (the passkey is asked for, the refusal audited); a header
 * client is neither given a cookie nor skips with one. Real HTTP, the in-process software authenticator.
 */
import t from 'tap'
import type { AuditEvent } from '../../../lib/audit/events.js'
import { cookieName } from '../../../plugins/core/signin/trusted-devices.js'
import type { Client } from '../../helpers/client.js'
import { loginOptions, passwordLogin, startApp, withPasskey, xsrf, type PasskeyApp } from '../../helpers/passkey-app.js'
import type { SoftAuthenticator, SoftCredential } from '../../helpers/authenticator.js'

const events: AuditEvent[] = []
const deviceCookies = (c: Client): string[] => [...c.jar.cookies.keys()].filter((n) => n.startsWith('gatehouse-device-'))

async function app (t: { teardown(fn: () => unknown): void }): Promise<PasskeyApp> {
  return await startApp(t, { secondFactor: ['local'] }, { trustedDevices: true, onEvent: (e) => { events.push(e) } })
}

interface Holder { c: Client; authn: SoftAuthenticator; credential: SoftCredential }

/** Password, then the passkey answer carrying `extra` (e.g. `trustDevice`). */
async function passkeyStep (h: Holder, user: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<Response> {
  const pending = await passwordLogin(h.c, user)
  if (pending.status !== 401) throw new Error(`password of ${user}: ${pending.status} ${await pending.text()}`)
  const options = await loginOptions(h.c)
  return await h.c.fetch('/auth/passkey/login', { method: 'POST', headers, json: { ...h.authn.get(options, h.credential), ...extra } })
}

async function userIdOf (c: Client): Promise<string> {
  return (await (await c.fetch('/auth/user', { headers: xsrf(c) })).json() as { id: string }).id
}

t.test('password + passkey with trustDevice: the browser skips the passkey at its next password logins', async (t) => {
  const a = await app(t)
  const alice = await withPasskey(a, 'alice')
  const done = await passkeyStep(alice, 'alice', { trustDevice: true })
  t.equal(done.status, 200)
  const set = done.headers.getSetCookie().find((l) => l.startsWith('gatehouse-device-'))
  t.ok(set, 'a device cookie')
  t.match(set, /HttpOnly/)
  t.match(set, /SameSite=Strict/)
  t.match(set, /Path=\/auth/)
  const id = await userIdOf(alice.c)
  t.same(deviceCookies(alice.c), [cookieName(id)], 'named for this user')
  t.equal(events.filter((e) => e.type === 'trusted_device.added' && e.userId === id).map((e) => e.reason).join(), 'passkey', 'audited with the factor')
  await alice.c.fetch('/auth/logout')

  const again = await passwordLogin(alice.c, 'alice')
  t.equal(again.status, 200, 'the password alone signs in on the trusted browser')
  t.ok(alice.c.jar.get('JWT'))
  t.ok(events.some((e) => e.type === 'trusted_device.used' && e.userId === id))
  const listed = await (await alice.c.fetch('/auth/sessions/devices', { headers: xsrf(alice.c) })).json() as Array<{ current: boolean }>
  t.same(listed.map((d) => d.current), [true], 'listed beside the sessions, as this browser')
  await alice.c.fetch('/auth/logout')
  t.equal((await passwordLogin(alice.c, 'alice', 'wrong')).status, 403, 'the password is still checked')
})

t.test('without trustDevice, or with a passkey as the only factor, nothing is trusted', async (t) => {
  const a = await app(t)
  const bob = await withPasskey(a, 'bob')
  t.equal((await passkeyStep(bob, 'bob')).status, 200)
  t.same(deviceCookies(bob.c), [], 'not asked: no cookie')
  await bob.c.fetch('/auth/logout')
  t.equal((await passwordLogin(bob.c, 'bob')).status, 401, 'the passkey is still asked for')

  // A passkey sign-in on its own is not a second factor confirming a password: no shortcut past one.
  const fresh = a.client()
  const options = await loginOptions(fresh)
  const primary = await fresh.fetch('/auth/passkey/login', { method: 'POST', json: { ...bob.authn.get(options, bob.credential), trustDevice: true } })
  t.equal(primary.status, 200, 'signed in with the passkey alone')
  t.same(deviceCookies(fresh), [], 'but the browser is not trusted')
})

t.test("another user's device cookie or a forged one is refused after a password with a passkey second factor", async (t) => {
  const a = await app(t)
  const alice = await withPasskey(a, 'alice')
  const bob = await withPasskey(a, 'bob')
  t.equal((await passkeyStep(bob, 'bob', { trustDevice: true })).status, 200)
  const bobsCookie = bob.c.jar.get(deviceCookies(bob.c)[0]!)!
  const session = bob.c.jar.get('JWT')!
  t.equal((await passkeyStep(alice, 'alice', { trustDevice: true })).status, 200)
  const aliceId = await userIdOf(alice.c)
  const alicesCookie = alice.c.jar.get(cookieName(aliceId))!
  await alice.c.fetch('/auth/logout')

  // An attacker with alice's password, not her authenticator, in a browser of their own.
  const eve = a.client()
  for (const [value, reason] of [[bobsCookie, 'other_user'], ['forged.device.cookie', 'invalid'], [session, 'invalid'], [alicesCookie.slice(0, -4) + 'AAAA', 'invalid']] as const) {
    eve.jar.cookies.set(cookieName(aliceId), { name: cookieName(aliceId), value, attrs: {} })
    const r = await passwordLogin(eve, 'alice')
    t.equal(r.status, 401, reason)
    t.match(await r.json(), { code: 'GATEHOUSE_SECOND_FACTOR', methods: ['passkey'] }, `${reason}: the passkey is asked for`)
    t.equal(eve.jar.get('JWT'), undefined, 'no session')
    t.equal(events.filter((e) => e.type === 'trusted_device.refused' && e.userId === aliceId).at(-1)?.reason, reason, 'audited')
    await eve.fetch('/auth/logout')
  }

  // Forgotten from the session list: her own cookie no longer skips the passkey.
  t.equal((await passwordLogin(alice.c, 'alice')).status, 200, 'her own cookie still skips the passkey')
  t.equal((await alice.c.fetch('/auth/sessions/devices', { method: 'DELETE', headers: xsrf(alice.c) })).status, 200)
  await alice.c.fetch('/auth/logout')
  const forgotten = await passwordLogin(alice.c, 'alice')
  t.equal(forgotten.status, 401)
  t.equal(events.filter((e) => e.type === 'trusted_device.refused' && e.userId === aliceId).at(-1)?.reason, 'forgotten')
})

t.test('a header client is neither given a device cookie nor skips the passkey with one', async (t) => {
  const a = await app(t)
  const alice = await withPasskey(a, 'alice')
  const given = await passkeyStep(alice, 'alice', { trustDevice: true }, { authorization: 'Bearer app-token' })
  t.equal(given.status, 200)
  t.same(deviceCookies(alice.c), [], 'no device cookie for a header client')
  await alice.c.fetch('/auth/logout')
  t.equal((await passkeyStep(alice, 'alice', { trustDevice: true })).status, 200)
  await alice.c.fetch('/auth/logout')
  const withHeader = await alice.c.fetch('/auth/local/login', { method: 'POST', headers: { 'x-jwt': 'app-token' }, json: { user: 'alice', passwd: 'alice-secret' } })
  t.equal(withHeader.status, 401, 'a trusted cookie sent by a header client does not skip the passkey')
})
