/**
 * DPoP (RFC 9449) for the registered clients, driven by the standard client, openid-client 6 with its DPoP handle
 * (`getDPoPHandle`), over `inject` (the fixture's fetch): the device grant and the native code flow (`dpop_jkt`) get
 * DPoP-bound pairs (`token_type` DPoP, `cnf.jkt` the key's thumbprint), the refresh grant keeps the binding, the
 * protected routes (authenticate, admin, rbac, optionalUser, `/auth/user`) take the token only with a proof of its
 * key, the server nonce costs the client one round trip, and `dpop: 'required'` issues nothing unbound.
 */
import t from 'tap'
import * as oidc from 'openid-client'
import { clientsApp } from '../../helpers/clients-app.js'

const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const s = await clientsApp({
  login: { page: '/sign-in' },
  clients: [
    { id: 'mobile', kind: 'native', name: 'Demo phone app', redirectUris: ['com.example.app:/callback'] },
    { id: 'cli', kind: 'device', name: 'Demo CLI' },
    { id: 'cli-dpop', kind: 'device', name: 'Demo CLI (DPoP)', dpop: 'required' },
    { id: 'cli-off', kind: 'device', name: 'Old CLI', dpop: 'off' }
  ]
}, {
  setup: (app) => {
    app.get('/admin', { preHandler: app.auth.admin }, async () => ({ admin: true }))
    app.get('/editor', { preHandler: app.auth.rbac(['editor']) }, async () => ({ editor: true }))
    app.get('/maybe', { preHandler: app.auth.optionalUser }, async (req) => ({ user: req.user?.name ?? null }))
  }
})
t.teardown(s.close)

/** The token endpoint's requests as openid-client sent them: what each answered, and whether it carried a nonce. */
const calls: Array<{ path: string; status: number; error?: string; nonce: boolean }> = []

async function configOf (clientId: string): Promise<oidc.Configuration> {
  const config = await s.discover(clientId)
  config[oidc.customFetch] = async (url, options) => {
    const answer = await s.fetch(url, options as RequestInit)
    const proof = new Headers(options.headers).get('dpop')
    const nonce = proof === null ? false : 'nonce' in JSON.parse(Buffer.from(proof.split('.')[1]!, 'base64url').toString())
    const error = answer.status >= 400 ? ((await answer.clone().json().catch(() => ({}))) as { error?: string }).error : undefined
    calls.push({ path: new URL(url).pathname, status: answer.status, error, nonce })
    return answer
  }
  return config
}

async function signedIn (name: string): Promise<{ cookie: string; xsrf: string }> {
  const r = await s.app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: name, passwd: 'x' } })
  const jar = Object.fromEntries(r.cookies.map((c) => [c.name, c.value]))
  return { cookie: `JWT=${jar.JWT!}; XSRF-TOKEN=${jar['XSRF-TOKEN']!}`, xsrf: jar['XSRF-TOKEN']! }
}

async function approve (userCode: string, name: string): Promise<void> {
  const user = await signedIn(name)
  const r = await s.app.inject({
    method: 'POST',
    url: '/auth/device',
    headers: { ...FORM, cookie: user.cookie, origin: s.base, 'sec-fetch-site': 'same-origin' },
    payload: new URLSearchParams({ user_code: userCode, action: 'approve', xsrf: user.xsrf }).toString()
  })
  if (r.statusCode !== 200) throw new Error(`approval answered ${r.statusCode}`)
}

/** A device sign-in of `clientId` approved by `name`, polled by openid-client with `options` (its DPoP handle). */
async function deviceSignIn (clientId: string, name: string, options: oidc.DeviceAuthorizationGrantPollOptions = {}): Promise<oidc.TokenEndpointResponse> {
  const config = await configOf(clientId)
  const da = await oidc.initiateDeviceAuthorization(config, {})
  await approve(da.user_code, name)
  // Approved before the first poll, so the poll need not wait the 5 s interval the server asked for.
  return await oidc.pollDeviceAuthorizationGrant(config, { ...da, interval: 0 }, undefined, options)
}

const get = async (path: string, headers: Record<string, string>): Promise<Response> => await s.fetch(`${s.base}${path}`, { headers })

t.test('metadata names the proof algorithms (RFC 8414, RFC 9449 §5.1)', async (t) => {
  const meta = (await configOf('cli')).serverMetadata()
  t.same(meta.dpop_signing_alg_values_supported, ['ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512'])
})

t.test('device grant with openid-client\'s DPoP handle: one nonce round trip, a DPoP-bound pair, protected calls with proofs', async (t) => {
  const config = await configOf('cli-dpop')
  const key = await oidc.randomDPoPKeyPair('ES256')
  const dpop = oidc.getDPoPHandle(config, key)
  calls.length = 0
  const tokens = await deviceSignIn('cli-dpop', 'ann', { DPoP: dpop })
  t.same(calls.filter((c) => c.path === '/auth/token').map((c) => [c.status, c.error, c.nonce]), [[400, 'use_dpop_nonce', false], [200, undefined, true]],
    'the first poll is told the nonce, openid-client retries once with it, and gets the pair')
  t.equal(tokens.token_type, 'dpop')
  const claims = await s.app.auth.tokens.parse(tokens.access_token)
  t.same(claims.cnf, { jkt: await dpop.calculateThumbprint() }, 'the access token is bound to the key\'s RFC 7638 thumbprint')
  t.equal(claims.client_id, 'cli-dpop')

  const me = await oidc.fetchProtectedResource(config, tokens.access_token, new URL(`${s.base}/private`), 'GET', null, undefined, { DPoP: dpop })
  t.equal(me.status, 200)
  t.same(await me.json(), { name: 'ann' }, 'a protected call with openid-client: Authorization: DPoP and a proof')
  const user = await oidc.fetchProtectedResource(config, tokens.access_token, new URL(`${s.base}/auth/user`), 'GET', null, undefined, { DPoP: dpop })
  t.match(await user.json(), { name: 'ann' }, '/auth/user too')
  const maybe = await oidc.fetchProtectedResource(config, tokens.access_token, new URL(`${s.base}/maybe?x=1`), 'GET', null, undefined, { DPoP: dpop })
  t.same(await maybe.json(), { user: 'ann' }, 'optionalUser attaches the user; htu is compared without the query')

  const asBearer = await get('/private', { authorization: `Bearer ${tokens.access_token}` })
  t.equal(asBearer.status, 401, 'the same token as a Bearer token is refused')
  t.equal(asBearer.headers.get('www-authenticate'), 'DPoP error="invalid_token", error_description="this token is bound to a DPoP key: send it as Authorization: DPoP, with a proof signed by that key", algs="ES256 ES384 ES512 EdDSA Ed25519 PS256 PS384 PS512 RS256 RS384 RS512"')
  t.same(await (await get('/maybe', { authorization: `Bearer ${tokens.access_token}` })).json(), { user: null }, 'optionalUser attaches nobody for it')

  // The refresh grant keeps the binding: the same key, a new DPoP-bound pair.
  calls.length = 0
  const next = await oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP: dpop })
  t.same(calls.map((c) => [c.status, c.nonce]), [[200, true]], 'the handle kept the nonce: no extra round trip')
  t.equal(next.token_type, 'dpop')
  t.same((await s.app.auth.tokens.parse(next.access_token)).cnf, claims.cnf)
  const after = await oidc.fetchProtectedResource(config, next.access_token, new URL(`${s.base}/private`), 'GET', null, undefined, { DPoP: dpop })
  t.equal(after.status, 200)
  t.ok(s.events.some((e) => e.type === 'token.issued' && e.clientId === 'cli-dpop' && e.reason === 'device_code'))
})

t.test("a refresh with another key, or with none, is refused and audited; the owner's key still refreshes", async (t) => {
  const config = await configOf('cli')
  const dpop = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('EdDSA'))
  const tokens = await deviceSignIn('cli', 'bob', { DPoP: dpop })
  t.equal(tokens.token_type, 'dpop', 'an allowed client that sends a proof gets a bound pair (Ed25519 key)')
  const thief = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'))
  const stolen = await oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP: thief }).then(() => undefined, (e: unknown) => e)
  t.equal((stolen as oidc.ResponseBodyError).error, 'invalid_grant', 'another key: invalid_grant')
  t.match((stolen as oidc.ResponseBodyError).error_description, /bound to another DPoP key/)
  const bare = await oidc.refreshTokenGrant(config, tokens.refresh_token!).then(() => undefined, (e: unknown) => e)
  t.equal((bare as oidc.ResponseBodyError).error, 'invalid_grant', 'no proof: invalid_grant')
  t.match(s.events.filter((e) => e.type === 'token.refused' && e.clientId === 'cli').map((e) => e.reason), ['dpop_key', 'dpop_required'])
  const next = await oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP: dpop })
  t.equal(next.token_type, 'dpop', 'the refusals consumed nothing: the owner refreshes with its key')
  const rotated = await oidc.refreshTokenGrant(config, next.refresh_token!, undefined, { DPoP: thief }).then(() => undefined, (e: unknown) => e)
  t.equal((rotated as oidc.ResponseBodyError).error, 'invalid_grant', 'the rotated refresh token keeps the binding')
})

t.test('an unbound family refreshed with a proof is bound from then on', async (t) => {
  const config = await configOf('cli')
  const plain = await deviceSignIn('cli', 'fay')
  t.equal(plain.token_type, 'bearer')
  const dpop = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair())
  const bound = await oidc.refreshTokenGrant(config, plain.refresh_token!, undefined, { DPoP: dpop })
  t.equal(bound.token_type, 'dpop')
  t.same((await s.app.auth.tokens.parse(bound.access_token)).cnf, { jkt: await dpop.calculateThumbprint() })
  const bare = await oidc.refreshTokenGrant(config, bound.refresh_token!).then(() => undefined, (e: unknown) => e)
  t.equal((bare as oidc.ResponseBodyError).error, 'invalid_grant', 'its refresh token now needs the key')
})

t.test('dpop: required issues nothing unbound; dpop: off ignores proofs; allowed without a proof stays Bearer', async (t) => {
  const bare = await deviceSignIn('cli-dpop', 'cat').then(() => undefined, (e: unknown) => e)
  t.equal((bare as oidc.ResponseBodyError).error, 'invalid_dpop_proof', 'a required client polling without a proof')
  t.ok(s.events.some((e) => e.type === 'token.refused' && e.clientId === 'cli-dpop' && e.reason === 'dpop_required'))

  const offConfig = await configOf('cli-off')
  const off = await deviceSignIn('cli-off', 'cat', { DPoP: oidc.getDPoPHandle(offConfig, await oidc.randomDPoPKeyPair()) })
  t.equal(off.token_type, 'bearer', 'a client with dpop off gets Bearer tokens, proof or not')
  t.equal((await s.app.auth.tokens.parse(off.access_token)).cnf, undefined)

  const plain = await deviceSignIn('cli', 'cat')
  t.equal(plain.token_type, 'bearer')
  t.equal((await get('/private', { authorization: `Bearer ${plain.access_token}` })).status, 200)
  const config = await configOf('cli')
  const dpop = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair())
  const asDPoP = await oidc.fetchProtectedResource(config, plain.access_token, new URL(`${s.base}/private`), 'GET', null, undefined, { DPoP: dpop }).then(() => undefined, (e: unknown) => e)
  t.ok(asDPoP instanceof oidc.WWWAuthenticateChallengeError, 'an unbound token sent with the DPoP scheme is refused')
  t.match((asDPoP as oidc.WWWAuthenticateChallengeError).cause[0], { scheme: 'dpop', parameters: { error: 'invalid_token' } })
})

t.test('native code flow: dpop_jkt binds the code to the key (RFC 9449 §10); the pair is bound; logout takes a proof', async (t) => {
  const config = await configOf('mobile')
  const dpop = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('PS256'))
  const verifier = oidc.randomPKCECodeVerifier()
  const state = oidc.randomState()
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: 'com.example.app:/callback', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, dpop_jkt: await dpop.calculateThumbprint()
  })
  const browser = await signedIn('dan')
  const r = await s.app.inject({ url: url.pathname + url.search, headers: { cookie: browser.cookie } })
  t.equal(r.statusCode, 302)
  const back = new URL(r.headers.location as string)
  const other = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'))
  for (const [name, options] of [['another key', { DPoP: other }], ['no proof', {}]] as const) {
    const err = await oidc.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state }, undefined, options).then(() => undefined, (e: unknown) => e)
    t.equal((err as oidc.ResponseBodyError).error, 'invalid_grant', `the bound code with ${name}`)
  }
  const tokens = await oidc.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state }, undefined, { DPoP: dpop })
  t.equal(tokens.token_type, 'dpop', 'the key of dpop_jkt exchanges the code: the refusals consumed nothing')
  t.same((await s.app.auth.tokens.parse(tokens.access_token)).cnf, { jkt: await dpop.calculateThumbprint() })

  const logout = { method: 'POST' }
  const stolen = await s.fetch(`${s.base}/auth/logout`, { ...logout, headers: { authorization: `Bearer ${tokens.access_token}` } })
  t.equal(stolen.status, 200, 'a logout with the token alone answers as a logout without a session…')
  const me = await oidc.fetchProtectedResource(config, tokens.access_token, new URL(`${s.base}/private`), 'GET', null, undefined, { DPoP: dpop })
  t.equal(me.status, 200, '…and ended nothing: a stolen bound token signs nobody out')
  const own = await oidc.fetchProtectedResource(config, tokens.access_token, new URL(`${s.base}/auth/logout`), 'POST', null, undefined, { DPoP: dpop })
  t.equal(own.status, 200)
  const gone = await oidc.fetchProtectedResource(config, tokens.access_token, new URL(`${s.base}/private`), 'GET', null, undefined, { DPoP: dpop }).then(() => undefined, (e: unknown) => e)
  t.match((gone as oidc.WWWAuthenticateChallengeError).response?.status, 401, 'the client\'s own logout, with its proof, ends the session')
})

t.test('admin and rbac take a bound token with its proof; 403 in the DPoP scheme', async (t) => {
  const config = await configOf('cli-dpop')
  const dpop = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair())
  const tokens = await deviceSignIn('cli-dpop', 'eve', { DPoP: dpop })
  for (const path of ['/admin', '/editor']) {
    const err = await oidc.fetchProtectedResource(config, tokens.access_token, new URL(`${s.base}${path}`), 'GET', null, undefined, { DPoP: dpop }).then(() => undefined, (e: unknown) => e)
    t.equal((err as oidc.WWWAuthenticateChallengeError).response?.status, 403, `${path}: the proof holds, the role does not`)
    t.equal((err as oidc.WWWAuthenticateChallengeError).response?.headers.get('www-authenticate'), 'DPoP error="insufficient_scope"')
  }
})

t.test('dpop.nonce: all asks for the nonce at the routes too (401 use_dpop_nonce, one retry); false asks nowhere', async (t) => {
  const all = await clientsApp({ dpop: { nonce: 'all' } })
  t.teardown(all.close)
  const config = await all.discover('cli')
  const key = await oidc.randomDPoPKeyPair()
  const da = await oidc.initiateDeviceAuthorization(config, {})
  const user = await all.app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'gil', passwd: 'x' } })
  const jar = Object.fromEntries(user.cookies.map((c) => [c.name, c.value]))
  await all.app.inject({ method: 'POST', url: '/auth/device', headers: { ...FORM, cookie: `JWT=${jar.JWT!}; XSRF-TOKEN=${jar['XSRF-TOKEN']!}`, origin: all.base, 'sec-fetch-site': 'same-origin' }, payload: new URLSearchParams({ user_code: da.user_code, action: 'approve', xsrf: jar['XSRF-TOKEN']! }).toString() })
  const tokens = await oidc.pollDeviceAuthorizationGrant(config, { ...da, interval: 0 }, undefined, { DPoP: oidc.getDPoPHandle(config, key) })
  // A new handle of the same key has no nonce yet (as a CLI started again): its first call at a route is told one.
  const dpop = oidc.getDPoPHandle(config, key)
  const seen: Array<number | string> = []
  config[oidc.customFetch] = async (url, options) => {
    const r = await all.fetch(url, options as RequestInit)
    seen.push(r.status, r.headers.get('www-authenticate')?.split(',')[0] ?? '-')
    return r
  }
  const me = await oidc.fetchProtectedResource(config, tokens.access_token, new URL(`${all.base}/private`), 'GET', null, undefined, { DPoP: dpop })
  t.equal(me.status, 200)
  t.same(seen, [401, 'DPoP error="use_dpop_nonce"', 200, '-'], 'told the nonce, openid-client retried once with it')
  t.match(me.headers.get('dpop-nonce'), /^[\w-]{32}$/, 'every answer to a proof tells the current nonce')
  t.ok(all.events.some((e) => e.type === 'session.refused' && e.reason === 'dpop_nonce'))

  const none = await clientsApp({ dpop: { nonce: false } })
  t.teardown(none.close)
  const noneConfig = await none.discover('mobile')
  const seenNone: string[] = []
  noneConfig[oidc.customFetch] = async (url, options) => { const r = await none.fetch(url, options as RequestInit); seenNone.push(`${r.status} ${r.headers.get('dpop-nonce') ?? '-'}`); return r }
  const pair = await none.pair('gil')
  const refreshed = await oidc.refreshTokenGrant(noneConfig, pair.refresh_token, undefined, { DPoP: oidc.getDPoPHandle(noneConfig, await oidc.randomDPoPKeyPair()) })
  t.equal(refreshed.token_type, 'dpop')
  t.same(seenNone, ['200 -'], 'no nonce asked or told')
})

t.test('bad DPoP options fail registration naming the option', async (t) => {
  for (const [opts, option] of [
    [{ dpop: { algorithms: ['HS256'] } }, 'dpop.algorithms'],
    [{ dpop: { algorithms: [] } }, 'dpop.algorithms'],
    [{ dpop: { proofMaxAge: '10m' } }, 'dpop.proofMaxAge'],
    [{ dpop: { nonce: 'sometimes' } }, 'dpop.nonce'],
    [{ dpop: { nonces: 'all' } }, 'dpop.nonces'],
    [{ clients: [{ id: 'c', kind: 'device', dpop: 'yes' }] }, 'clients[0].dpop']
  ] as const) {
    const err = await clientsApp(opts as never).then(async (a) => { await a.close(); return undefined }, (e: unknown) => e)
    t.match(err, { name: 'OptionsError', option }, option)
  }
})
