/**
 * OpenID Connect Relying Party conformance cases (the OpenID Foundation's RP tests of the same names), against a
 * real OpenID Provider: the `oidc-provider` package on 127.0.0.1 (test/helpers/oidc-server.ts), with the test
 * browser through its login pages, and the app's `oidcProvider` configured by discovery.
 *
 * oidc-provider only issues well-formed ID tokens, so the malformed ones are made here: the token it issued is
 * taken from its token endpoint's answer (a middleware of the provider), changed, signed again with the
 * provider's own private key, and served in its place; each test says what it changed. Every refusal is a 401
 * JSON error, and no session.
 *
 * - rp-id_token-sub, rp-id_token-iat: an ID token without `sub`, without `iat` (OIDC Core §2: both required);
 * - rp-id_token-kid-absent-single-jwks: no `kid`, the provider publishes one key: signs in;
 * - rp-id_token-kid-absent-multiple-jwks: no `kid`, several keys published (OIDC Core §10.1: a `kid` is then
 *   required): refused, even when only one of them could verify it;
 * - rp-id_token-sig-none: `alg: none`;
 * - rp-discovery-issuer-not-matching-config: the discovery document names another issuer;
 * - rp-key-rotation-op-sign-key: the provider signs with a new key after a first login: the next login verifies
 *   with it (the key set is fetched again), and a token of the removed key is refused.
 */
import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import { CompactSign, importJWK, type JWK } from 'jose'
import { userId } from '../../../lib/user.js'
import { discoverOidc, oidcProvider } from '../../../providers/index.js'
import { APP_URL, bootError, currentUser, startApp, type TestApp } from '../../helpers/oauth2-app.js'
import type { Navigation } from '../../helpers/oauth2-browser.js'
import { signingKey, signInAt, startOidcServer, type StartedOidcServer } from '../../helpers/oidc-server.js'

const CLIENT = { cid: 'gatehouse-rp', csecret: randomBytes(24).toString('base64url') }

interface Rig { idp: StartedOidcServer; app: TestApp; jwksFetches(): number }

/** A provider with `keys` (default one RS256 key `k1`) and an app signing in through it, closed at the end of `t`. */
async function rig (t: Test, keys?: JWK[]): Promise<Rig> {
  let jwksFetches = 0
  const idp = await startOidcServer(() => ({
    clients: [{ client_id: CLIENT.cid, client_secret: CLIENT.csecret, redirect_uris: [`${APP_URL}/auth/oidc/callback`], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' }],
    claims: { openid: ['sub'], profile: ['name'] },
    findAccount: async (_ctx: unknown, id: string) => ({ accountId: id, claims: async () => ({ sub: id, name: `Name of ${id}` }) })
  }), (req) => { if (req.url === '/jwks') jwksFetches++; return false }, keys)
  t.teardown(idp.close)
  const app = await startApp(async (app) => { await app.register(oidcProvider, { name: 'oidc', ...CLIENT, issuer: idp.issuer }) })
  t.teardown(app.close)
  return { idp, app, jwksFetches: () => jwksFetches }
}

/** A whole login of `login` through the provider's pages; the answer of our callback, and the browser's session. */
async function login (r: Rig, user = 'alice'): Promise<{ nav: Navigation; session: number }> {
  const browser = r.app.browser()
  const nav = await signInAt(browser, r.idp.issuer, `${APP_URL}/auth/oidc/login`, user)
  if (!nav.url.startsWith(`${APP_URL}/auth/oidc/callback`)) throw new Error(`the login did not reach our callback: ${nav.url}`)
  return { nav, session: (await currentUser(browser)).status }
}

const part = (segment: string): Record<string, unknown> => JSON.parse(Buffer.from(segment, 'base64url').toString()) as Record<string, unknown>

/** `issued` with its header and claims changed, signed again with `key` (a private JWK of the provider). */
async function resign (issued: string, key: JWK, change: { header?: (h: Record<string, unknown>) => Record<string, unknown>; claims?: (c: Record<string, unknown>) => Record<string, unknown> }): Promise<string> {
  const [h, c] = issued.split('.') as [string, string]
  const header = (change.header ?? ((x) => x))(part(h))
  const claims = (change.claims ?? ((x) => x))(part(c))
  return await new CompactSign(Buffer.from(JSON.stringify(claims))).setProtectedHeader(header as { alg: string }).sign(await importJWK(key, String(header.alg)))
}

const without = (name: string) => (o: Record<string, unknown>): Record<string, unknown> => { const { [name]: _, ...rest } = o; return rest }

function assertRefused (t: Test, out: { nav: Navigation; session: number }, details: string | RegExp): void {
  t.equal(out.nav.res.status, 401, out.nav.body)
  t.match(JSON.parse(out.nav.body), { error: 'id token rejected', code: 'GATEHOUSE_UNAUTHORIZED', details })
  t.equal(out.session, 401, 'no session')
}

t.test('control: the ID token oidc-provider issues signs in, and names its key', async (t) => {
  const r = await rig(t)
  const seen: string[] = []
  r.idp.idToken = (issued) => { seen.push(issued); return issued }
  const out = await login(r)
  t.equal(out.nav.res.status, 200, out.nav.body)
  t.same(JSON.parse(out.nav.body), { id: userId('oidc', 'alice'), name: 'Name of alice' })
  t.equal(out.session, 200)
  t.match(part(seen[0]!.split('.')[0]!), { alg: 'RS256', kid: 'k1' })
  t.match(part(seen[0]!.split('.')[1]!), { sub: 'alice', iat: Number, exp: Number, nonce: String })
})

t.test('rp-id_token-sub and rp-id_token-iat: an ID token without sub, or without iat, is refused', async (t) => {
  const r = await rig(t)
  // The issued token's claims without `sub` (then without `iat`), signed again with the provider's key `k1`.
  r.idp.idToken = async (issued) => await resign(issued, r.idp.keys[0]!, { claims: without('sub') })
  assertRefused(t, await login(r), 'claim sub is missing or invalid')
  r.idp.idToken = async (issued) => await resign(issued, r.idp.keys[0]!, { claims: without('iat') })
  assertRefused(t, await login(r), 'claim iat is missing or invalid')
  r.idp.idToken = async (issued) => await resign(issued, r.idp.keys[0]!, {})
  t.equal((await login(r)).nav.res.status, 200, 'control: the same token signed again unchanged')
})

t.test('rp-id_token-kid-absent-single-jwks: no kid and one published key: signs in', async (t) => {
  const r = await rig(t)
  // The issued token's header without `kid`, signed again with the provider's only key.
  r.idp.idToken = async (issued) => await resign(issued, r.idp.keys[0]!, { header: without('kid') })
  const out = await login(r)
  t.equal(out.nav.res.status, 200, out.nav.body)
  t.equal(out.session, 200)
})

t.test('rp-id_token-kid-absent-multiple-jwks: no kid and several published keys: refused', async (t) => {
  // An RS256 and an ES256 key: a kid-less RS256 token could be verified by one of them alone, and must still
  // be refused (OIDC Core §10.1).
  const r = await rig(t, [await signingKey('rsa-1'), await signingKey('ec-1', 'ES256')])
  const seen: string[] = []
  r.idp.idToken = (issued) => { seen.push(issued); return issued }
  t.equal((await login(r)).nav.res.status, 200, 'control: the issued token, which names its key, signs in')
  t.equal(part(seen[0]!.split('.')[0]!).kid, 'rsa-1')
  r.idp.idToken = async (issued) => await resign(issued, r.idp.keys[0]!, { header: without('kid') })
  assertRefused(t, await login(r), 'the id token names no key (kid) and the provider publishes several')

  // Two RS256 keys: either could be meant.
  const two = await rig(t, [await signingKey('rsa-1'), await signingKey('rsa-2')])
  two.idp.idToken = async (issued) => await resign(issued, two.idp.keys[0]!, { header: without('kid') })
  assertRefused(t, await login(two), 'the id token names no key (kid) and the provider publishes several')
})

t.test('rp-id_token-sig-none: an unsigned ID token (alg none) is refused', async (t) => {
  const r = await rig(t)
  // The issued token's claims under {"alg":"none"} and an empty signature.
  r.idp.idToken = (issued) => `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${issued.split('.')[1]}.`
  assertRefused(t, await login(r), 'the id token\'s algorithm is not allowed')
  // The same with the provider's kid kept: no key is looked up for it either.
  r.idp.idToken = (issued) => `${Buffer.from(JSON.stringify({ alg: 'none', kid: 'k1' })).toString('base64url')}.${issued.split('.')[1]}.`
  assertRefused(t, await login(r), 'the id token\'s algorithm is not allowed')
})

t.test('rp-discovery-issuer-not-matching-config: a discovery document naming another issuer stops the start', async (t) => {
  const r = await rig(t)
  const port = new URL(r.idp.issuer).port
  const issuerError = { name: 'OptionsError', code: 'GATEHOUSE_OPTION', option: 'oidc.issuer' }
  // The provider names itself http://127.0.0.1:<port>; asked under another spelling of its address, or with a
  // trailing slash, its document names an issuer that is not the one configured.
  for (const asked of [`http://localhost:${port}`, `${r.idp.issuer}/`]) {
    await t.rejects(discoverOidc(asked), { ...issuerError, message: new RegExp(`names issuer "${r.idp.issuer}"`) }, asked)
    t.match(await bootError(async (app) => { await app.register(oidcProvider, { name: 'oidc', ...CLIENT, issuer: asked }) }), issuerError, `${asked}: the app does not start`)
  }
  t.equal((await discoverOidc(r.idp.issuer)).oidc?.issuer, r.idp.issuer, 'control: the issuer as the provider names itself')
})

t.test('rp-key-rotation-op-sign-key: after the provider changes its signing key, the next login verifies with the new one', async (t) => {
  const r = await rig(t)
  const seen: string[] = []
  r.idp.idToken = (issued) => { seen.push(issued); return issued }
  t.equal((await login(r)).nav.res.status, 200, 'first login, key k1')
  t.equal(r.jwksFetches(), 1)
  const old = r.idp.keys[0]!

  r.idp.rotate([await signingKey('k2')])
  const next = await login(r, 'bob')
  t.equal(next.nav.res.status, 200, `the next login, right after the rotation: ${next.nav.body}`)
  t.same(JSON.parse(next.nav.body), { id: userId('oidc', 'bob'), name: 'Name of bob' })
  t.equal(part(seen[1]!.split('.')[0]!).kid, 'k2', 'signed with the new key')
  t.equal(r.jwksFetches(), 2, 'the key set was fetched again for the new key')
  t.equal((await login(r)).nav.res.status, 200, 'and again')
  t.equal(r.jwksFetches(), 2, 'from the cache')

  // A token of the removed key (signed by it, as a stolen key would): its key is no longer published.
  r.idp.idToken = async (issued) => await resign(issued, old, { header: (h) => ({ ...h, kid: 'k1' }) })
  assertRefused(t, await login(r), 'no key of the provider matches the id token')
})
