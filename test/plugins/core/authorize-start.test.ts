/**
 * Where a native sign-in starts (RFC 8252 §8.6): opened by the app in the system browser (`Sec-Fetch-Site: none`),
 * or back from the sign-in page after such a start (a signed cookie of the browser, bound to the request), a
 * signed-in browser is sent back with a code at once; a navigation from another site (`cross-site`, `same-site`)
 * or from a page of this one gets a confirmation page instead, and a code only when the user presses Continue on it
 * (posted from this site's own page, with the session's XSRF value). The sign-in detour keeps that (issue 43,
 * item 3): a signed-out victim of a cross-site start is asked too once signed in.
 */
import t from 'tap'
import * as oidc from 'openid-client'
import { addSignInPage, clientsApp } from '../../helpers/clients-app.js'

const s = await clientsApp({ login: { page: '/sign-in' } }, { setup: addSignInPage })
t.teardown(s.close)
const REDIRECT = 'com.example.app:/callback'
const config = await s.discover()

async function browserOf (name: string): Promise<string> {
  const r = await s.app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: name, passwd: 'x' } })
  return r.cookies.map((c) => `${c.name}=${c.value}`).join('; ')
}

async function start (cookie: string, site: string | undefined) {
  const verifier = oidc.randomPKCECodeVerifier()
  const state = oidc.randomState()
  const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state })
  const r = await s.app.inject({ url: url.pathname + url.search, headers: { cookie, ...(site === undefined ? {} : { 'sec-fetch-site': site }) } })
  return { r, verifier, state }
}

/** The hidden fields of the confirmation page's form. */
function formOf (html: string): Record<string, string> {
  const fields: Record<string, string> = {}
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[m[1]!] = m[2]!.replace(/&amp;/g, '&').replace(/&quot;/g, '"')
  return fields
}

async function answer (cookie: string, fields: Record<string, string>, headers: Record<string, string> = { 'sec-fetch-site': 'same-origin', origin: s.base }) {
  return await s.app.inject({ method: 'POST', url: '/auth/authorize', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers }, payload: new URLSearchParams(fields).toString() })
}

t.test('opened by the app (none, or no fetch metadata): a code at once', async (t) => {
  const cookie = await browserOf('ann')
  for (const site of ['none', undefined]) {
    const { r } = await start(cookie, site)
    t.equal(r.statusCode, 302, `${site ?? 'no Sec-Fetch-Site'}: redirected`)
    t.match(r.headers.location, /^com\.example\.app:\/callback\?code=[\w-]{43}&state=/)
  }
})

t.test('a navigation from another site, or from a page of this one, gets no code without the user\'s confirmation', async (t) => {
  const cookie = await browserOf('bob')
  for (const site of ['cross-site', 'same-site', 'same-origin']) {
    const { r } = await start(cookie, site)
    t.equal(r.statusCode, 200, `${site}: a page, not a redirect`)
    t.equal(r.headers.location, undefined, `${site}: no code sent anywhere`)
    t.notMatch(r.body, /code=/, 'no code on the page')
    t.match(r.headers['content-type'], /text\/html/)
    t.equal(r.headers['cache-control'], 'no-store')
    t.match(r.headers['content-security-policy'], /frame-ancestors 'none'/, 'the page cannot be framed for a click')
    t.match(r.body, /Demo phone app asks to be signed in as bob/)
  }
})

t.test('Continue on the confirmation page sends the code; openid-client exchanges it', async (t) => {
  const cookie = await browserOf('cy')
  const { r, verifier, state } = await start(cookie, 'cross-site')
  const fields = formOf(r.body)
  t.equal(fields.client_id, 'mobile')
  const ok = await answer(cookie, { ...fields, action: 'approve' })
  t.equal(ok.statusCode, 303)
  const location = ok.headers.location as string
  t.match(location, /^com\.example\.app:\/callback\?code=[\w-]{43}&state=/)
  const tokens = await oidc.authorizationCodeGrant(config, new URL(location), { pkceCodeVerifier: verifier, expectedState: state })
  const me = await s.app.inject({ url: '/private', headers: { authorization: `Bearer ${tokens.access_token}` } })
  t.same(me.json(), { name: 'cy' })
})

t.test('Cancel sends access_denied back; bad answers are refused and redirect nowhere', async (t) => {
  const cookie = await browserOf('dee')
  const fields = formOf((await start(cookie, 'cross-site')).r.body)
  const cancel = await answer(cookie, { ...fields, action: 'deny' })
  t.equal(cancel.statusCode, 303)
  const back = new URL(cancel.headers.location as string)
  t.equal(back.searchParams.get('error'), 'access_denied')
  t.equal(back.searchParams.get('code'), null)
  t.equal(back.searchParams.get('state'), fields.state)

  const refused: Array<[string, Promise<Awaited<ReturnType<typeof answer>>>, number, string]> = [
    ['posted from another site', answer(cookie, { ...fields, action: 'approve' }, { 'sec-fetch-site': 'cross-site' }), 403, 'GATEHOUSE_CROSS_SITE'],
    ['posted with another origin', answer(cookie, { ...fields, action: 'approve' }, { origin: 'https://evil.example' }), 403, 'GATEHOUSE_CROSS_SITE'],
    ['another session\'s XSRF value', answer(cookie, { ...fields, xsrf: 'not-this-session', action: 'approve' }), 403, 'GATEHOUSE_XSRF'],
    ['no session', answer('', { ...fields, action: 'approve' }), 401, 'GATEHOUSE_UNAUTHORIZED'],
    ['an unknown action', answer(cookie, { ...fields, action: 'maybe' }), 400, 'GATEHOUSE_BAD_REQUEST'],
    ['an unregistered redirect', answer(cookie, { ...fields, redirect_uri: 'https://evil.example/cb', action: 'approve' }), 400, 'GATEHOUSE_OAUTH'],
    ['a JSON body', s.app.inject({ method: 'POST', url: '/auth/authorize', headers: { cookie }, payload: { ...fields, action: 'approve' } }), 400, 'GATEHOUSE_OAUTH']
  ]
  for (const [name, pending, status, code] of refused) {
    const r = await pending
    t.equal(r.statusCode, status, name)
    t.equal(r.headers.location, undefined, `${name}: no redirect`)
    t.equal(r.json().code, code, name)
  }
  const plain = await answer(cookie, { ...fields, code_challenge_method: 'plain', action: 'approve' })
  t.equal(new URL(plain.headers.location as string).searchParams.get('error'), 'invalid_request', 'plain PKCE refused on the confirmation too')
})

/** The browser's cookies after a reply: `cookie` updated with its Set-Cookie lines (an expired one removed). */
function jarOf (cookie: string, r: { cookies: Array<{ name: string, value: string, maxAge?: number }> }): string {
  const jar = new Map(cookie === '' ? [] : cookie.split('; ').map((p) => p.split('=') as [string, string]))
  for (const c of r.cookies) {
    if (c.maxAge === 0 || c.value === '') jar.delete(c.name)
    else jar.set(c.name, c.value)
  }
  return [...jar].map(([k, v]) => `${k}=${v}`).join('; ')
}

/**
 * A signed-out browser meets `/authorize` (`site`), goes through the sign-in page, signs in there and is sent on
 * to `from` by this site (`Sec-Fetch-Site: same-origin`): the answer of that last request.
 */
async function throughSignIn (name: string, site: string | undefined, from?: string) {
  const verifier = oidc.randomPKCECodeVerifier()
  const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state: oidc.randomState() })
  let cookie = ''
  let back = from
  if (back === undefined) {
    const first = await s.app.inject({ url: url.pathname + url.search, headers: site === undefined ? {} : { 'sec-fetch-site': site } })
    cookie = jarOf(cookie, first)
    const toSignIn = new URL(first.headers.location as string, s.base)
    if (toSignIn.pathname !== '/sign-in') throw new Error(`not sent to the sign-in page: ${first.statusCode} ${String(first.headers.location)}`)
    back = toSignIn.searchParams.get('from')!
  }
  const login = await s.app.inject({ method: 'POST', url: `/auth/local/login?from=${encodeURIComponent(back)}`, headers: { cookie, 'sec-fetch-site': 'same-origin', origin: s.base }, payload: { user: name, passwd: 'x' } })
  cookie = jarOf(cookie, login)
  const to = new URL(login.headers.location as string, s.base)
  const r = await s.app.inject({ url: to.pathname + to.search, headers: { cookie, 'sec-fetch-site': 'same-origin' } })
  return { r, cookie: jarOf(cookie, r), url }
}

t.test('the sign-in detour: a signed-out victim of a cross-site start is asked once signed in; the app\'s own start is not', async (t) => {
  for (const site of ['cross-site', 'same-site']) {
    const { r } = await throughSignIn(`victim-${site}`, site)
    t.equal(r.statusCode, 200, `${site} start, then signed in: the confirmation page`)
    t.equal(r.headers.location, undefined, 'no code handed out')
    t.match(r.body, /Demo phone app asks to be signed in as victim/)
  }
  const { url } = await throughSignIn('x', 'cross-site')
  const direct = await throughSignIn('victim-direct', undefined, url.pathname + url.search)
  t.equal(direct.r.statusCode, 200, 'a link straight to the sign-in page with a from of /authorize: the confirmation page')
  t.equal(direct.r.headers.location, undefined)

  for (const site of ['none', undefined]) {
    const { r, cookie } = await throughSignIn('owner', site)
    t.equal(r.statusCode, 302, `opened by the app (${site ?? 'no fetch metadata'}), back from the sign-in page: a code at once`)
    t.match(r.headers.location, /^com\.example\.app:\/callback\?code=[\w-]{43}&state=/)
    t.notMatch(cookie, /gatehouse-authorize/, 'the start cookie is used up')
  }
})

t.test('the start cookie is bound to its request and to this browser', async (t) => {
  const first = await throughSignIn('eve', 'none')
  t.equal(first.r.statusCode, 302)
  // A start cookie of another request (another challenge) proves nothing for this one.
  const verifier = oidc.randomPKCECodeVerifier()
  const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state: 'other' })
  const signedOut = await s.app.inject({ url: url.pathname + url.search, headers: { 'sec-fetch-site': 'none' } })
  const startCookie = signedOut.cookies.find((c) => c.name === 'gatehouse-authorize')!
  t.equal(startCookie.httpOnly, true)
  t.equal(startCookie.path, '/auth/authorize')
  const other = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256', state: 'other' })
  const session = await browserOf('eve')
  let r = await s.app.inject({ url: other.pathname + other.search, headers: { cookie: `${session}; gatehouse-authorize=${startCookie.value}`, 'sec-fetch-site': 'same-origin' } })
  t.equal(r.statusCode, 200, 'another request\'s cookie: the confirmation page')
  r = await s.app.inject({ url: url.pathname + url.search, headers: { cookie: `${session}; gatehouse-authorize=forged`, 'sec-fetch-site': 'same-origin' } })
  t.equal(r.statusCode, 200, 'a forged cookie: the confirmation page')
  r = await s.app.inject({ url: url.pathname + url.search, headers: { cookie: `${session}; gatehouse-authorize=${startCookie.value}`, 'sec-fetch-site': 'cross-site' } })
  t.equal(r.statusCode, 302, 'its own request, back through another site (an external provider\'s sign-in): a code')
})
