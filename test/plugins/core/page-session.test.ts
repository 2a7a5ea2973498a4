/**
 * The device page and `/authorize` read a browser's cookie session exactly as an authenticated route does (issue 49,
 * item 1): an expired token within `session.maxAge` is refreshed there (new cookies, the same session: its `jti`, its
 * XSRF value and its one entry in the session list), by the same path (the refresh cache hands a page and an API
 * route racing with one expired token the same successor), under the same rules (the validator, revocation, the
 * absolute lifetime). The clock is a fake one (`Date` only).
 */
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { clientsApp } from '../../helpers/clients-app.js'

const clock = FakeTimers.install({ now: Date.UTC(2026, 0, 5, 9, 0, 0), toFake: ['Date'] })
t.teardown(() => clock.uninstall())
const refused = new Set<string>()
let updates = 0
const s = await clientsApp({
  login: { page: '/sign-in' },
  session: { tokenDuration: '15m', maxAge: '2h' },
  claimsUpdater: (claims) => { updates++; return claims },
  validator: (_token, claims) => !refused.has(claims.user?.name ?? '')
})
t.teardown(s.close)
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const SAME_ORIGIN = { origin: s.base, 'sec-fetch-site': 'same-origin' }
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'
const AUTHORIZE = `/auth/authorize?${new URLSearchParams({ response_type: 'code', client_id: 'mobile', redirect_uri: 'com.example.app:/callback', code_challenge: CHALLENGE, code_challenge_method: 'S256', state: 's1' }).toString()}`

interface Browser { jwt: string; xsrf: string }
const cookieOf = (b: Browser): string => `JWT=${b.jwt}; XSRF-TOKEN=${b.xsrf}`

async function signIn (name: string): Promise<Browser> {
  const r = await s.app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: name, passwd: 'x' } })
  const jar = Object.fromEntries(r.cookies.map((c) => [c.name, c.value]))
  return { jwt: jar.JWT!, xsrf: jar['XSRF-TOKEN']! }
}

/** The new session cookie an answer set, if any. */
function newJwt (r: { cookies: Array<{ name: string; value: string }> }): string | undefined {
  return r.cookies.find((c) => c.name === 'JWT' && c.value !== '')?.value
}

async function sessionsOf (b: Browser): Promise<Array<{ id: string }>> {
  const r = await s.app.inject({ url: '/auth/sessions', headers: { cookie: cookieOf(b), 'x-xsrf-token': b.xsrf } })
  t.equal(r.statusCode, 200)
  return r.json()
}

async function deviceCode (): Promise<string> {
  const r = await s.app.inject({ method: 'POST', url: '/auth/device/code', headers: FORM, payload: 'client_id=cli' })
  return r.json().user_code
}

t.test('an expired session: the device page refreshes it, its form approves, the list keeps one entry', async (t) => {
  const ann = await signIn('ann')
  const before = await sessionsOf(ann)
  t.equal(before.length, 1)
  clock.tick(16 * 60_000)
  const refreshedBefore = s.events.filter((e) => e.type === 'session.refreshed').length
  const updatesBefore = updates
  const code = await deviceCode()
  const page = await s.app.inject({ url: `/auth/device?user_code=${code}`, headers: { cookie: cookieOf(ann) } })
  t.equal(page.statusCode, 200, 'the page, not the sign-in page')
  t.match(page.body, /Sign in <strong>Demo CLI<\/strong>/)
  const jwt = newJwt(page)
  t.ok(jwt !== undefined && jwt !== ann.jwt, 'a new session cookie')
  const claims = await s.app.auth.tokens.parse(jwt!)
  t.equal(claims.jti, ann.xsrf, 'the same session: its jti is the XSRF value the browser holds')
  t.equal(s.events.filter((e) => e.type === 'session.refreshed').length, refreshedBefore + 1, 'audited as every refresh')
  t.equal(updates, updatesBefore + 1, 'the claims updater ran, as on every refresh')

  // The form is posted with the cookie of before (the browser may not have stored the new one yet): the same successor.
  const approve = await s.app.inject({ method: 'POST', url: '/auth/device', headers: { ...FORM, ...SAME_ORIGIN, cookie: cookieOf(ann) }, payload: new URLSearchParams({ user_code: code, xsrf: ann.xsrf, action: 'approve' }).toString() })
  t.equal(approve.statusCode, 200)
  t.match(approve.body, /Demo CLI is signed in/)
  t.equal(newJwt(approve) ?? jwt, jwt, 'the refresh cache answers the same successor')
  const after = await sessionsOf({ jwt: jwt!, xsrf: ann.xsrf })
  t.same(after.map((x) => x.id), before.map((x) => x.id), 'one session in the list, the same one: no second sign-in')
})

t.test('an expired session: /authorize refreshes it and sends the app its code without a sign-in', async (t) => {
  const bob = await signIn('bob')
  clock.tick(20 * 60_000)
  const r = await s.app.inject({ url: AUTHORIZE, headers: { cookie: cookieOf(bob), 'sec-fetch-site': 'none' } })
  t.equal(r.statusCode, 302)
  t.match(r.headers.location, /^com\.example\.app:\/callback\?code=/, 'a code, not the sign-in page')
  const jwt = newJwt(r)
  t.ok(jwt !== undefined && jwt !== bob.jwt, 'new cookies on the redirect')
  t.equal((await s.app.auth.tokens.parse(jwt!)).jti, bob.xsrf)
  t.equal((await sessionsOf({ jwt: jwt!, xsrf: bob.xsrf })).length, 1)

  // The confirmation page of a start from another site, and its answer, on an expired session too.
  clock.tick(20 * 60_000)
  const ask = await s.app.inject({ url: AUTHORIZE, headers: { cookie: `JWT=${jwt!}; XSRF-TOKEN=${bob.xsrf}`, 'sec-fetch-site': 'cross-site' } })
  t.equal(ask.statusCode, 200)
  t.match(ask.body, /Demo phone app asks to be signed in as bob/)
  const fields = { response_type: 'code', client_id: 'mobile', redirect_uri: 'com.example.app:/callback', code_challenge: CHALLENGE, code_challenge_method: 'S256', state: 's1', xsrf: bob.xsrf, action: 'approve' }
  const yes = await s.app.inject({ method: 'POST', url: '/auth/authorize', headers: { ...FORM, ...SAME_ORIGIN, cookie: `JWT=${jwt!}; XSRF-TOKEN=${bob.xsrf}` }, payload: new URLSearchParams(fields).toString() })
  t.equal(yes.statusCode, 303)
  t.match(yes.headers.location, /code=/)
})

t.test('a page and an API route with one expired token share its one successor', async (t) => {
  const cy = await signIn('cy')
  clock.tick(16 * 60_000)
  const api = await s.app.inject({ url: '/private', headers: { cookie: cookieOf(cy), 'x-xsrf-token': cy.xsrf } })
  t.equal(api.statusCode, 200)
  const page = await s.app.inject({ url: '/auth/device', headers: { cookie: cookieOf(cy) } })
  t.equal(page.statusCode, 200)
  t.equal(newJwt(page), newJwt(api), 'the same new token: one refresh path')
})

t.test('what an authenticated route refuses, the pages refuse: past maxAge, revoked, the validator', async (t) => {
  const dee = await signIn('dee')
  clock.tick(2 * 3_600_000 + 1000)
  const old = await s.app.inject({ url: '/auth/device', headers: { cookie: cookieOf(dee) } })
  t.equal(old.statusCode, 302, 'past session.maxAge: no refresh')
  t.match(old.headers.location, /\/sign-in\?from=/)
  t.equal((await s.app.inject({ url: '/private', headers: { cookie: cookieOf(dee), 'x-xsrf-token': dee.xsrf } })).statusCode, 401, 'as the API route')

  const eve = await signIn('eve')
  clock.tick(16 * 60_000)
  await s.app.auth.sessions.revoke(eve.xsrf)
  const revoked = await s.app.inject({ url: AUTHORIZE, headers: { cookie: cookieOf(eve), 'sec-fetch-site': 'none' } })
  t.match(revoked.headers.location, /\/sign-in\?from=/, 'a revoked session signs in again')
  t.equal(newJwt(revoked), undefined, 'and is not refreshed')

  const fay = await signIn('fay')
  refused.add('fay')
  const blocked = await s.app.inject({ url: '/auth/device', headers: { cookie: cookieOf(fay) } })
  t.match(blocked.headers.location, /\/sign-in\?from=/, 'the validator\'s refusal holds on the page')
  const posted = await s.app.inject({ method: 'POST', url: '/auth/device', headers: { ...FORM, ...SAME_ORIGIN, cookie: cookieOf(fay) }, payload: new URLSearchParams({ user_code: 'BCDF-GHJK', xsrf: fay.xsrf, action: 'approve' }).toString() })
  t.equal(posted.statusCode, 401)
})

t.test('the page skips only the XSRF header: its form still needs the session\'s XSRF value', async (t) => {
  const gus = await signIn('gus')
  clock.tick(16 * 60_000)
  const r = await s.app.inject({ method: 'POST', url: '/auth/device', headers: { ...FORM, ...SAME_ORIGIN, cookie: cookieOf(gus) }, payload: new URLSearchParams({ user_code: 'BCDF-GHJK', xsrf: 'not-the-value-of-this-session', action: 'approve' }).toString() })
  t.equal(r.statusCode, 403)
  t.equal(r.json().code, 'GATEHOUSE_XSRF')
})
