/**
 * The "where you're signed in" page (issue 49, item 2; `revocation.sessionList.page: true`): the signed-in user's
 * sessions with an "End" button each, forms posted with the session's XSRF value from this site's own page only;
 * ending another session takes the rule of ending other sessions (a recent sign-in, or the password typed into the
 * form; a user without a password signs in again); ending this browser's session signs it out. The clock is a fake
 * one (`Date` only), so "recent" is exact.
 */
import t from 'tap'
import { accountApp, fakeClock, signIn, URL_BASE } from '../../helpers/account-app.js'
import type { Client } from '../../helpers/client.js'
import { injectApp, INJECT_BASE } from '../../helpers/app.js'
import { authPlugin } from '../../../index.js'

const clock = fakeClock(t)
const a = await accountApp(t, { login: { page: true }, revocation: { sessionList: { page: true } } })
const PAGE = '/auth/sessions/page'

/** The page as the client's browser gets it. */
async function page (c: Client, query = ''): Promise<{ status: number; body: string; location: string | null }> {
  const r = await c.fetch(`${PAGE}${query}`)
  return { status: r.status, body: await r.text(), location: r.headers.get('location') }
}
/** A form of the page, posted as the browser posts it. */
async function post (c: Client, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  return await c.fetch(PAGE, { method: 'POST', form: fields, headers: { origin: URL_BASE, 'sec-fetch-site': 'same-origin', ...headers } })
}
/** The status of the client's `GET /auth/user`, its XSRF header sent: 200 while its session lives. */
const userStatus = async (c: Client): Promise<number> => (await c.fetch('/auth/user', { headers: { 'x-xsrf-token': c.jar.get('XSRF-TOKEN') ?? '' } })).status
const idsOf = (body: string): string[] => [...body.matchAll(/name="id" value="([^"]+)"/g)].map((m) => m[1]!)
const xsrfOf = (c: Client): string => c.jar.get('XSRF-TOKEN')!

t.test('signed out: sent to sign in, and back', async (t) => {
  const r = await page(a.client())
  t.equal(r.status, 302)
  t.equal(r.location, `${URL_BASE}/auth/sign-in?from=${encodeURIComponent(`${URL_BASE}${PAGE}`)}`)
})

t.test('the list, this browser first; ending another session with a recent sign-in; ending all others', async (t) => {
  const laptop = a.client()
  const phone = a.client()
  const tablet = a.client()
  for (const c of [phone, tablet, laptop]) await signIn(c, 'alice')
  const r = await page(laptop)
  t.equal(r.status, 200)
  t.match(r.body, '<h1>Where you&#39;re signed in</h1>')
  t.match(r.body, 'Signed in as <strong>alice</strong>.')
  t.match(r.body, /<tr id="current"><td>[^<]*<strong>\(this browser\)<\/strong>/, 'this browser first, marked')
  t.notMatch(r.body, /name="password"/, 'a recent sign-in needs no password')
  const ids = idsOf(r.body)
  t.equal(ids[0], xsrfOf(laptop), 'its own "Sign out" first')
  t.same(new Set(ids.slice(1)), new Set([xsrfOf(phone), xsrfOf(tablet)]))

  const ended = await post(laptop, { id: xsrfOf(phone), xsrf: xsrfOf(laptop) })
  t.equal(ended.status, 303)
  t.equal(ended.headers.get('location'), `${URL_BASE}${PAGE}?done=ended`)
  t.match((await page(laptop, '?done=ended')).body, '<p id="message" class="message" role="status">The session was ended.</p>')
  t.equal(await userStatus(phone), 401, 'the phone is signed out')
  t.equal(await userStatus(laptop), 200, 'this browser still signed in')

  const all = await post(laptop, { xsrf: xsrfOf(laptop) })
  t.equal(all.headers.get('location'), `${URL_BASE}${PAGE}?done=others`)
  t.equal(await userStatus(tablet), 401, 'every other session ended')
  t.same(idsOf((await page(laptop)).body), [xsrfOf(laptop)], 'only this browser left')
  t.ok(a.events.filter((e) => e.type === 'session.revoked' && e.reason === 'session_list').length >= 2, 'audited')
})

t.test('a sign-in that is not recent: the form asks for the password; without it, or wrong, nothing ends', async (t) => {
  const laptop = a.client()
  const phone = a.client()
  await signIn(phone, 'bob')
  await signIn(laptop, 'bob')
  clock.tick(6 * 60_000)
  const r = await page(laptop)
  t.match(r.body, new RegExp(`<label for="password-${xsrfOf(phone)}">Your password</label><input id="password-${xsrfOf(phone)}" name="password" type="password"`))
  const bare = await post(laptop, { id: xsrfOf(phone), xsrf: xsrfOf(laptop) })
  t.equal(bare.headers.get('location'), `${URL_BASE}${PAGE}?error=reauth`)
  t.match((await page(laptop, '?error=reauth')).body, 'Ending another session needs your password')
  const wrong = await post(laptop, { id: xsrfOf(phone), xsrf: xsrfOf(laptop), password: 'nope' })
  t.equal(wrong.headers.get('location'), `${URL_BASE}${PAGE}?error=GATEHOUSE_CREDENTIALS`)
  t.equal(await userStatus(phone), 200, 'the phone still signed in')
  const right = await post(laptop, { id: xsrfOf(phone), xsrf: xsrfOf(laptop), password: 'bob-secret' })
  t.equal(right.headers.get('location'), `${URL_BASE}${PAGE}?done=ended`)
  t.equal(await userStatus(phone), 401)
})

t.test('ending this browser\'s session signs it out', async (t) => {
  const c = a.client()
  await signIn(c, 'alice')
  const id = xsrfOf(c)
  const r = await post(c, { id, xsrf: id })
  t.equal(r.status, 303)
  t.equal(r.headers.get('location'), `${URL_BASE}/auth/sign-in`)
  t.match(r.headers.get('clear-site-data'), '"cookies"')
  t.equal(c.jar.get('JWT'), undefined, 'the cookies are cleared')
})

t.test('bad answers: another site, another session\'s XSRF value, signed out; nothing ends', async (t) => {
  const c = a.client()
  const other = a.client()
  await signIn(other, 'alice')
  await signIn(c, 'alice')
  const cross = await post(c, { id: xsrfOf(other), xsrf: xsrfOf(c) }, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' })
  t.equal(cross.status, 403)
  t.equal((await cross.json() as { code: string }).code, 'GATEHOUSE_CROSS_SITE')
  const forged = await post(c, { id: xsrfOf(other), xsrf: xsrfOf(other) })
  t.equal(forged.headers.get('location'), `${URL_BASE}${PAGE}?error=GATEHOUSE_XSRF`)
  const none = await post(c, { id: xsrfOf(other) })
  t.equal(none.headers.get('location'), `${URL_BASE}${PAGE}?error=GATEHOUSE_XSRF`)
  const repeated = await c.fetch(PAGE, { method: 'POST', body: `xsrf=${xsrfOf(c)}&xsrf=${xsrfOf(c)}&id=${xsrfOf(other)}`, headers: { 'content-type': 'application/x-www-form-urlencoded', origin: URL_BASE, 'sec-fetch-site': 'same-origin' } })
  t.equal(repeated.headers.get('location'), `${URL_BASE}${PAGE}?error=GATEHOUSE_XSRF`, 'a repeated field is no value')
  t.equal(await userStatus(other), 200, 'the other session lives')
  const gone = await post(a.client(), { id: xsrfOf(other), xsrf: 'x' })
  t.equal(gone.status, 303)
  t.match(gone.headers.get('location'), /\/auth\/sign-in\?from=/, 'signed out: sign in first')
  const unknown = await post(c, { id: 'no-such-session', xsrf: xsrfOf(c) })
  t.equal(unknown.headers.get('location'), `${URL_BASE}${PAGE}?error=GATEHOUSE_NOT_FOUND`)
  t.match((await page(c, '?error=%3Cscript%3E')).body, 'That did not work: try again.', 'an unknown error key shows the generic text')
})

t.test('the page\'s headers: unframeable, no script, its own form only', async (t) => {
  const c = a.client()
  await signIn(c, 'alice')
  const r = await c.fetch(PAGE)
  t.equal(r.headers.get('x-frame-options'), 'DENY')
  t.match(r.headers.get('content-security-policy'), /default-src 'none'.*form-action 'self'.*frame-ancestors 'none'/)
  t.notMatch(await r.text(), /<script/i)
})

t.test('a user without a password here, signed in long ago: asked to sign in again, no button that would be refused', async (t) => {
  // An app whose provider signs users in without a password (as an OAuth2 provider does).
  const other = await injectApp(async (app) => {
    await app.register(authPlugin, {
      secret: 'sessions-page-secret-0123456789abcdef-0123', url: INJECT_BASE, revocation: { sessionList: { page: true } },
      providers: [{ kind: 'handler', provider: (kit) => ({ name: 'gh', login: async (request, reply, login) => await kit.completeLogin(request, reply, { user: { id: 'gh_0123', name: 'octo' }, ...login }) }) }]
    })
  })
  t.teardown(() => other.app.close())
  const browsers = [other.client(), other.client()]
  for (const c of browsers) t.equal((await c.fetch('/auth/gh/login')).status, 200)
  clock.tick(6 * 60_000)
  const r = await browsers[0]!.fetch(PAGE)
  const body = await r.text()
  t.equal(r.status, 200)
  t.match(body, `To end another session, <a href="${INJECT_BASE}/auth/sign-in?from=`)
  t.same(idsOf(body), [xsrfOf(browsers[0]!)], 'only this browser\'s "Sign out"')
  t.notMatch(body, /name="password"/)
})
