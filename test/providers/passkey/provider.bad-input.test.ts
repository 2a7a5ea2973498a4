/**
 * Every bad input the passkey routes can get, over real HTTP: a replayed assertion, a challenge used twice, from
 * another browser or expired, a wrong origin, RP id or type, a signature counter that goes backwards, an unknown
 * credential id, a credential of another user, registration without a session, malformed JSON and CBOR, oversized
 * bodies, a ceremony cookie of the wrong kind. Each is a 4xx JSON `{error, details?, code}`, stores nothing (the
 * passkey store and the counters are unchanged) and signs nobody in.
 */
import t, { type Test } from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { MemoryPasskeyStore, type PasskeyCredential } from '../../../stores/index.js'
import type { Client } from '../../helpers/client.js'
import type { Lies, SoftAuthenticator, SoftCredential } from '../../helpers/authenticator.js'
import {
  addPasskey, authenticator, loginOptions, registerOptions, signIn, startApp, xsrf, type LoginOptions, type PasskeyApp
} from '../../helpers/passkey-app.js'

interface World { app: PasskeyApp; store: MemoryPasskeyStore; authn: SoftAuthenticator; alice: SoftCredential; bob: SoftCredential; snapshot(): Promise<string> }

/**
 * An app where alice and bob each hold a passkey (used once, so counters are 1), both signed out; with
 * `secondFactor`, their password logins wait for the passkey.
 */
async function world (t: Test, secondFactor = false): Promise<World> {
  const store = new MemoryPasskeyStore()
  const app = await startApp(t, secondFactor ? { store, secondFactor: ['local'] } : { store })
  const authn = authenticator()
  const keys: SoftCredential[] = []
  for (const user of ['alice', 'bob']) {
    const c = app.client()
    await signIn(c, user)
    keys.push((await addPasskey(c, authn)).credential)
  }
  const [alice, bob] = keys as [SoftCredential, SoftCredential]
  for (const k of keys) {
    const c = app.client()
    const res = await c.fetch('/auth/passkey/login', { method: 'POST', json: authn.get(await loginOptions(c), k) })
    if (res.status !== 200) throw new Error(`setup sign-in: ${res.status}`)
  }
  const snapshot = async (): Promise<string> => {
    const all: PasskeyCredential[] = []
    for (const k of keys) all.push(...(await store.list((await store.get(k.id))!.userId)))
    return JSON.stringify(all.map((c) => ({ ...c, publicKey: Buffer.from(c.publicKey).toString('hex') })))
  }
  return { app, store, authn, alice, bob, snapshot }
}

/** Asserts a 4xx JSON error with `code`, no session, and an unchanged passkey store. */
async function refused (t: Test, w: World, c: Client, res: Response, status: number, code: string, before: string): Promise<void> {
  t.equal(res.status, status, `answers ${status}`)
  t.match(res.headers.get('content-type'), /^application\/json/)
  const body = await res.json() as Record<string, unknown>
  t.match(body, { error: String, code }, `code ${code}`)
  t.notOk(res.headers.getSetCookie().some((l) => l.startsWith('JWT=') && !l.startsWith('JWT=;')), 'no session cookie')
  t.equal((await c.fetch('/auth/user')).status, 401, 'signed out')
  t.equal(await w.snapshot(), before, 'the passkey store is unchanged')
}

async function answer (c: Client, json: unknown): Promise<Response> {
  return await c.fetch('/auth/passkey/login', { method: 'POST', json })
}

async function liar (w: World, c: Client, lies: Lies, key = w.alice, body: Record<string, unknown> = {}): Promise<Response> {
  return await answer(c, w.authn.get(await loginOptions(c, body), key, lies))
}

t.test('a replayed assertion is refused, with or without the cookie it came with', async (t) => {
  const w = await world(t)
  const c = w.app.client()
  const options = await loginOptions(c)
  const cookie = c.jar.get('gatehouse-passkey-passkey-login')!
  const assertion = w.authn.get(options, w.alice)
  t.equal((await answer(c, assertion)).status, 200)
  await c.fetch('/auth/logout')
  const before = await w.snapshot()

  const again = w.app.client()
  again.jar.cookies.set('gatehouse-passkey-passkey-login', { name: 'gatehouse-passkey-passkey-login', value: cookie, attrs: {} })
  await refused(t, w, again, await answer(again, assertion), 403, 'GATEHOUSE_ALREADY_USED', before)
  const bare = w.app.client()
  await refused(t, w, bare, await answer(bare, assertion), 400, 'GATEHOUSE_HANDSHAKE', before)
  // With fresh options the old challenge no longer matches.
  const fresh = w.app.client()
  await loginOptions(fresh)
  await refused(t, w, fresh, await answer(fresh, assertion), 401, 'GATEHOUSE_PASSKEY', before)
})

t.test('a challenge is answered once: after a failed answer the good one is refused too', async (t) => {
  const w = await world(t)
  const c = w.app.client()
  const before = await w.snapshot()
  const options = await loginOptions(c)
  const cookie = c.jar.get('gatehouse-passkey-passkey-login')!
  await refused(t, w, c, await answer(c, w.authn.get(options, w.alice, { origin: 'https://evil.example' })), 401, 'GATEHOUSE_PASSKEY', before)
  t.equal(c.jar.get('gatehouse-passkey-passkey-login'), undefined, 'a failed answer clears the ceremony cookie too')
  c.jar.cookies.set('gatehouse-passkey-passkey-login', { name: 'gatehouse-passkey-passkey-login', value: cookie, attrs: {} })
  await refused(t, w, c, await answer(c, w.authn.get(options, w.alice, { counter: 7 })), 403, 'GATEHOUSE_ALREADY_USED', before)
})

t.test('a challenge from another browser is refused', async (t) => {
  const w = await world(t)
  const before = await w.snapshot()
  const victim = w.app.client()
  const options = await loginOptions(victim)
  const attacker = w.app.client()
  await refused(t, w, attacker, await answer(attacker, w.authn.get(options, w.alice, { counter: 7 })), 400, 'GATEHOUSE_HANDSHAKE', before)
  await loginOptions(attacker) // its own ceremony, answered with the victim's challenge
  await refused(t, w, attacker, await answer(attacker, w.authn.get(options, w.alice, { counter: 8 })), 401, 'GATEHOUSE_PASSKEY', before)
  // The victim's own challenge still works: nothing of it was spent by the attacker.
  t.equal((await answer(victim, w.authn.get(options, w.alice))).status, 200)
})

t.test('an expired challenge is refused', async (t) => {
  const w = await world(t)
  const before = await w.snapshot()
  const c = w.app.client()
  const options = await loginOptions(c)
  const clock = FakeTimers.install({ now: Date.now(), toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  clock.tick(5 * 60_000 + 2_000)
  await refused(t, w, c, await answer(c, w.authn.get(options, w.alice, { counter: 9 })), 403, 'GATEHOUSE_HANDSHAKE', before)
})

t.test('a wrong origin, RP id, type or challenge, or a user not verified, is refused', async (t) => {
  const w = await world(t)
  const before = await w.snapshot()
  const cases: Array<[string, Lies]> = [
    ['origin of another site', { origin: 'https://evil.example', counter: 10 }],
    ['origin on another port', { origin: 'http://localhost:8081', counter: 10 }],
    ['RP id of another site', { rpID: 'evil.example', counter: 10 }],
    ['a creation answer', { type: 'webauthn.create', counter: 10 }],
    ['another challenge', { challenge: Buffer.from('not-the-challenge').toString('base64url'), counter: 10 }],
    ['user not verified', { uv: false, counter: 10 }]
  ]
  for (const [what, lies] of cases) {
    const c = w.app.client()
    t.test(what, async (t) => { await refused(t, w, c, await liar(w, c, lies), 401, 'GATEHOUSE_PASSKEY', before) })
  }
})

t.test('a signature counter that does not go up is refused and the stored one stays', async (t) => {
  const w = await world(t)
  const c = w.app.client()
  t.equal((await liar(w, c, { counter: 5 })).status, 200)
  await c.fetch('/auth/logout')
  t.equal((await w.store.get(w.alice.id))?.counter, 5)
  const before = await w.snapshot()
  for (const counter of [3, 5]) {
    const res = await liar(w, c, { counter })
    t.equal(res.status, 401)
    const body = await res.json() as { code: string; details: string }
    t.equal(body.code, 'GATEHOUSE_PASSKEY')
    t.match(body.details, /counter/)
    t.equal(await w.snapshot(), before)
    t.equal((await c.fetch('/auth/user')).status, 401)
  }
})

t.test('an unknown credential id is refused', async (t) => {
  const w = await world(t)
  const before = await w.snapshot()
  const c = w.app.client()
  await refused(t, w, c, await liar(w, c, { id: Buffer.from('no such credential').toString('base64url') }), 401, 'GATEHOUSE_CREDENTIALS', before)
})

t.test('a credential of another user is refused (user name, second factor, user handle)', async (t) => {
  const w = await world(t, true)
  const before = await w.snapshot()
  const c = w.app.client()
  await refused(t, w, c, await liar(w, c, { counter: 20 }, w.alice, { user: 'bob' }), 403, 'GATEHOUSE_CREDENTIALS', before)

  const pending = w.app.client()
  t.equal((await pending.fetch('/auth/local/login', { method: 'POST', json: { user: 'bob', passwd: 'bob-secret' } })).status, 401)
  await refused(t, w, pending, await liar(w, pending, { counter: 20 }, w.alice), 403, 'GATEHOUSE_CREDENTIALS', before)

  // A discoverable answer whose user handle is not the credential owner's.
  const d = w.app.client()
  const forged = { ...w.alice, userHandle: w.bob.userHandle }
  await refused(t, w, d, await answer(d, w.authn.get(await loginOptions(d), forged, { counter: 20 })), 403, 'GATEHOUSE_CREDENTIALS', before)
})

t.test('registration needs a session, the XSRF header and this user\'s challenge', async (t) => {
  const w = await world(t)
  const before = await w.snapshot()
  const anonymous = w.app.client()
  const opts = await anonymous.fetch('/auth/passkey/register/options', { method: 'POST', json: {} })
  await refused(t, w, anonymous, opts, 401, 'GATEHOUSE_UNAUTHORIZED', before)
  const reg = await anonymous.fetch('/auth/passkey/register', { method: 'POST', json: {} })
  await refused(t, w, anonymous, reg, 401, 'GATEHOUSE_UNAUTHORIZED', before)

  const alice = w.app.client()
  await signIn(alice, 'alice')
  const noXsrf = await alice.fetch('/auth/passkey/register/options', { method: 'POST', json: {} })
  t.equal(noXsrf.status, 401)
  t.match(await noXsrf.json(), { code: 'GATEHOUSE_XSRF' })

  // Options asked as alice, answered after the browser signed in as bob.
  const options = await (await registerOptions(alice)).json() as Parameters<SoftAuthenticator['create']>[0]
  await signIn(alice, 'bob')
  const swapped = await alice.fetch('/auth/passkey/register', { method: 'POST', headers: xsrf(alice), json: w.authn.create(options).json })
  t.equal(swapped.status, 403)
  t.match(await swapped.json(), { code: 'GATEHOUSE_FORBIDDEN' })
  t.equal(await w.snapshot(), before)
})

t.test('a registration answer for another origin, RP id or challenge stores nothing', async (t) => {
  const w = await world(t)
  const before = await w.snapshot()
  const c = w.app.client()
  await signIn(c, 'alice')
  for (const lies of [{ origin: 'https://evil.example' }, { rpID: 'evil.example' }, { challenge: 'AAAA' }, { type: 'webauthn.get' }, { uv: false }] as Lies[]) {
    const { res } = await addPasskey(c, w.authn, lies)
    t.equal(res.status, 400, JSON.stringify(lies))
    t.match(await res.json(), { code: 'GATEHOUSE_PASSKEY' })
    t.equal(await w.snapshot(), before)
  }
  const idMismatch = await addPasskey(c, w.authn, { id: Buffer.from('another id').toString('base64url') })
  t.equal(idMismatch.res.status, 400)
  t.match(await idMismatch.res.json(), { code: 'GATEHOUSE_PASSKEY' })
  t.equal(await w.snapshot(), before)
})

t.test('malformed JSON, shapes and CBOR are 400s', async (t) => {
  const w = await world(t)
  const before = await w.snapshot()
  const garbage = Buffer.from([0xff, 0x00, 0x13, 0x37, 0xbf]).toString('base64url')
  const good = async (c: Client): Promise<Record<string, any>> => w.authn.get(await loginOptions(c), w.alice, { counter: 30 })

  const raw = w.app.client()
  await loginOptions(raw)
  const notJson = await raw.fetch('/auth/passkey/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"id": ' })
  await refused(t, w, raw, notJson, 400, 'GATEHOUSE_BAD_REQUEST', before)
  const form = await raw.fetch('/auth/passkey/login', { method: 'POST', form: { id: 'abc' } })
  await refused(t, w, raw, form, 400, 'GATEHOUSE_BAD_REQUEST', before)
  const get = await raw.fetch('/auth/passkey/login')
  await refused(t, w, raw, get, 400, 'GATEHOUSE_BAD_REQUEST', before)

  const shapes: Array<[string, (a: Record<string, any>) => unknown]> = [
    ['an array', () => []],
    ['no response', (a) => ({ ...a, response: undefined })],
    ['id not base64url', (a) => ({ ...a, id: 'a+b/c=', rawId: 'a+b/c=' })],
    ['id and rawId differ', (a) => ({ ...a, rawId: 'AAAA' })],
    ['another type', (a) => ({ ...a, type: 'password' })],
    ['signature a number', (a) => ({ ...a, response: { ...a.response, signature: 12 } })],
    ['an oversized field', (a) => ({ ...a, response: { ...a.response, clientDataJSON: 'A'.repeat(20_000) } })]
  ]
  for (const [what, mangle] of shapes) {
    const c = w.app.client()
    const res = await answer(c, mangle(await good(c)))
    t.test(what, async (t) => { await refused(t, w, c, res, 400, 'GATEHOUSE_BAD_REQUEST', before) })
  }
  const cbor: Array<[string, (a: Record<string, any>) => unknown]> = [
    ['garbage authenticator data', (a) => ({ ...a, response: { ...a.response, authenticatorData: garbage } })],
    ['clientDataJSON not JSON', (a) => ({ ...a, response: { ...a.response, clientDataJSON: Buffer.from('{nope').toString('base64url') } })]
  ]
  for (const [what, mangle] of cbor) {
    const c = w.app.client()
    const res = await answer(c, mangle(await good(c)))
    t.test(what, async (t) => { await refused(t, w, c, res, 401, 'GATEHOUSE_PASSKEY', before) })
  }

  // Registration: an attestation object that is not CBOR, and one that is CBOR but not an attestation.
  const alice = w.app.client()
  await signIn(alice, 'alice')
  for (const attestationObject of [garbage, Buffer.from([0xa1, 0x61, 0x78, 0x01]).toString('base64url')]) {
    const options = await (await registerOptions(alice)).json() as Parameters<SoftAuthenticator['create']>[0]
    const { json } = w.authn.create(options)
    const body = { ...json, response: { ...(json.response as object), attestationObject } }
    const res = await alice.fetch('/auth/passkey/register', { method: 'POST', headers: xsrf(alice), json: body })
    t.equal(res.status, 400)
    t.match(await res.json(), { code: 'GATEHOUSE_PASSKEY' })
  }
  t.equal(await w.snapshot(), before)
})

t.test('oversized bodies are 413s', async (t) => {
  const w = await world(t)
  const before = await w.snapshot()
  const big = { id: 'A', filler: 'x'.repeat(70 * 1024) }
  for (const path of ['/auth/passkey/login/options', '/auth/passkey/login', '/auth/passkey/register/options', '/auth/passkey/register']) {
    const c = w.app.client()
    const res = await c.fetch(path, { method: 'POST', json: big })
    t.test(path, async (t) => { await refused(t, w, c, res, 413, 'GATEHOUSE_TOO_LARGE', before) })
  }
})

t.test('a ceremony cookie of another kind, provider or purpose is refused', async (t) => {
  const w = await world(t)
  const before = await w.snapshot()
  const alice = w.app.client()
  await signIn(alice, 'alice')
  await registerOptions(alice)
  const registerCookie = alice.jar.get('gatehouse-passkey-passkey-register')!
  const session = alice.jar.get('JWT')!
  const c = w.app.client()
  const options: LoginOptions = await loginOptions(c)
  for (const [what, value] of [['a registration cookie', registerCookie], ['a session token', session], ['a forged token', `${session.slice(0, -4)}AAAA`]]) {
    c.jar.cookies.set('gatehouse-passkey-passkey-login', { name: 'gatehouse-passkey-passkey-login', value: value!, attrs: {} })
    const res = await answer(c, w.authn.get(options, w.alice, { counter: 40 }))
    t.test(what!, async (t) => { await refused(t, w, c, res, 403, 'GATEHOUSE_HANDSHAKE', before) })
  }
})
