/**
 * Native app sign-in (RFC 8252) driven by openid-client: the authorization request with PKCE S256, the browser's
 * session turning it into a code sent to a private-use scheme, the code exchanged for a pair; the attacks (a code
 * intercepted by another app without the verifier, a replayed code, a redirect URI not registered) refused.
 */
import t from 'tap'
import * as oidc from 'openid-client'
import { clientsApp } from '../../helpers/clients-app.js'

const s = await clientsApp({ loginPage: '/sign-in' })
t.teardown(s.close)
const REDIRECT = 'com.example.app:/callback'

/** The cookie header of a signed-in browser. */
async function browserOf (name: string): Promise<string> {
  const r = await s.app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: name, passwd: 'x' } })
  return r.cookies.map((c) => `${c.name}=${c.value}`).join('; ')
}

async function authorize (config: oidc.Configuration, cookie: string | undefined, extra: Record<string, string> = {}) {
  const verifier = oidc.randomPKCECodeVerifier()
  const state = oidc.randomState()
  const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, ...extra })
  const r = await s.app.inject({ url: url.pathname + url.search, headers: cookie === undefined ? {} : { cookie } })
  return { r, verifier, state, location: r.headers.location as string | undefined }
}

t.test('a signed-in browser sends the app a code; openid-client exchanges it with its verifier for a pair', async (t) => {
  const config = await s.discover()
  t.equal(config.serverMetadata().authorization_endpoint, `${s.base}/auth/authorize`)
  const cookie = await browserOf('ann')
  const { r, verifier, state, location } = await authorize(config, cookie)
  t.equal(r.statusCode, 302)
  t.match(location, /^com\.example\.app:\/callback\?code=[\w-]{43}&state=/)
  const tokens = await oidc.authorizationCodeGrant(config, new URL(location!), { pkceCodeVerifier: verifier, expectedState: state })
  t.ok(tokens.refresh_token)
  const me = await s.app.inject({ url: '/private', headers: { authorization: `Bearer ${tokens.access_token}` } })
  t.same(me.json(), { name: 'ann' })
  const claims = await s.app.auth.tokens.parse(tokens.access_token)
  t.not(claims.jti, (await s.app.auth.tokens.parse(/JWT=([^;]+)/.exec(cookie)![1]!)).jti, 'the app\'s family is a session of its own')
  t.ok(s.events.some((e) => e.type === 'token.issued' && e.reason === 'authorization_code'))

  const replay = await oidc.authorizationCodeGrant(config, new URL(location!), { pkceCodeVerifier: verifier, expectedState: state }).then(() => undefined, (e: unknown) => e)
  t.equal((replay as oidc.ResponseBodyError).error, 'invalid_grant', 'a replayed code is refused…')
  t.equal((await s.app.inject({ url: '/private', headers: { authorization: `Bearer ${tokens.access_token}` } })).statusCode, 401, '…and what it bought is revoked')
})

t.test('a browser without a session goes to the app\'s sign-in page and comes back', async (t) => {
  const config = await s.discover()
  const { r } = await authorize(config, undefined)
  t.equal(r.statusCode, 302)
  const login = new URL(r.headers.location as string)
  t.equal(login.origin + login.pathname, `${s.base}/sign-in`)
  t.match(login.searchParams.get('from'), /^\/auth\/authorize\?/)
  const back = await s.app.inject({ url: login.searchParams.get('from')!, headers: { cookie: await browserOf('bob') } })
  t.match(back.headers.location, /^com\.example\.app:\/callback\?code=/)
})

t.test('a code intercepted by another app, without the verifier, is refused and not consumed', async (t) => {
  const config = await s.discover()
  const { location, verifier, state } = await authorize(config, await browserOf('cat'))
  const code = new URL(location!).searchParams.get('code')!
  const form = { 'content-type': 'application/x-www-form-urlencoded' }
  const exchange = async (fields: Record<string, string>) => await s.app.inject({ method: 'POST', url: '/auth/token', headers: form, payload: new URLSearchParams({ grant_type: 'authorization_code', client_id: 'mobile', code, redirect_uri: REDIRECT, ...fields }).toString() })
  for (const [name, fields] of [
    ['no verifier', {}],
    ['a verifier of its own', { code_verifier: oidc.randomPKCECodeVerifier() }],
    ['the challenge as verifier (plain)', { code_verifier: await oidc.calculatePKCECodeChallenge(verifier) }],
    ['another redirect_uri', { code_verifier: verifier, redirect_uri: 'com.evil.app:/callback' }],
    ['another client', { code_verifier: verifier, client_id: 'cli' }]
  ] as const) {
    const r = await exchange(fields)
    t.equal(r.statusCode, name === 'another client' ? 400 : 400, name)
    t.match(r.json().error, name === 'no verifier' ? 'invalid_request' : name === 'another client' ? 'unauthorized_client' : 'invalid_grant', name)
    t.equal(r.headers['cache-control'], 'no-store')
  }
  const ok = await oidc.authorizationCodeGrant(config, new URL(location!), { pkceCodeVerifier: verifier, expectedState: state })
  t.ok(ok.access_token, 'the owner still exchanges its code: the refusals consumed nothing')
})

t.test('bad authorization requests: never a redirect to an unregistered URI; PKCE S256 required', async (t) => {
  const cookie = await browserOf('dan')
  const challenge = await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier())
  const base = { response_type: 'code', client_id: 'mobile', redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256', state: 'st' }
  const get = async (q: Record<string, string | string[]>) => {
    const search = new URLSearchParams()
    for (const [k, v] of Object.entries(q)) for (const one of [v].flat()) search.append(k, one)
    return await s.app.inject({ url: `/auth/authorize?${search.toString()}`, headers: { cookie } })
  }
  for (const [name, q] of [
    ['unknown client', { ...base, client_id: 'evil' }],
    ['a device client', { ...base, client_id: 'cli' }],
    ['an unregistered redirect', { ...base, redirect_uri: 'https://evil.example/cb' }],
    ['a registered one plus a path', { ...base, redirect_uri: `${REDIRECT}/x` }],
    ['a registered one plus a query', { ...base, redirect_uri: `${REDIRECT}?next=https://evil.example` }],
    ['loopback on another host', { ...base, redirect_uri: 'http://localhost:5000/callback' }],
    ['repeated redirect_uri', { ...base, redirect_uri: [REDIRECT, 'https://evil.example/cb'] }],
    ['no redirect_uri', { ...base, redirect_uri: '' }]
  ] as const) {
    const r = await get(q)
    t.equal(r.statusCode, 400, `${name}: 400`)
    t.equal(r.headers.location, undefined, `${name}: no redirect`)
    t.equal(r.json().code, 'GATEHOUSE_OAUTH')
  }
  const loopback = await get({ ...base, redirect_uri: 'http://127.0.0.1:51234/callback' })
  t.match(loopback.headers.location, /^http:\/\/127\.0\.0\.1:51234\/callback\?code=/, 'loopback on any port (RFC 8252 §7.3)')
  for (const [name, q, error] of [
    ['plain', { ...base, code_challenge_method: 'plain' }, 'invalid_request'],
    ['no method', { ...base, code_challenge_method: '' }, 'invalid_request'],
    ['no challenge', { ...base, code_challenge: '' }, 'invalid_request'],
    ['a short challenge', { ...base, code_challenge: 'abc' }, 'invalid_request'],
    ['response_type token', { ...base, response_type: 'token' }, 'unsupported_response_type']
  ] as const) {
    const r = await get(q)
    t.equal(r.statusCode, 302, name)
    const back = new URL(r.headers.location as string)
    t.equal(`${back.protocol}${back.pathname}`, REDIRECT, `${name}: the error goes to the registered URI`)
    t.equal(back.searchParams.get('error'), error, name)
    t.equal(back.searchParams.get('state'), 'st')
    t.equal(back.searchParams.get('code'), null, `${name}: no code`)
  }
})
