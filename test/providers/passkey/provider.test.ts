/**
 * Passkeys over real HTTP with a software authenticator: adding, listing and deleting a user's passkeys, signing in
 * discoverably and with a user name, what the options and cookies look like, and the session the sign-in ends in.
 */
import t, { type Test } from 'tap'
import { MemoryPasskeyStore } from '../../../stores/index.js'
import { parseSetCookie, type Client } from '../../helpers/client.js'
import type { PasskeyProviderOptions } from '../../../index.js'
import type { SoftAuthenticator, SoftCredential } from '../../helpers/authenticator.js'
import {
  addPasskey, authenticator, loginOptions, passkeyLogin, registerOptions, signIn, startApp, withPasskey, xsrf
} from '../../helpers/passkey-app.js'

t.test('a signed-in user adds a passkey, signs out and signs in with it (discoverable)', async (t) => {
  const store = new MemoryPasskeyStore()
  const { client } = await startApp(t, { store })
  const c = client()
  const authn = authenticator()
  await signIn(c, 'alice')

  const optsRes = await registerOptions(c)
  t.equal(optsRes.status, 200)
  t.equal(optsRes.headers.get('cache-control'), 'no-store')
  const opts = await optsRes.json() as Record<string, any>
  t.equal(opts.rp.id, 'localhost', 'the RP id is the host of url')
  t.equal(opts.user.name, 'alice')
  t.match(opts.user.id, /^[A-Za-z0-9_-]{43}$/, 'an opaque 32-byte user handle')
  t.same(opts.authenticatorSelection, { residentKey: 'required', requireResidentKey: true, userVerification: 'required' })
  t.equal(opts.attestation, 'none')
  const cookie = optsRes.headers.getSetCookie().map(parseSetCookie).find((k) => k.name === 'gatehouse-passkey-passkey-register')!
  t.ok(cookie, 'the challenge is bound to this browser by a cookie')
  t.equal(cookie.attrs.path, '/auth/passkey/register')
  t.equal(cookie.attrs.httponly, true)
  t.equal(cookie.attrs.samesite, 'Strict')
  t.equal(cookie.attrs['max-age'], '300', 'five minutes')

  const { credential, json } = authn.create(opts as any)
  const res = await c.fetch('/auth/passkey/register', { method: 'POST', headers: xsrf(c), json: { ...json, label: 'laptop' } })
  t.equal(res.status, 201)
  const info = await res.json() as Record<string, unknown>
  t.equal(info.id, credential.id)
  t.equal(info.label, 'laptop')
  t.same(info.transports, ['internal'])
  t.notOk('publicKey' in info || 'userId' in info, 'the answer shows neither the key nor the owner')
  const stored = await store.get(credential.id)
  t.equal(stored?.userId, (await (await c.fetch('/auth/user', { headers: xsrf(c) })).json() as { id: string }).id)
  t.same(stored?.user, { name: 'alice', id: stored?.userId }, 'the user is kept without session extras')

  const list = await c.fetch('/auth/passkey/credentials', { headers: xsrf(c) })
  t.equal(list.status, 200)
  t.same((await list.json() as Array<{ id: string }>).map((p) => p.id), [credential.id])

  await c.fetch('/auth/logout')
  t.equal((await c.fetch('/auth/user')).status, 401, 'signed out')

  const login = await passkeyLogin(c, authn, credential)
  t.equal(login.status, 200)
  t.match(await login.json(), { name: 'alice', id: stored?.userId })
  t.ok(c.jar.get('JWT'), 'a session cookie')
  t.equal(c.jar.get('gatehouse-passkey-passkey-login'), undefined, 'the ceremony cookie is cleared')
  t.match(await (await c.fetch('/auth/user', { headers: xsrf(c) })).json(), { name: 'alice' })
  const used = await store.get(credential.id)
  t.equal(used?.counter, 1, 'the signature counter is kept')
  t.type(used?.lastUsed, 'number', 'and the time of use')
  t.match(await (await c.fetch('/auth/passkey/credentials', { headers: xsrf(c) })).json(), [{ id: credential.id, lastUsed: /^\d{4}-/ }])
})

t.test('options name no credentials, with a user name or without; a typed name still binds the sign-in to its user', async (t) => {
  const { client } = await startApp(t)
  const c = client()
  const authn = authenticator()
  await signIn(c, 'alice')
  const first = await addPasskey(c, authn)
  const second = await addPasskey(c, authn)
  t.equal(first.res.status, 201)
  t.equal(second.res.status, 201)

  const discoverable = await loginOptions(c)
  t.equal(discoverable.allowCredentials, undefined)
  t.equal(discoverable.rpId, 'localhost')
  t.equal(discoverable.userVerification, 'required')
  const named = await loginOptions(c, { user: 'alice' })
  t.equal(named.allowCredentials, undefined, 'the browser finds the (discoverable) passkey without a list')

  await c.fetch('/auth/logout')
  const res = await passkeyLogin(c, authn, second.credential, { user: 'alice' })
  t.equal(res.status, 200)
  t.match(await res.json(), { name: 'alice' })
  const other = await passkeyLogin(c, authn, first.credential, { user: 'bob' })
  t.equal(other.status, 403, 'alice\'s passkey does not answer for bob')
  t.match(await other.json(), { code: 'GATEHOUSE_CREDENTIALS' })
})

t.test('login options for a name tell nothing of its passkeys: the same answer for several, none, or no account', async (t) => {
  // The passkey store counts its lookups: options must not consult it (the timing would tell).
  const inner = new MemoryPasskeyStore()
  let lookups = 0
  const store = {
    add: inner.add.bind(inner),
    get: async (id: string) => { lookups++; return await inner.get(id) },
    list: async (userId: string) => { lookups++; return await inner.list(userId) },
    use: inner.use.bind(inner),
    remove: inner.remove.bind(inner),
    close: inner.close.bind(inner)
  }
  const app = await startApp(t, { store })
  const c = app.client()
  const authn = authenticator()
  await signIn(c, 'alice')
  const { credential } = await addPasskey(c, authn)
  t.equal((await addPasskey(c, authn)).res.status, 201, 'alice holds two passkeys')
  await c.fetch('/auth/logout')

  lookups = 0
  const answers: Record<string, Record<string, unknown>> = {}
  for (const name of ['alice', 'bob', 'nobody']) {
    const { challenge, ...rest } = await loginOptions(app.client(), { user: name }) as unknown as Record<string, unknown>
    t.match(challenge, /^[A-Za-z0-9_-]{20,}$/, 'a fresh challenge')
    answers[name] = rest
  }
  t.equal(lookups, 0, 'the passkey store was not asked')
  t.same(answers.bob, answers.alice, 'a user without passkeys gets what a user with two gets')
  t.same(answers.nobody, answers.alice, 'a name of nobody gets the same')
  t.notOk('allowCredentials' in answers.alice!, 'no credential ids, count or transports')

  const res = await passkeyLogin(c, authn, credential, { user: 'nobody' })
  t.equal(res.status, 403)
  t.match(await res.json(), { code: 'GATEHOUSE_CREDENTIALS' })
  t.equal(c.jar.get('JWT'), undefined)
})

t.test('the sign-in keeps aud, session and from of the options request', async (t) => {
  const { client } = await startApp(t, {}, { audiences: ['site-a'] })
  const c = client()
  const authn = authenticator()
  await c.fetch('/auth/local/login?aud=site-a', { method: 'POST', json: { user: 'alice', passwd: 'alice-secret' } })
  const { credential } = await addPasskey(c, authn)
  await c.fetch('/auth/logout')

  const forbidden = await c.fetch('/auth/passkey/login/options', { method: 'POST', json: { aud: 'site-b' } })
  t.equal(forbidden.status, 403, 'an audience outside the list is refused before any challenge is issued')
  t.equal(forbidden.headers.getSetCookie().length, 0)

  const res = await passkeyLogin(c, authn, credential, { aud: 'site-a', session: '1', from: 'http://localhost:8080/after' })
  t.equal(res.status, 303)
  t.equal(res.headers.get('location'), 'http://localhost:8080/after')
  const jwt = res.headers.getSetCookie().map(parseSetCookie).find((k) => k.name === 'JWT')!
  t.equal(jwt.attrs['max-age'], undefined, 'session-only cookie')
  const user = await c.fetch('/auth/user', { headers: xsrf(c) })
  t.equal(user.status, 200)
})

/** alice (with a passkey) and bob, both signed in with their passwords. */
async function aliceAndBob (t: Test, opts: PasskeyProviderOptions = {}): Promise<{ store: MemoryPasskeyStore; alice: Client; bob: Client; authn: SoftAuthenticator; credential: SoftCredential }> {
  const store = new MemoryPasskeyStore()
  const { client } = await startApp(t, { ...opts, store })
  const alice = client()
  const bob = client()
  const authn = authenticator()
  await signIn(alice, 'alice')
  await signIn(bob, 'bob')
  const { credential } = await addPasskey(alice, authn)
  return { store, alice, bob, authn, credential }
}

t.test('a user deletes a passkey; another user cannot; a deleted passkey signs nobody in', async (t) => {
  const { store, alice, bob, authn, credential } = await aliceAndBob(t)

  const foreign = await bob.fetch(`/auth/passkey/credentials/${credential.id}`, { method: 'DELETE', headers: xsrf(bob) })
  t.equal(foreign.status, 404, 'another user\'s passkey answers as an unknown one')
  t.match(await foreign.json(), { code: 'GATEHOUSE_NOT_FOUND' })
  t.ok(await store.get(credential.id), 'still there')

  const noXsrf = await alice.fetch(`/auth/passkey/credentials/${credential.id}`, { method: 'DELETE' })
  t.equal(noXsrf.status, 401, 'a cookie session needs the XSRF header')
  t.match(await noXsrf.json(), { code: 'GATEHOUSE_XSRF' })
  t.ok(await store.get(credential.id))

  const malformed = await alice.fetch('/auth/passkey/credentials/not%20an%20id', { method: 'DELETE', headers: xsrf(alice) })
  t.equal(malformed.status, 400)

  const del = await alice.fetch(`/auth/passkey/credentials/${credential.id}`, { method: 'DELETE', headers: xsrf(alice) })
  t.equal(del.status, 200)
  t.same(await del.json(), { status: 'deleted', id: credential.id })
  t.equal(await store.get(credential.id), undefined)
  t.same(await (await alice.fetch('/auth/passkey/credentials', { headers: xsrf(alice) })).json(), [])

  await alice.fetch('/auth/logout')
  const res = await passkeyLogin(alice, authn, credential)
  t.equal(res.status, 401)
  t.match(await res.json(), { code: 'GATEHOUSE_CREDENTIALS' })
})

t.test('a user holds at most maxPerUser passkeys; a passkey registered already is refused', async (t) => {
  const { store, alice, bob, authn, credential } = await aliceAndBob(t, { maxPerUser: 1 })
  const full = await registerOptions(alice)
  t.equal(full.status, 409)
  t.match(await full.json(), { code: 'GATEHOUSE_CONFLICT' })

  // A client that ignores excludeCredentials and offers alice's credential for bob.
  const again = await addPasskey(bob, authn, { reuse: credential })
  t.equal(again.res.status, 409)
  t.match(await again.res.json(), { code: 'GATEHOUSE_CONFLICT' })
  const aliceId = (await (await alice.fetch('/auth/user', { headers: xsrf(alice) })).json() as { id: string }).id
  t.equal((await store.get(credential.id))?.userId, aliceId, 'still alice\'s')
  t.same(await (await bob.fetch('/auth/passkey/credentials', { headers: xsrf(bob) })).json(), [])
})

t.test('excludeCredentials lists the user\'s passkeys, so an authenticator is not registered twice', async (t) => {
  const { client } = await startApp(t)
  const c = client()
  const authn = authenticator()
  await signIn(c, 'alice')
  const { credential } = await addPasskey(c, authn)
  const opts = await (await registerOptions(c)).json() as { excludeCredentials: Array<{ id: string }> }
  t.same(opts.excludeCredentials.map((e) => e.id), [credential.id])
})

t.test('loadUser gives the current user at each sign-in, or refuses it', async (t) => {
  let allowed = true
  const app = await startApp(t, { loadUser: (u) => allowed ? { ...u, email: 'alice@example.com' } : null })
  const { c, authn, credential } = await withPasskey(app, 'alice')
  const ok = await passkeyLogin(c, authn, credential)
  t.equal(ok.status, 200)
  t.match(await ok.json(), { name: 'alice', email: 'alice@example.com' })
  await c.fetch('/auth/logout')
  allowed = false
  const refused = await passkeyLogin(c, authn, credential)
  t.equal(refused.status, 403)
  t.match(await refused.json(), { code: 'GATEHOUSE_CREDENTIALS' })
  t.equal(c.jar.get('JWT'), undefined)
})

t.test('two sign-ins racing with one authenticator and one counter value: one wins', async (t) => {
  const app = await startApp(t)
  const { authn, credential } = await withPasskey(app, 'alice')
  for (let round = 1; round <= 3; round++) {
    const browsers = [app.client(), app.client(), app.client()]
    const answers = []
    for (const b of browsers) answers.push(authn.get(await loginOptions(b), credential, { counter: round * 10 }))
    const results = await Promise.all(browsers.map((b, i) => b.fetch('/auth/passkey/login', { method: 'POST', json: answers[i] })))
    t.same(results.map((r) => r.status).sort(), [200, 401, 401], `round ${round}`)
    for (const r of results.filter((x) => x.status === 401)) t.match(await r.json(), { code: 'GATEHOUSE_PASSKEY' })
  }
})
