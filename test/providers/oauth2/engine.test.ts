/**
 * The OAuth2 engine's security checks and failure answers, over real HTTP against local stand-ins: the
 * handshake cookie, one-time browser-bound state, PKCE, provider errors, token endpoint and userinfo
 * failures (timeouts included), ID-token verification, `from` redirects, session-only cookies, logout.
 * Every bad input must answer a 4xx (or a 502/504 for a broken provider) JSON error with its `code` and create
 * no session. The providers are `oauth2Provider` plugins.
 */
import t, { type Test } from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { userId } from '../../../lib/user.js'
import { funcLogger } from '../../../lib/logging/logger.js'
import { oauth2Provider } from '../../../providers/index.js'
import { MemoryStateStore, StateStoreError } from '../../../stores/index.js'
import { startStandin } from '../../helpers/oauth2-standin.js'
import { APP_URL, currentUser, startApp, type TestApp } from '../../helpers/oauth2-app.js'
import type { Browser } from '../../helpers/oauth2-browser.js'

const gh = await startStandin({ clientId: 'gh-cid', clientSecret: 'gh-secret', tokenAuth: 'post', pkce: true, userinfo: { id: 42, login: 'mona', name: 'Mona Lisa', avatar_url: 'https://avatars.example/42' } })
t.teardown(gh.close)
const goo = await startStandin({
  clientId: 'g-cid', clientSecret: 'g-secret', tokenAuth: 'post', pkce: true, oidc: true,
  idClaims: { sub: 'g-7' }, userinfo: { sub: 'g-7', name: 'Gee', picture: 'https://pics.example/g7' }
})
t.teardown(goo.close)

// The providers' deadline: far away for every call that gets an answer (a loaded machine must not turn one into a
// timeout); the one test of the deadline has an app of its own whose stand-in never answers.
const FAR_MS = 120_000
const TIMEOUT_MS = 400
// Every login of this file comes from one address within a minute: above the default login limit, which is
// tested on its own (test/lib/throttle, test/e2e/redis/lockout.test.ts).
const appOpts = { allowedRedirectHosts: ['partner.example'], rateLimit: { login: { max: 10_000 } } }
/** The github stand-in's endpoints, for `oauth2Provider`. */
const ghEndpoints = { authURL: `${gh.url}/authorize`, tokenURL: `${gh.url}/token`, infoURL: `${gh.url}/userinfo` }
const testApp: TestApp = await startApp(async (app) => {
  await app.register(oauth2Provider, { name: 'github', cid: 'gh-cid', csecret: 'gh-secret', ...ghEndpoints, timeout: FAR_MS })
  await app.register(oauth2Provider, { name: 'google', cid: 'g-cid', csecret: 'g-secret', authURL: `${goo.url}/authorize`, tokenURL: `${goo.url}/token`, infoURL: `${goo.url}/userinfo`, jwksURL: `${goo.url}/jwks`, issuer: goo.url, timeout: FAR_MS })
}, appOpts)
t.teardown(testApp.close)
/** The same github provider with a short deadline: for the stand-in that never answers. */
const deadlineApp: TestApp = await startApp(async (app) => {
  await app.register(oauth2Provider, { name: 'github', cid: 'gh-cid', csecret: 'gh-secret', ...ghEndpoints, timeout: TIMEOUT_MS })
}, appOpts)
t.teardown(deadlineApp.close)

/** Runs login and the provider's authorize step; returns the callback URL the provider sends the browser to. */
async function beginLogin (browser: Browser, provider: string, query = ''): Promise<URL> {
  const login = await browser.request(`${APP_URL}/auth/${provider}/login${query}`)
  if (login.status !== 302) throw new Error(`login answered ${login.status}`)
  const authz = await browser.request(login.headers.get('location')!)
  if (authz.status !== 302) throw new Error(`authorize answered ${authz.status}: ${await authz.text()}`)
  return new URL(authz.headers.get('location')!)
}

/** Asserts a JSON error answer (status, error, code, details) and that the answer sets no session. */
async function assertRefused (t: Test, res: Response, status: number, error: string | RegExp, code: string, details?: RegExp): Promise<void> {
  t.equal(res.status, status, `status ${status}`)
  t.match(res.headers.get('content-type'), /^application\/json/)
  t.equal(res.headers.get('cache-control'), 'no-store')
  const body = await res.json() as Record<string, unknown>
  t.match(body, details === undefined ? { error, code } : { error, code, details })
  t.equal(body.code, code, `code ${code}`)
  t.equal(res.headers.getSetCookie().filter((c) => c.startsWith('JWT=') && !/JWT=;/.test(c)).length, 0, 'no session cookie set')
}

async function assertNoSession (t: Test, browser: Browser): Promise<void> {
  t.equal(browser.cookieFor(`${APP_URL}/`, 'JWT'), undefined, 'browser holds no session')
  t.equal((await currentUser(browser)).status, 401, '/auth/user: not logged in')
}

t.test('login: handshake cookie and authorization request', async (t) => {
  const browser = testApp.browser()
  const res = await browser.request(`${APP_URL}/auth/github/login?from=/home&site=s1`)
  t.equal(res.status, 302)
  t.equal(res.headers.get('cache-control'), 'no-store')
  const to = new URL(res.headers.get('location')!)
  t.equal(to.origin + to.pathname, `${gh.url}/authorize`)
  t.equal(to.searchParams.get('response_type'), 'code')
  t.equal(to.searchParams.get('redirect_uri'), `${APP_URL}/auth/github/callback`)
  t.match(to.searchParams.get('state'), /^[A-Za-z0-9_-]{43}$/, '256-bit random state')
  t.match(to.searchParams.get('code_challenge'), /^[A-Za-z0-9_-]{43}$/)
  t.equal(to.searchParams.get('code_challenge_method'), 'S256')
  const attrs = browser.cookieAttrs('gatehouse-oauth2-github')!
  t.ok(attrs, 'per-provider handshake cookie')
  t.equal(attrs.path, '/auth/github', 'sent only to this provider\'s routes')
  t.equal(attrs.httponly, true)
  t.equal(attrs.samesite, 'Lax')
  t.notOk(attrs.secure, 'not Secure on an http url')
  t.equal(attrs['max-age'], '600')
  t.notOk(browser.cookieFor(`${APP_URL}/auth/google/callback`, 'gatehouse-oauth2-github'), 'not sent to another provider')
  const again = await testApp.browser().request(`${APP_URL}/auth/github/login`)
  t.not(new URL(again.headers.get('location')!).searchParams.get('state'), to.searchParams.get('state'), 'fresh state per login')
})

t.test('login: Secure handshake cookie on an https url', async (t) => {
  const app = await startApp(async (app) => {
    await app.register(oauth2Provider, { name: 'github', cid: 'gh-cid', csecret: 'gh-secret', ...ghEndpoints })
  }, { url: 'https://secure.test' })
  t.teardown(app.close)
  const browser = app.browser()
  const res = await browser.request('https://secure.test/auth/github/login')
  t.equal(new URL(res.headers.get('location')!).searchParams.get('redirect_uri'), 'https://secure.test/auth/github/callback')
  t.equal(browser.cookieAttrs('gatehouse-oauth2-github')?.secure, true)
})

t.test('login: repeated, oversized or control-character parameters are a 400', async (t) => {
  const BAD = 'GATEHOUSE_BAD_REQUEST'
  await assertRefused(t, await testApp.browser().request(`${APP_URL}/auth/github/login?from=/a&from=/b`), 400, 'bad request', BAD, /from must be given once/)
  await assertRefused(t, await testApp.browser().request(`${APP_URL}/auth/github/login?site=${'x'.repeat(300)}`), 400, 'bad request', BAD, /site is too long/)
  await assertRefused(t, await testApp.browser().request(`${APP_URL}/auth/github/login?site=a%0Ab`), 400, 'bad request', BAD, /control characters/)
})

t.test('state: missing, wrong, without the cookie, forged, of another provider', async (t) => {
  let browser = testApp.browser()
  let cb = await beginLogin(browser, 'github')
  cb.searchParams.delete('state')
  await assertRefused(t, await browser.request(cb.href), 400, 'missing state', 'GATEHOUSE_BAD_REQUEST')
  await assertNoSession(t, browser)

  browser = testApp.browser()
  cb = await beginLogin(browser, 'github')
  cb.searchParams.set('state', 'A'.repeat(43))
  await assertRefused(t, await browser.request(cb.href), 403, 'state mismatch', 'GATEHOUSE_STATE_MISMATCH')
  t.equal(browser.cookieFor(cb.href, 'gatehouse-oauth2-github'), undefined, 'a failed callback ends the handshake')
  await assertNoSession(t, browser)

  // Login CSRF: the attacker's own callback URL opened in the victim's browser (which has no handshake).
  cb = await beginLogin(testApp.browser(), 'github')
  const victim = testApp.browser()
  await assertRefused(t, await victim.request(cb.href), 400, 'no login in progress', 'GATEHOUSE_HANDSHAKE')
  await assertNoSession(t, victim)

  cb = await beginLogin(testApp.browser(), 'github')
  const forged = await fetch(testApp.browser().hosts.get('app.test') + cb.pathname + cb.search, { headers: { cookie: 'gatehouse-oauth2-github=eyJhbGciOiJub25lIn0.eyJwIjoiZ2l0aHViIn0.' } })
  await assertRefused(t, forged, 403, 'login handshake expired or invalid', 'GATEHOUSE_HANDSHAKE')

  // A google handshake presented to the github callback (sent by hand: its Path keeps browsers from it).
  const gb = testApp.browser()
  await beginLogin(gb, 'google')
  const googleHs = gb.cookieFor(`${APP_URL}/auth/google/callback`, 'gatehouse-oauth2-google')!
  const state = JSON.parse(Buffer.from(googleHs.split('.')[1]!, 'base64url').toString()).state as string
  const cross = await fetch(`${testApp.browser().hosts.get('app.test')}/auth/github/callback?code=x&state=${state}`, { headers: { cookie: `gatehouse-oauth2-github=${googleHs}` } })
  await assertRefused(t, cross, 403, 'login handshake expired or invalid', 'GATEHOUSE_HANDSHAKE', /another provider/)
})

t.test('state: reused (callback replayed with the same cookie) is refused', async (t) => {
  const browser = testApp.browser()
  const cb = await beginLogin(browser, 'github')
  const hs = browser.cookieFor(cb.href, 'gatehouse-oauth2-github')!
  const first = await browser.request(cb.href)
  t.equal(first.status, 200, 'first use signs in')
  const replay = await fetch(testApp.browser().hosts.get('app.test') + cb.pathname + cb.search, { headers: { cookie: `gatehouse-oauth2-github=${hs}` } })
  await assertRefused(t, replay, 403, 'state already used', 'GATEHOUSE_ALREADY_USED')
})

t.test('state: expired handshake', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const browser = testApp.browser()
  const cb = await beginLogin(browser, 'github')
  const hs = browser.cookieFor(cb.href, 'gatehouse-oauth2-github')!
  clock.tick(11 * 60_000)
  await assertRefused(t, await browser.request(cb.href), 400, 'no login in progress', 'GATEHOUSE_HANDSHAKE', /missing/)
  const late = await fetch(testApp.browser().hosts.get('app.test') + cb.pathname + cb.search, { headers: { cookie: `gatehouse-oauth2-github=${hs}` } })
  await assertRefused(t, late, 403, 'login handshake expired or invalid', 'GATEHOUSE_HANDSHAKE')
  await assertNoSession(t, browser)
})

t.test('provider errors: access_denied, other errors, missing code, unknown provider', async (t) => {
  gh.faults.authorize = 'deny'
  t.teardown(() => { gh.faults = {} })
  let browser = testApp.browser()
  const nav = await browser.navigate(`${APP_URL}/auth/github/login`)
  t.equal(nav.res.status, 403)
  t.same(JSON.parse(nav.body), { error: 'access denied', details: 'the user declined the login at the provider', code: 'GATEHOUSE_FORBIDDEN' })
  await assertNoSession(t, browser)
  gh.faults = {}

  browser = testApp.browser()
  let cb = await beginLogin(browser, 'github')
  cb.searchParams.delete('code')
  cb.searchParams.set('error', 'temporarily_unavailable')
  await assertRefused(t, await browser.request(cb.href), 400, 'provider refused the login', 'GATEHOUSE_BAD_REQUEST', /temporarily_unavailable/)

  browser = testApp.browser()
  cb = await beginLogin(browser, 'github')
  cb.searchParams.delete('code')
  await assertRefused(t, await browser.request(cb.href), 400, 'missing code', 'GATEHOUSE_BAD_REQUEST')
  await assertNoSession(t, browser)

  await assertRefused(t, await testApp.browser().request(`${APP_URL}/auth/myspace/callback?code=x&state=y`), 404, 'not found', 'GATEHOUSE_NOT_FOUND')
})

t.test('token endpoint: 500, garbage, no access token, rejected code, no answer', async (t) => {
  t.teardown(() => { gh.faults = {} })
  for (const [fault, status, error] of [
    ['500', 502, 'token endpoint failed'],
    ['garbage', 502, 'token endpoint answered garbage'],
    ['no-access-token', 502, 'token endpoint answered garbage']
  ] as const) {
    gh.faults = { token: fault }
    const browser = testApp.browser()
    const nav = await browser.navigate(`${APP_URL}/auth/github/login`)
    t.equal(nav.res.status, status, fault)
    t.match(JSON.parse(nav.body), { error, code: 'GATEHOUSE_UPSTREAM' })
    await assertNoSession(t, browser)
  }
  gh.faults = {}

  // A code already spent at the provider: its invalid_grant is the caller's problem (400).
  const browser = testApp.browser()
  const spent = await beginLogin(browser, 'github')
  t.equal((await browser.request(spent.href)).status, 200)
  const b2 = testApp.browser()
  const cb2 = await beginLogin(b2, 'github')
  cb2.searchParams.set('code', spent.searchParams.get('code')!)
  await assertRefused(t, await b2.request(cb2.href), 400, 'authorization code rejected', 'GATEHOUSE_BAD_REQUEST', /invalid_grant/)

  gh.faults = { token: 'hang' }
  const b3 = deadlineApp.browser()
  const started = Date.now()
  const nav = await b3.navigate(`${APP_URL}/auth/github/login`)
  const took = Date.now() - started
  t.equal(nav.res.status, 504)
  t.same(JSON.parse(nav.body), { error: 'token endpoint did not answer in time', details: `no answer within ${TIMEOUT_MS} ms`, code: 'GATEHOUSE_UPSTREAM_TIMEOUT' })
  // `hang` never answers: the 504 naming the deadline is the deadline's answer. A lower bound only (load makes it
  // later, never earlier).
  t.ok(took >= TIMEOUT_MS - 1, `answered at the deadline, not a hang (${took} ms)`)
  await assertNoSession(t, b3)
})

t.test('userinfo: malformed, failing, oversized', async (t) => {
  t.teardown(() => { gh.faults = {} })
  for (const [fault, error] of [['malformed', 'userinfo malformed'], ['500', 'userinfo request failed'], ['huge', 'userinfo endpoint answer too large']] as const) {
    gh.faults = { info: fault }
    const browser = testApp.browser()
    const nav = await browser.navigate(`${APP_URL}/auth/github/login`)
    t.equal(nav.res.status, 502, fault)
    t.match(JSON.parse(nav.body), { error, code: 'GATEHOUSE_UPSTREAM' })
    await assertNoSession(t, browser)
  }
})

t.test('the provider\'s access token stays on the server: not in the answer, the session token or any cookie (ASVS 10.1.1)', async (t) => {
  const browser = testApp.browser()
  const ok = await browser.navigate(`${APP_URL}/auth/github/login`)
  t.equal(ok.res.status, 200)
  const accessToken = /^Bearer (\S+)$/i.exec(gh.infoAuth.at(-1) ?? '')?.[1]
  t.ok(accessToken !== undefined && accessToken.length >= 20, 'the app used an access token for the profile')
  const jwt = browser.cookieFor(`${APP_URL}/`, 'JWT')!
  const session = Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')
  const xsrf = browser.cookieFor(`${APP_URL}/`, 'XSRF-TOKEN') ?? ''
  for (const [where, text] of [['the answer', ok.body], ['the session token', session], ['the XSRF cookie', xsrf]] as const) {
    t.notOk(text.includes(accessToken!), `not in ${where}`)
  }
  const user = await currentUser(browser)
  t.equal(user.status, 200)
  t.notOk(JSON.stringify(user.body).includes(accessToken!), 'not in /auth/user')
})

t.test('OIDC: a good ID token signs in; every bad one is refused', async (t) => {
  t.teardown(() => { goo.faults = {} })
  const ok = await testApp.browser().navigate(`${APP_URL}/auth/google/login`)
  t.equal(ok.res.status, 200)
  t.equal(JSON.parse(ok.body).id, userId('google', 'g-7'))
  t.ok(goo.authorizeRequests.at(-1)!.get('nonce'), 'nonce sent')

  const REJECTED = 'GATEHOUSE_UNAUTHORIZED'
  const cases = [
    [{ idToken: 'badsig' }, 401, 'id token rejected', REJECTED, /bad signature/],
    [{ idToken: 'wrong-aud' }, 401, 'id token rejected', REJECTED, /aud/],
    [{ idToken: 'wrong-iss' }, 401, 'id token rejected', REJECTED, /issuer/],
    [{ idToken: 'expired' }, 401, 'id token rejected', REJECTED, /expired/],
    [{ idToken: 'no-nonce' }, 401, 'id token rejected', REJECTED, /no nonce/],
    [{ idToken: 'wrong-nonce' }, 401, 'id token rejected', REJECTED, /nonce mismatch/],
    [{ token: 'no-id-token' }, 502, 'token endpoint answered garbage', 'GATEHOUSE_UPSTREAM', /id_token/],
    [{ info: 'other-sub' }, 502, 'userinfo malformed', 'GATEHOUSE_UPSTREAM', /subject/]
  ] as const
  for (const [faults, status, error, code, details] of cases) {
    goo.faults = { ...faults }
    const browser = testApp.browser()
    const nav = await browser.navigate(`${APP_URL}/auth/google/login`)
    t.equal(nav.res.status, status, JSON.stringify(faults))
    t.match(JSON.parse(nav.body), { error, code, details })
    await assertNoSession(t, browser)
  }
})

t.test('OIDC: unreachable keys are a 502', async (t) => {
  const s = await startStandin({ clientId: 'k-cid', clientSecret: 'k-secret', tokenAuth: 'post', pkce: true, oidc: true, idClaims: { sub: 'k1' }, userinfo: { sub: 'k1', name: 'K' } })
  t.teardown(s.close)
  s.faults = { jwks: '500' }
  const app = await startApp(async (app) => {
    await app.register(oauth2Provider, { name: 'google', cid: 'k-cid', csecret: 'k-secret', authURL: `${s.url}/authorize`, tokenURL: `${s.url}/token`, infoURL: `${s.url}/userinfo`, jwksURL: `${s.url}/jwks`, issuer: s.url })
  })
  t.teardown(app.close)
  const nav = await app.browser().navigate(`${APP_URL}/auth/google/login`)
  t.equal(nav.res.status, 502)
  t.match(JSON.parse(nav.body), { error: 'provider keys unusable', code: 'GATEHOUSE_UPSTREAM' })
})

t.test('from: followed only to our origin or an allowed host', async (t) => {
  let nav = await testApp.browser().navigate(`${APP_URL}/auth/github/login?from=${encodeURIComponent('/dashboard?tab=1')}`)
  const fromCallback = nav.hops.find((h) => h.url.includes('/auth/github/callback'))!
  t.equal(fromCallback.status, 303)
  t.equal(fromCallback.location, `${APP_URL}/dashboard?tab=1`, 'own path followed')
  t.equal(nav.url, `${APP_URL}/dashboard?tab=1`, 'the browser arrived there')
  nav = await testApp.browser().navigate(`${APP_URL}/auth/github/login?from=${encodeURIComponent('https://partner.example/back')}`)
  t.equal(nav.hops.at(-1)!.location, 'https://partner.example/back', 'allowed host followed')

  for (const from of ['https://evil.example', '//evil.example', '/\\evil.example', 'javascript:alert(1)', 'https://partner.example.evil.example/']) {
    const browser = testApp.browser()
    nav = await browser.navigate(`${APP_URL}/auth/github/login?from=${encodeURIComponent(from)}`)
    t.equal(nav.res.status, 200, `${from}: login completes with the user JSON`)
    t.equal(JSON.parse(nav.body).name, 'Mona Lisa')
    t.notOk(nav.hops.some((h) => h.location !== undefined && /evil|javascript/i.test(h.location)), `${from}: never redirected there`)
    t.notOk(nav.hops.some((h) => h.location !== undefined && /evil/.test(new URL(h.location, APP_URL).searchParams.toString())), `${from}: not carried through the provider`)
    t.equal((await currentUser(browser)).status, 200, 'still signed in')
  }
})

/** The Set-Cookie line of `name` in a response. */
function setCookieLine (res: Response, name: string): string | undefined {
  return res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`))
}

t.test('session=1 makes session-only cookies; logout clears the session', async (t) => {
  const browser = testApp.browser()
  const nav = await browser.navigate(`${APP_URL}/auth/github/login?session=1`)
  t.equal(nav.res.status, 200)
  for (const name of ['JWT', 'XSRF-TOKEN']) {
    const line = setCookieLine(nav.res, name)
    t.ok(line, `${name} set`)
    t.notMatch(line, /Max-Age|Expires/i, `${name}: no lifetime, a session cookie`)
  }
  const claims = await testApp.app.auth.tokens.parse(browser.cookieFor(`${APP_URL}/`, 'JWT')!)
  t.equal(claims.sess, true, 'the token remembers the flag (refreshes stay session-only)')
  t.equal((await currentUser(browser)).status, 200)
  const out = await browser.request(`${APP_URL}/auth/github/logout`)
  t.equal(out.status, 200)
  t.same(await out.json(), { status: 'logged out' })
  await assertNoSession(t, browser)
})

t.test('without session=1 (or with session=0) the cookies persist', async (t) => {
  for (const query of ['', '?session=0', '?sess=false']) {
    const nav = await testApp.browser().navigate(`${APP_URL}/auth/github/login${query}`)
    t.equal(nav.res.status, 200, query)
    for (const name of ['JWT', 'XSRF-TOKEN']) t.match(setCookieLine(nav.res, name), /Max-Age=\d+/, `${query || 'no flag'}: ${name} has a lifetime`)
  }
  const sess = await testApp.browser().navigate(`${APP_URL}/auth/github/login?sess=1`)
  t.notMatch(setCookieLine(sess.res, 'JWT'), /Max-Age|Expires/i, 'sess=1 is the same flag')
})

t.test('a session flag that is not 1/0/true/false is a 400 at login, before the provider is contacted', async (t) => {
  const before = gh.authorizeRequests.length
  for (const query of ['session=bogus', 'session=yes', 'sess=2', 'session=1&session=1']) {
    const browser = testApp.browser()
    const res = await browser.request(`${APP_URL}/auth/github/login?${query}`)
    await assertRefused(t, res, 400, 'bad request', 'GATEHOUSE_BAD_REQUEST')
    t.equal(res.headers.get('location'), null, `${query}: not sent to the provider`)
    t.equal(browser.cookieAttrs('gatehouse-oauth2-github'), undefined, `${query}: no handshake started`)
  }
  t.equal(gh.authorizeRequests.length, before)
})

t.test('audiences: a site outside the allow-list is refused at login; failures are logged without secrets', async (t) => {
  const lines: string[] = []
  const app = await startApp(async (app) => {
    await app.register(oauth2Provider, { name: 'github', cid: 'gh-cid', csecret: 'gh-secret', ...ghEndpoints })
  }, { audiences: ['site-a'], logger: funcLogger((line) => lines.push(line)) })
  t.teardown(app.close)
  const browser = app.browser()
  await assertRefused(t, await browser.request(`${APP_URL}/auth/github/login?site=site-b`), 403, 'forbidden', 'GATEHOUSE_FORBIDDEN', /"site-b" is not allowed/)
  await assertRefused(t, await browser.request(`${APP_URL}/auth/github/login`), 403, 'forbidden', 'GATEHOUSE_FORBIDDEN', /required/)
  t.equal(browser.cookieAttrs('gatehouse-oauth2-github'), undefined, 'no handshake started')
  const ok = await browser.navigate(`${APP_URL}/auth/github/login?site=site-a`)
  t.equal(ok.res.status, 200)

  gh.faults = { token: '500' }
  t.teardown(() => { gh.faults = {} })
  const failed = await app.browser().navigate(`${APP_URL}/auth/github/login?site=site-a`)
  t.equal(failed.res.status, 502)
  t.equal(JSON.parse(failed.body).code, 'GATEHOUSE_UPSTREAM')
  t.ok(lines.some((l) => l.includes('[ERROR] GET /auth/github/callback answered 502 GATEHOUSE_UPSTREAM: token endpoint failed (status 500)')), 'provider failure logged')
  const code = new URL(failed.hops.find((h) => h.url.includes('/callback'))!.url).searchParams.get('code')!
  t.notOk(lines.some((l) => l.includes('gh-secret') || l.includes(code)), 'no secret or code in the log')
})

t.test('token and userinfo answers: form-encoded token, refused client, user without id', async (t) => {
  t.teardown(() => { gh.faults = {} })
  gh.faults = { token: 'form' }
  const nav = await testApp.browser().navigate(`${APP_URL}/auth/github/login`)
  t.equal(nav.res.status, 200, 'a form-encoded token answer is understood')
  t.equal(JSON.parse(nav.body).id, userId('github', '42'))

  gh.faults = { info: 'no-id' }
  const browser = testApp.browser()
  const noId = await browser.navigate(`${APP_URL}/auth/github/login`)
  t.equal(noId.res.status, 502)
  t.same(JSON.parse(noId.body), { error: 'userinfo malformed', details: 'field "id" is not a user id', code: 'GATEHOUSE_UPSTREAM' })
  await assertNoSession(t, browser)
  gh.faults = {}

  const app = await startApp(async (app) => {
    await app.register(oauth2Provider, { name: 'github', cid: 'gh-cid', csecret: 'wrong-secret', ...ghEndpoints })
  })
  t.teardown(app.close)
  const refused = await app.browser().navigate(`${APP_URL}/auth/github/login`)
  t.equal(refused.res.status, 502, 'a misconfigured client is our fault, not the caller\'s')
  t.same(JSON.parse(refused.body), { error: 'token endpoint refused the exchange', details: 'invalid_client', code: 'GATEHOUSE_UPSTREAM' })
})

t.test('an unreachable token endpoint is a 502 GATEHOUSE_UPSTREAM, no session', async (t) => {
  // Port 1 on loopback: nothing listens there, the connection is refused at once.
  const app = await startApp(async (app) => {
    await app.register(oauth2Provider, { name: 'github', cid: 'gh-cid', csecret: 'gh-secret', ...ghEndpoints, tokenURL: 'http://127.0.0.1:1/token' })
  })
  t.teardown(app.close)
  const browser = app.browser()
  const nav = await browser.navigate(`${APP_URL}/auth/github/login`)
  t.equal(nav.res.status, 502)
  t.match(JSON.parse(nav.body), { error: 'token endpoint unreachable', code: 'GATEHOUSE_UPSTREAM' })
  t.equal((await currentUser(browser)).status, 401)
})

t.test('a provider\'s own state store keeps its used states; when it fails the callback is a 503 GATEHOUSE_STATE_STORE', async (t) => {
  const store = new MemoryStateStore()
  const app = await startApp(async (app) => {
    await app.register(oauth2Provider, { name: 'github', cid: 'gh-cid', csecret: 'gh-secret', ...ghEndpoints, stateStore: store })
  })
  t.teardown(app.close)
  const first = app.browser()
  const cb = await beginLogin(first, 'github')
  t.equal((await first.request(cb.href)).status, 200, 'the first login')
  t.equal(await store.get(`oauth2-state:github:${cb.searchParams.get('state')}`), '1', 'the used state is in the provider\'s store')

  // The store fails from now on (a full in-memory store would evict from the largest holder instead).
  store.setIfAbsent = async () => { throw new StateStoreError('in-memory state store is full') }
  const second = app.browser()
  const cb2 = await beginLogin(second, 'github')
  await assertRefused(t, await second.request(cb2.href), 503, 'state store unavailable', 'GATEHOUSE_STATE_STORE')
  await assertNoSession(t, second)
})
