/**
 * Custom OAuth2/OIDC providers against a real third-party OpenID Provider: the `oidc-provider` package, started
 * here on 127.0.0.1 with PKCE required, its development login and consent pages, and RS256 ID tokens. The test
 * browser signs in through those pages. Shows: discovery-based registration, explicit custom registration with
 * two clients of one server under different names, PKCE enforced by the server, our state, nonce and
 * response-issuer checks, discovery failures and reserved names. Providers are registered as plugins
 * (`oidcProvider`, `oauth2Provider`) and through `fastify.auth.addOidcProvider` / `addCustomProvider`.
 */
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { exportJWK, generateKeyPair } from 'jose'
import { userId } from '../../../lib/user.js'
import { discoverOidc, oauth2Provider, oidcProvider } from '../../../providers/index.js'
import { APP_URL, bootApp, bootError, currentUser, startApp } from '../../helpers/oauth2-app.js'
import type { Browser } from '../../helpers/oauth2-browser.js'
import { signInAt } from '../../helpers/oidc-server.js'
import { coreOf } from '../../../plugins/core/signin/internals.js'

interface OidcServer { callback(): (req: IncomingMessage, res: ServerResponse) => void }
type OidcServerClass = new (issuer: string, config: Record<string, unknown>) => OidcServer
// The package ships no type declarations; only its constructor and callback() are used.
const { default: Provider } = await import('oidc-provider' as string) as { default: OidcServerClass }

const NAMES: Record<string, string> = { alice: 'Alice Liddell', bob: 'Bob Builder' }
const CLIENTS = {
  main: { cid: 'gatehouse-main', csecret: randomBytes(24).toString('base64url') },
  second: { cid: 'gatehouse-second', csecret: randomBytes(24).toString('base64url') }
}

const http = createServer()
await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
const ISSUER = `http://127.0.0.1:${(http.address() as { port: number }).port}`
t.teardown(() => new Promise<void>((resolve) => { http.closeAllConnections(); http.close(() => resolve()) }))

const { privateKey } = await generateKeyPair('RS256', { extractable: true })
const op = new Provider(ISSUER, {
  clients: [
    { client_id: CLIENTS.main.cid, client_secret: CLIENTS.main.csecret, redirect_uris: [`${APP_URL}/auth/oidc/callback`, `${APP_URL}/auth/oidc-wrapped/callback`, `${APP_URL}/auth/corp/callback`], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' },
    { client_id: CLIENTS.second.cid, client_secret: CLIENTS.second.csecret, redirect_uris: [`${APP_URL}/auth/corp-eu/callback`], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_post' }
  ],
  pkce: { required: () => true },
  claims: { openid: ['sub'], profile: ['name', 'picture'] },
  findAccount: async (_ctx: unknown, id: string) => ({
    accountId: id,
    claims: async () => ({ sub: id, name: NAMES[id] ?? id, picture: `https://pictures.example/${id}.png` })
  }),
  cookies: { keys: [randomBytes(32).toString('hex')] },
  jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] },
  features: { devInteractions: { enabled: true } }
})
http.on('request', op.callback())

const testApp = await startApp(async (app) => {
  await app.register(oidcProvider, { name: 'oidc', ...CLIENTS.main, issuer: ISSUER })
  app.auth.addOidcProvider('oidc-wrapped', CLIENTS.main, { issuer: ISSUER })
  const doc = await discoverOidc(ISSUER)
  const corpMap = (d: Record<string, unknown>) => ({ id: String(d.sub), name: typeof d.name === 'string' ? `corp:${d.name}` : undefined })
  await app.register(oauth2Provider, { name: 'corp', ...CLIENTS.main, endpoint: doc.endpoint, infoURL: doc.infoURL!, oidc: doc.oidc!, scopes: ['openid', 'profile'], mapUser: corpMap })
  app.auth.addCustomProvider('corp-eu', CLIENTS.second, { endpoint: doc.endpoint, oidc: doc.oidc!, scopes: ['openid', 'profile'], tokenAuth: 'post', mapUser: corpMap })
})
t.teardown(testApp.close)

/** The provider's redirect to our callback, not followed (for tampering tests). */
async function callbackUrlFor (browser: Browser, provider: string, login: string): Promise<URL> {
  const start = await browser.request(`${APP_URL}/auth/${provider}/login`)
  const saved = browser.hosts.get('app.test')!
  browser.hosts.delete('app.test') // the browser now cannot reach the app: navigation stops at the callback redirect
  try {
    const nav = await signInAt(browser, ISSUER, start.headers.get('location')!, login)
    const hop = nav.hops.at(-1)!
    if (hop.location === undefined || !hop.location.startsWith(`${APP_URL}/auth/${provider}/callback`)) throw new Error(`no callback redirect: ${JSON.stringify(nav.hops)}`)
    return new URL(hop.location)
  } finally {
    browser.hosts.set('app.test', saved)
  }
}

t.test('discovery-based provider: full login through the real OpenID Provider', async (t) => {
  const browser = testApp.browser()
  const nav = await signInAt(browser, ISSUER, `${APP_URL}/auth/oidc/login?site=portal`, 'alice')
  t.equal(nav.url.split('?')[0], `${APP_URL}/auth/oidc/callback`)
  t.equal(nav.res.status, 200, nav.body)
  t.same(JSON.parse(nav.body), { id: userId('oidc', 'alice'), name: 'Alice Liddell' })
  t.equal(testApp.avatars.at(-1), 'https://pictures.example/alice.png', 'picture from userinfo to the avatar proxy')
  const authorize = new URL(nav.hops[0]!.location!)
  t.equal(authorize.origin, ISSUER)
  t.equal(authorize.searchParams.get('code_challenge_method'), 'S256')
  t.ok(authorize.searchParams.get('nonce'))
  t.ok(authorize.searchParams.get('state'))
  const me = await currentUser(browser)
  t.equal(me.status, 200)
  t.equal(me.body.name, 'Alice Liddell')
})

t.test('discovery-based provider added through fastify.auth.addOidcProvider: discovered at start, full login', async (t) => {
  t.same(testApp.app.auth.providers(), ['oidc', 'oidc-wrapped', 'corp', 'corp-eu'], 'every provider mounted, in registration order')
  const nav = await signInAt(testApp.browser(), ISSUER, `${APP_URL}/auth/oidc-wrapped/login`, 'bob')
  t.equal(nav.res.status, 200, nav.body)
  t.same(JSON.parse(nav.body), { id: userId('oidc-wrapped', 'bob'), name: 'Bob Builder' })
})

t.test('custom providers: two clients of one server under different names, basic and post client auth', async (t) => {
  const a = await signInAt(testApp.browser(), ISSUER, `${APP_URL}/auth/corp/login`, 'bob')
  t.equal(a.res.status, 200, a.body)
  t.same(JSON.parse(a.body), { id: userId('corp', 'bob'), name: 'corp:Bob Builder' })
  // No infoURL: the verified ID-token claims are mapped (oidc-provider puts only `sub` there by default);
  // this client is registered for client_secret_post only, so the login also proves that method.
  const b = await signInAt(testApp.browser(), ISSUER, `${APP_URL}/auth/corp-eu/login`, 'bob')
  t.equal(b.res.status, 200, b.body)
  const user = JSON.parse(b.body)
  t.equal(user.id, userId('corp-eu', 'bob'))
  t.match(user.name, /^noname_[0-9a-f]{8}$/, 'no name claim: placeholder name')
  t.not(userId('corp', 'bob'), userId('corp-eu', 'bob'), 'ids never collide across provider names')
})

t.test('the server enforces PKCE: no challenge, or a substituted verifier, fails', async (t) => {
  const res = await fetch(`${ISSUER}/auth?${new URLSearchParams({ response_type: 'code', client_id: CLIENTS.main.cid, redirect_uri: `${APP_URL}/auth/oidc/callback`, scope: 'openid', state: 's', nonce: 'n' })}`, { redirect: 'manual' })
  const to = new URL(res.headers.get('location')!)
  t.equal(to.searchParams.get('error'), 'invalid_request', 'authorization without code_challenge refused by the server')
  t.match(to.searchParams.get('error_description'), /requires PKCE/)

  // Code injection: the code is presented with a handshake whose verifier is not the one it was issued for.
  const browser = testApp.browser()
  const cb = await callbackUrlFor(browser, 'oidc', 'alice')
  const hs = browser.cookieFor(cb.href, 'gatehouse-oauth2-oidc')!
  const payload = JSON.parse(Buffer.from(hs.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>
  const forged = await coreOf(testApp.app).tokens.signPurpose('handshake', { provider: 'oidc', state: payload.state, nonce: payload.nonce, codeVerifier: randomBytes(32).toString('base64url') }, 60_000)
  const res2 = await fetch(`${testApp.browser().hosts.get('app.test')}${cb.pathname}${cb.search}`, { headers: { cookie: `gatehouse-oauth2-oidc=${forged}` } })
  t.equal(res2.status, 400)
  t.match(await res2.json(), { error: 'authorization code rejected', details: 'invalid_grant', code: 'GATEHOUSE_BAD_REQUEST' })
})

t.test('our checks on real responses: nonce, state, issuer', async (t) => {
  // Same state and verifier (so the server is satisfied), another nonce: the ID token must be refused.
  let browser = testApp.browser()
  let cb = await callbackUrlFor(browser, 'oidc', 'alice')
  const hs = browser.cookieFor(cb.href, 'gatehouse-oauth2-oidc')!
  const payload = JSON.parse(Buffer.from(hs.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>
  const otherNonce = await coreOf(testApp.app).tokens.signPurpose('handshake', { provider: 'oidc', state: payload.state, codeVerifier: payload.codeVerifier, nonce: 'another-nonce' }, 60_000)
  const res = await fetch(`${testApp.browser().hosts.get('app.test')}${cb.pathname}${cb.search}`, { headers: { cookie: `gatehouse-oauth2-oidc=${otherNonce}` } })
  t.equal(res.status, 401)
  t.same(await res.json(), { error: 'id token rejected', details: 'nonce mismatch', code: 'GATEHOUSE_UNAUTHORIZED' })

  browser = testApp.browser()
  cb = await callbackUrlFor(browser, 'oidc', 'alice')
  t.equal(cb.searchParams.get('iss'), ISSUER, 'the server names itself (RFC 9207)')
  const wrongState = new URL(cb)
  wrongState.searchParams.set('state', 'forged-state')
  let r = await browser.request(wrongState.href)
  t.equal(r.status, 403)
  t.match(await r.json(), { error: 'state mismatch', code: 'GATEHOUSE_STATE_MISMATCH' })

  browser = testApp.browser()
  cb = await callbackUrlFor(browser, 'oidc', 'alice')
  cb.searchParams.set('iss', 'https://evil.example')
  r = await browser.request(cb.href)
  t.equal(r.status, 400)
  t.match(await r.json(), { error: 'issuer mismatch', code: 'GATEHOUSE_BAD_REQUEST' })
  t.equal((await currentUser(browser)).status, 401, 'no session')
})

t.test('discovery failures: an OptionsError naming oidc.issuer; the app does not start', async (t) => {
  const issuerError = { name: 'OptionsError', code: 'GATEHOUSE_OPTION', option: 'oidc.issuer' }
  await t.rejects(discoverOidc(`${ISSUER}/other`), issuerError, 'no discovery document there (404)')
  // A discovery document naming another issuer (mix-up), otherwise complete: served by a tiny server.
  const liar = createServer((_req, res) => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ issuer: ISSUER, authorization_endpoint: `${ISSUER}/auth`, token_endpoint: `${ISSUER}/token`, jwks_uri: `${ISSUER}/jwks` })) })
  await new Promise<void>((resolve) => liar.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => liar.close(() => resolve())))
  const liarUrl = `http://127.0.0.1:${(liar.address() as { port: number }).port}`
  await t.rejects(discoverOidc(liarUrl), issuerError, 'a document naming another issuer')
  await t.rejects(discoverOidc('http://127.0.0.1:1'), issuerError, 'an unreachable issuer')
  await t.rejects(discoverOidc('ftp://x'), issuerError, 'not http(s)')
  // 0.0.0.0 is no loopback name: refused before any request (were it fetched, the error would say unreachable).
  await t.rejects(discoverOidc('http://0.0.0.0:1/realms/dev'), { ...issuerError, message: /an http:\/\/ issuer is accepted only on loopback/ }, 'plain http off loopback')

  t.match(await bootError(async (app) => { await app.register(oidcProvider, { name: 'liar', ...CLIENTS.main, issuer: liarUrl }) }), issuerError, 'plugin: discovery runs at start')
  t.match(await bootError((app) => { app.auth.addOidcProvider('liar', CLIENTS.main, { issuer: liarUrl }) }), issuerError, 'wrapper: discovery runs at start')
  t.match(await bootError(async (app) => { await app.register(oidcProvider, { name: 'x', ...CLIENTS.main } as never) }), issuerError, 'no issuer')
  t.match(await bootError(async (app) => { await app.register(oidcProvider, { name: 'x', cid: '', csecret: 's', issuer: ISSUER }) }), { code: 'GATEHOUSE_OPTION', option: 'oidc.x.cid' })
  t.match(await bootError(async (app) => { await app.register(oidcProvider, { name: 'x', ...CLIENTS.main, issuer: ISSUER, endpoint: {} } as never) }), { code: 'GATEHOUSE_OPTION', option: 'oidc.x.endpoint' }, 'an option oidcProvider does not take')
  t.throws(() => testApp.app.auth.addOidcProvider('late', CLIENTS.main, { issuer: ISSUER }), { code: 'GATEHOUSE_OPTION', option: 'providers' }, 'after start')
})

t.test('custom providers: reserved and bad names, missing fields; a good one mounts', async (t) => {
  const doc = await discoverOidc(ISSUER)
  const opts = { endpoint: doc.endpoint, infoURL: doc.infoURL!, mapUser: (d: Record<string, unknown>) => ({ id: String(d.sub) }) }
  const optionError = (option: string) => ({ name: 'OptionsError', code: 'GATEHOUSE_OPTION', option })
  for (const name of ['github', 'google', 'twitter', 'apple', 'telegram', 'dev']) {
    t.match(await bootError(async (app) => { await app.register(oauth2Provider, { name, ...CLIENTS.main, ...opts } as never) }), optionError(`oauth2.${name}.name`), `plugin: "${name}" is reserved`)
    t.match(await bootError((app) => { app.auth.addCustomProvider(name, CLIENTS.main, opts) }), optionError(`oauth2.${name}.name`), `wrapper: "${name}" is reserved`)
  }
  t.match(await bootError((app) => { app.auth.addCustomProvider('bad name', CLIENTS.main, opts) }), optionError('oauth2.bad name.name'))
  t.match(await bootError((app) => { app.auth.addCustomProvider('x', CLIENTS.main, { ...opts, infoURL: undefined } as never) }), optionError('oauth2.x.infoURL'), 'infoURL is required unless OpenID Connect')
  t.match(await bootError((app) => { app.auth.addCustomProvider('x', { cid: '', csecret: 's' }, opts) }), optionError('oauth2.x.cid'))
  t.match(await bootError(async (app) => { await app.register(oauth2Provider, { name: 'x', ...CLIENTS.main, ...opts, endpoint: { authURL: 'nope', tokenURL: doc.endpoint.tokenURL } }) }), optionError('oauth2.x.authURL'))
  t.match(await bootError(async (app) => { await app.register(oauth2Provider, { name: 'x', ...CLIENTS.main, ...opts, mapUser: 'sub' } as never) }), optionError('oauth2.x.mapUser'))
  t.match(await bootError(async (app) => { await app.register(oauth2Provider, { name: 'x', ...CLIENTS.main, ...opts, scope: ['openid'] } as never) }), optionError('oauth2.x.scope'), 'a misspelt option')

  const app = await bootApp()
  t.teardown(() => app.close())
  t.throws(() => app.auth.addCustomProvider('x', null as never, opts), optionError('oauth2.x.client'), 'no client: refused at the call')
  await app.register(oauth2Provider, { name: 'x', ...CLIENTS.main, ...opts })
  app.auth.addCustomProvider('y', CLIENTS.main, opts)
  await app.ready()
  t.same(app.auth.providers(), ['x', 'y'])
})
