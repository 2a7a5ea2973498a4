/**
 * One rule for ending a user's other sessions (issue 43, item 5): `POST …/logout?all=1` takes the rule of `DELETE
 * /sessions`: a cookie session with its XSRF header, signed in recently or with the password in the body. A
 * registered client's bearer token, or any header token, is refused (403) and ends nothing, browsers included.
 */
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { listApp, type ListApp } from '../../helpers/sessions-app.js'
import { xsrfName } from '../../helpers/session-app.js'
import { clientsApp } from '../../helpers/clients-app.js'
import type { Client } from '../../helpers/client.js'

const xsrf = (c: Client): Record<string, string> => ({ 'x-xsrf-token': c.jar.get(xsrfName(c)) ?? '' })
const logoutAll = async (c: Client, headers: Record<string, string>, form?: Record<string, string>): Promise<Response> =>
  await c.fetch('/auth/logout?all=1', { method: 'POST', headers, ...(form === undefined ? {} : { form }) })

t.test('a registered client\'s bearer token cannot end every session of its user (403, as at DELETE /sessions)', async (t) => {
  // The app hands the signed-in browser user a pair of its client, as an app's own sign-in would.
  const s = await clientsApp({}, { setup: (app) => {
    app.post('/app/pair-me', { preHandler: app.auth.authenticate }, async (req) => await app.auth.tokens.issuePair(req, 'mobile', { user: req.user!.toJSON() }))
  } })
  t.teardown(s.close)
  const browser = await s.app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'ann', passwd: 'x' } })
  const jar = Object.fromEntries(browser.cookies.map((c) => [c.name, c.value]))
  const cookie = { cookie: `JWT=${jar.JWT!}; XSRF-TOKEN=${jar['XSRF-TOKEN']!}`, 'x-xsrf-token': jar['XSRF-TOKEN']! }
  const own = (await s.app.inject({ method: 'POST', url: '/app/pair-me', headers: cookie })).json() as { access_token: string }
  const access = (await s.pair('ann')).access_token
  for (const headers of [{ authorization: `Bearer ${own.access_token}` }, { 'x-jwt': own.access_token }, { authorization: `Bearer ${access}` }]) {
    for (const url of ['/auth/logout?all=1', '/auth/local/logout?all=1']) {
      const r = await s.app.inject({ method: 'POST', url, headers })
      t.equal(r.statusCode, 403, `${url} with ${Object.keys(headers)[0]!}: 403`)
      t.equal(r.json().code, 'GATEHOUSE_FORBIDDEN')
    }
    const sessions = await s.app.inject({ method: 'DELETE', url: '/auth/sessions', headers })
    t.equal(sessions.statusCode, 403, 'the same answer as DELETE /sessions')
  }
  t.equal((await s.app.inject({ url: '/private', headers: cookie })).statusCode, 200, 'the browser is still signed in')
  t.equal((await s.app.inject({ url: '/private', headers: { authorization: `Bearer ${own.access_token}` } })).statusCode, 200, 'and the client too')
})

t.test('a cookie session ends every session only when signed in recently or with the password; refused, it stays', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const s: ListApp = await listApp()
  t.teardown(s.close)
  const laptop = await s.loginAs('bea')
  const phone = await s.loginAs('bea')
  clock.tick(10 * 60_000)
  let r = await logoutAll(laptop, xsrf(laptop))
  t.equal(r.status, 401, 'signed in 10 minutes ago: re-authentication asked')
  t.equal((await r.json()).code, 'GATEHOUSE_REAUTHENTICATE')
  t.equal(r.headers.get('clear-site-data'), null, 'this browser is not signed out')
  t.equal((await s.get(laptop)).status, 200, 'still signed in here…')
  t.equal((await s.get(phone)).status, 200, '…and there')
  r = await logoutAll(laptop, {})
  t.equal(r.status, 401, 'without the XSRF header')
  t.equal((await r.json()).code, 'GATEHOUSE_XSRF')
  r = await logoutAll(laptop, xsrf(laptop), { password: 'anything' })
  t.equal(r.status, 200, 'with the password in the body')
  t.equal((await s.get(phone)).status, 401, 'every session ended')
})

t.test('with reauthentication.otherSessions off, still a cookie session only, for logout?all=1 and DELETE /sessions', async (t) => {
  const s: ListApp = await listApp({ reauthentication: { otherSessions: false } })
  t.teardown(s.close)
  const laptop = await s.loginAs('cy')
  const phone = await s.loginAs('cy')
  const token = phone.jar.get('JWT')!
  for (const path of ['/auth/logout?all=1', '/auth/sessions']) {
    const r = await s.fetch(`${s.base}${path}`, { method: path.includes('logout') ? 'POST' : 'DELETE', headers: { 'x-jwt': token } })
    t.equal(r.status, 403, `${path}: a header token is refused`)
  }
  t.equal((await s.get(laptop)).status, 200)
  const r = await logoutAll(laptop, xsrf(laptop))
  t.equal(r.status, 200, 'the cookie session with its XSRF header')
  t.equal((await s.get(phone)).status, 401)
})
