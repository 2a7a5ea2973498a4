/**
 * Every bad input to the local OAuth2 server gets a clear 4xx JSON error (or, after the client and its
 * redirect URI are known good, an RFC 6749 §4.1.2.1 error redirect), and changes nothing.
 */
import t from 'tap'
import type { Test } from 'tap'
import { createHash, randomBytes } from 'node:crypto'
import FakeTimers from '@sinonjs/fake-timers'
import { startDevServer, startLocalOAuth2Server, DEV_CLIENT } from '../../servers/index.js'
import { client } from '../helpers/client.js'

const CALLBACK = 'http://127.0.0.1:1/auth/custom/callback'
const CID = 'app'
const SECRET = 's3cret'

// No redirectUris: the server takes the callbacks its providers register through providerOptions (two here,
// so that a request must name one).
const auto = await startLocalOAuth2Server({ url: 'http://127.0.0.1:0', client: { cid: CID, csecret: SECRET } })
t.teardown(auto.close)
auto.providerOptions.onRedirectUri(CALLBACK)
auto.providerOptions.onRedirectUri(`${CALLBACK}2`)
const registered = await startLocalOAuth2Server({ url: 'http://127.0.0.1:0', client: { cid: CID, csecret: SECRET }, redirectUris: [CALLBACK, `${CALLBACK}2`] })
t.teardown(registered.close)
const dev = await startDevServer({ port: 0, redirectUris: [CALLBACK] })
t.teardown(dev.close)

type Json = Record<string, unknown>

function authorizeUrl (base: string, params: Record<string, string>, drop: string[] = []): string {
  const q = new URLSearchParams({ response_type: 'code', client_id: CID, redirect_uri: CALLBACK, state: 'st', code_challenge: PKCE.challenge, code_challenge_method: 'S256', ...params })
  for (const d of drop) q.delete(d)
  return `${base}/login/oauth/authorize?${q.toString()}`
}

function pkce (): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}
/** The PKCE pair of the requests that do not bring their own (the servers require PKCE). */
const PKCE = pkce()

/** A fresh code from the auto-login server. */
async function code (params: Record<string, string> = {}): Promise<string> {
  const res = await fetch(authorizeUrl(auto.url, params), { redirect: 'manual' })
  const c = new URL(res.headers.get('location')!).searchParams.get('code')
  if (res.status !== 302 || c === null) throw new Error(`authorize answered ${res.status}`)
  return c
}

async function token (form: Record<string, string>, headers: Record<string, string> = {}, base = auto.url): Promise<Response> {
  return await fetch(`${base}/login/oauth/access_token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ code_verifier: PKCE.verifier, ...form }).toString()
  })
}

const basic = (id: string, secret: string): string => 'Basic ' + Buffer.from(`${id}:${secret}`).toString('base64')
const good = { grant_type: 'authorization_code', redirect_uri: CALLBACK, client_id: CID, client_secret: SECRET }

/** Asserts a JSON error in both the package's and RFC 6749's shape; returns the body. */
async function isError (t: Test, res: Response, status: number, error: string, details?: RegExp): Promise<Json> {
  t.equal(res.status, status, `status ${status}`)
  t.match(res.headers.get('content-type'), /^application\/json/)
  t.equal(res.headers.get('cache-control'), 'no-store')
  const body = await res.json() as Json
  t.equal(body.error, error)
  t.equal(typeof body.details, 'string')
  t.equal(body.details, body.error_description)
  if (details !== undefined) t.match(body.details, details)
  return body
}

/** Asserts an error redirect to the client. */
function isErrorRedirect (t: Test, res: Response, error: string, state: string | null = 'st'): URL {
  t.equal(res.status, 302)
  const loc = new URL(res.headers.get('location')!)
  t.equal(loc.origin + loc.pathname, CALLBACK)
  t.equal(loc.searchParams.get('error'), error)
  t.ok(loc.searchParams.get('error_description'))
  t.equal(loc.searchParams.get('state'), state)
  t.equal(loc.searchParams.get('code'), null, 'no code issued')
  return loc
}

t.test('authorize: bad client or redirect_uri is answered to the browser, never redirected', async (t) => {
  const cases: Array<[string, Record<string, string>, string[], number, string, RegExp]> = [
    ['missing client_id', {}, ['client_id'], 400, 'invalid_request', /client_id is required/],
    ['unknown client_id', { client_id: 'other' }, [], 400, 'invalid_client', /unknown client_id/],
    ['missing redirect_uri', {}, ['redirect_uri'], 400, 'invalid_request', /redirect_uri is required/],
    ['relative redirect_uri', { redirect_uri: '/cb' }, [], 400, 'invalid_request', /not an absolute URL/],
    ['javascript: redirect_uri', { redirect_uri: 'javascript:alert(1)' }, [], 400, 'invalid_request', /http or https/],
    ['redirect_uri with fragment', { redirect_uri: `${CALLBACK}#x` }, [], 400, 'invalid_request', /fragment/],
    ['redirect_uri with credentials', { redirect_uri: 'http://u:p@127.0.0.1:1/cb' }, [], 400, 'invalid_request', /credentials/],
    ['repeated client_id', { client_id: CID }, [], 400, 'invalid_request', /given once/]
  ]
  for (const [name, params, drop, status, error, details] of cases) {
    let url = authorizeUrl(auto.url, params, drop)
    if (name === 'repeated client_id') url += `&client_id=${CID}`
    const res = await fetch(url, { redirect: 'manual' })
    t.equal(res.headers.get('location'), null, `${name}: not redirected`)
    await isError(t, res, status, error, details)
  }
})

t.test('authorize: a redirect_uri outside the registered ones is refused; with several registered it is required', async (t) => {
  await isError(t, await fetch(authorizeUrl(registered.url, { redirect_uri: `${CALLBACK}/evil` }), { redirect: 'manual' }), 400, 'invalid_request', /not registered/)
  await isError(t, await fetch(authorizeUrl(registered.url, {}, ['redirect_uri']), { redirect: 'manual' }), 400, 'invalid_request', /redirect_uri is required/)
  const ok = await fetch(authorizeUrl(registered.url, { redirect_uri: `${CALLBACK}2` }), { redirect: 'manual' })
  t.equal(ok.status, 302)
  t.ok(new URL(ok.headers.get('location')!).searchParams.get('code'))
})

t.test('authorize: other bad parameters come back to the client as error redirects with the state', async (t) => {
  const cases: Array<[string, Record<string, string>, string[], string]> = [
    ['missing response_type', {}, ['response_type'], 'invalid_request'],
    ['implicit grant', { response_type: 'token' }, [], 'unsupported_response_type'],
    ['plain PKCE', { code_challenge: pkce().challenge, code_challenge_method: 'plain' }, [], 'invalid_request'],
    ['no PKCE (RFC 9700 §2.1.1: required)', {}, ['code_challenge', 'code_challenge_method'], 'invalid_request'],
    ['PKCE without method', { code_challenge: pkce().challenge }, ['code_challenge_method'], 'invalid_request'],
    ['malformed challenge', { code_challenge: 'short', code_challenge_method: 'S256' }, [], 'invalid_request'],
    ['method without challenge', { code_challenge_method: 'S256' }, ['code_challenge'], 'invalid_request'],
    ['bad scope characters', { scope: 'user "x"' }, [], 'invalid_scope'],
    ['over-long nonce', { nonce: 'n'.repeat(3000) }, [], 'invalid_request']
  ]
  for (const [name, params, drop, error] of cases) {
    t.comment(name)
    isErrorRedirect(t, await fetch(authorizeUrl(auto.url, params, drop), { redirect: 'manual' }), error)
  }
  // A state that cannot be returned (given twice) is not returned.
  isErrorRedirect(t, await fetch(authorizeUrl(auto.url, {}) + '&state=again', { redirect: 'manual' }), 'invalid_request', null)
})

t.test('login form: missing, unknown, reused and foreign-browser submits are refused', async (t) => {
  const c = client(dev.url)
  const page = await c.fetch(authorizeUrl('', { client_id: DEV_CLIENT.cid }))
  t.equal(page.status, 200)
  const request = /name="request" value="([^"]+)"/.exec(await page.text())![1]!

  await isError(t, await c.fetch('/login/oauth/authorize', { method: 'POST', form: { user: 'a' } }), 400, 'invalid_request', /request is required/)
  await isError(t, await c.fetch('/login/oauth/authorize', { method: 'POST', form: { request: 'x'.repeat(43), user: 'a' } }), 400, 'invalid_request', /unknown login request/)
  // Another browser (no cookie, or its own cookie) cannot use this form: login CSRF.
  const stranger = client(dev.url)
  await isError(t, await stranger.fetch('/login/oauth/authorize', { method: 'POST', form: { request, user: 'mallory' } }), 403, 'invalid_request', /not shown to this browser/)
  await stranger.fetch(authorizeUrl('', { client_id: DEV_CLIENT.cid }))
  t.ok(stranger.jar.header() !== '' && stranger.jar.header() !== c.jar.header())
  await isError(t, await stranger.fetch('/login/oauth/authorize', { method: 'POST', form: { request, user: 'mallory' } }), 403, 'invalid_request')
  // Refused names re-show the form (400) and keep it usable.
  const ctl = await c.fetch('/login/oauth/authorize', { method: 'POST', form: { request, user: 'a\u0007b' } })
  t.equal(ctl.status, 400)
  t.match(await ctl.text(), /control characters/)
  await isError(t, await c.fetch('/login/oauth/authorize', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' }), 415, 'invalid_request')
  // The genuine browser signs in once; the same form cannot be replayed.
  const ok = await c.fetch('/login/oauth/authorize', { method: 'POST', form: { request, user: 'alice' } })
  t.equal(ok.status, 303)
  await isError(t, await c.fetch('/login/oauth/authorize', { method: 'POST', form: { request, user: 'alice' } }), 400, 'invalid_request', /unknown login request/)
})

t.test('login form: an expired form is refused', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const c = client(dev.url)
  const page = await c.fetch(authorizeUrl('', { client_id: DEV_CLIENT.cid }))
  const request = /name="request" value="([^"]+)"/.exec(await page.text())![1]!
  clock.tick(10 * 60_000)
  await isError(t, await c.fetch('/login/oauth/authorize', { method: 'POST', form: { request, user: 'alice' } }), 400, 'invalid_request', /expired/)
})

t.test('token: malformed requests', async (t) => {
  const c = await code()
  const post = async (body: string, type: string): Promise<Response> => await fetch(`${auto.url}/login/oauth/access_token`, { method: 'POST', headers: { 'content-type': type }, body })
  await isError(t, await post('x', 'text/plain'), 415, 'invalid_request')
  await isError(t, await post('{"grant_type":', 'application/json'), 400, 'invalid_request')
  await isError(t, await post('[1,2]', 'application/json'), 400, 'invalid_request', /form or a JSON object/)
  await isError(t, await post(`code=${'x'.repeat(20_000)}`, 'application/x-www-form-urlencoded'), 413, 'invalid_request')
  await isError(t, await token({ ...good, code: c, grant_type: '' }), 400, 'invalid_request', /grant_type is required/)
  await isError(t, await token({ ...good, code: c, grant_type: 'password' }), 400, 'unsupported_grant_type')
  await isError(t, await token({ ...good, code: '' }), 400, 'invalid_request', /code is required/)
  await isError(t, await token({ ...good, code: 'nonsense' }), 400, 'invalid_grant', /unknown authorization code/)
  await isError(t, await fetch(`${auto.url}/login/oauth/access_token?code=${c}`), 404, 'not_found')
  // None of this spent the code.
  t.equal((await token({ ...good, code: c })).status, 200)
})

t.test('token: client authentication failures', async (t) => {
  const c = await code()
  const { client_id: _i, client_secret: _s, ...noAuth } = good
  await isError(t, await token({ ...noAuth, code: c }), 401, 'invalid_client', /client authentication is required/)
  const unknownBasic = await token({ ...noAuth, code: c }, { authorization: basic('other', SECRET) })
  t.match(unknownBasic.headers.get('www-authenticate'), /^Basic realm=/)
  await isError(t, unknownBasic, 401, 'invalid_client', /unknown client/)
  const wrongPost = await token({ ...good, code: c, client_secret: 'nope' })
  t.equal(wrongPost.headers.get('www-authenticate'), null, 'no Basic challenge when Basic was not used')
  await isError(t, wrongPost, 401, 'invalid_client', /wrong client secret/)
  await isError(t, await token({ ...noAuth, code: c }, { authorization: basic(CID, 'nope') }), 401, 'invalid_client', /wrong client secret/)
  await isError(t, await token({ ...noAuth, client_id: CID, code: c }), 401, 'invalid_client', /client_secret is required/)
  await isError(t, await token({ ...noAuth, code: c }, { authorization: 'Bearer abc' }), 401, 'invalid_client', /HTTP Basic/)
  await isError(t, await token({ ...noAuth, code: c }, { authorization: 'Basic ' + Buffer.from('nocolon').toString('base64') }), 401, 'invalid_client', /client_id:client_secret/)
  await isError(t, await token({ ...noAuth, code: c }, { authorization: 'Basic ' + Buffer.from('%E0%A4%A:x').toString('base64') }), 401, 'invalid_client', /form-urlencoded/)
  await isError(t, await token({ ...good, code: c }, { authorization: basic(CID, SECRET) }), 400, 'invalid_request', /one client authentication method/)
  await isError(t, await token({ ...noAuth, client_id: 'other', code: c }, { authorization: basic(CID, SECRET) }), 401, 'invalid_client', /differs/)
  // The code is still good for the real client, with form-urlencoded Basic credentials.
  t.equal((await token({ ...noAuth, code: c }, { authorization: basic(CID, SECRET) })).status, 200)
})

t.test('token: redirect_uri must repeat the authorization request', async (t) => {
  await isError(t, await token({ ...good, code: await code(), redirect_uri: `${CALLBACK}x` }), 400, 'invalid_grant', /differs/)
  const { redirect_uri: _r, ...noUri } = good
  await isError(t, await token({ ...noUri, code: await code() }), 400, 'invalid_grant', /redirect_uri is required/)
})

t.test('token: PKCE is verified', async (t) => {
  const { verifier, challenge } = pkce()
  const withPkce = { code_challenge: challenge, code_challenge_method: 'S256' }
  await isError(t, await token({ ...good, code: await code(withPkce), code_verifier: '' }), 400, 'invalid_grant', /code_verifier is required/)
  await isError(t, await token({ ...good, code: await code(withPkce), code_verifier: pkce().verifier }), 400, 'invalid_grant', /does not match/)
  await isError(t, await token({ ...good, code: await code(withPkce), code_verifier: 'short' }), 400, 'invalid_grant', /43\.\.128/)
  // A failed attempt spends the code: a thief gets one guess.
  const c = await code(withPkce)
  await isError(t, await token({ ...good, code: c, code_verifier: pkce().verifier }), 400, 'invalid_grant')
  await isError(t, await token({ ...good, code: c, code_verifier: verifier }), 400, 'invalid_grant', /already used/)
  t.equal((await token({ ...good, code: await code(withPkce), code_verifier: verifier })).status, 200)
})

t.test('token: a reused code is refused and revokes the token it bought', async (t) => {
  const c = await code()
  const first = await token({ ...good, code: c })
  t.equal(first.status, 200)
  const { access_token: at } = await first.json() as { access_token: string }
  t.equal((await fetch(`${auto.url}/user`, { headers: { authorization: `Bearer ${at}` } })).status, 200)
  await isError(t, await token({ ...good, code: c }), 400, 'invalid_grant', /already used/)
  await isError(t, await fetch(`${auto.url}/user`, { headers: { authorization: `Bearer ${at}` } }), 401, 'invalid_token', /unknown or revoked/)
})

t.test('token: an expired code is refused; userinfo: an expired token is refused', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const late = await code()
  clock.tick(60_000)
  await isError(t, await token({ ...good, code: late }), 400, 'invalid_grant', /expired/)
  const res = await token({ ...good, code: await code() })
  const { access_token: at } = await res.json() as { access_token: string }
  clock.tick(3_599_000)
  t.equal((await fetch(`${auto.url}/user`, { headers: { authorization: `Bearer ${at}` } })).status, 200)
  clock.tick(1_000)
  const expired = await fetch(`${auto.url}/user`, { headers: { authorization: `Bearer ${at}` } })
  t.match(expired.headers.get('www-authenticate'), /error="invalid_token"/)
  await isError(t, expired, 401, 'invalid_token', /expired/)
})

t.test('userinfo: missing or bad bearer tokens', async (t) => {
  const none = await fetch(`${auto.url}/user`)
  t.match(none.headers.get('www-authenticate'), /^Bearer realm=/)
  await isError(t, none, 401, 'invalid_request', /Bearer token is required/)
  await isError(t, await fetch(`${auto.url}/user`, { headers: { authorization: basic(CID, SECRET) } }), 401, 'invalid_request', /must be a Bearer token/)
  await isError(t, await fetch(`${auto.url}/user`, { headers: { authorization: 'Bearer ' } }), 401, 'invalid_request')
  await isError(t, await fetch(`${auto.url}/user`, { headers: { authorization: `Bearer ${'a'.repeat(43)}` } }), 401, 'invalid_token', /unknown or revoked/)
  await isError(t, await fetch(`${auto.url}/user?access_token=${'a'.repeat(43)}`), 401, 'invalid_request', /Bearer token is required/)
})

t.test('unknown routes and pictures are 404 JSON', async (t) => {
  await isError(t, await fetch(`${auto.url}/nope`), 404, 'not_found')
  await isError(t, await fetch(`${auto.url}/picture/../../etc/passwd`), 404, 'not_found')
  await isError(t, await fetch(`${auto.url}/picture/${'g'.repeat(40)}.png`), 404, 'not_found', /no such picture/)
})
