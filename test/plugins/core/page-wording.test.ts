/**
 * What the package's sign-in pages say (issue 49, item 9): the device page names the signed-in user ("as bob"), as
 * the confirmation page does, and the confirmation page tells truly how it was reached: just after the user's own
 * sign-in (a provider's round trip is a redirect chain the browser calls cross-site), from another site, or from a
 * page of this one. The clock is a fake one (`Date` only).
 */
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { clientsApp } from '../../helpers/clients-app.js'

const clock = FakeTimers.install({ now: Date.UTC(2026, 0, 5, 9, 0, 0), toFake: ['Date'] })
t.teardown(() => clock.uninstall())
const s = await clientsApp({ login: { page: '/sign-in' } })
t.teardown(s.close)
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'
const AUTHORIZE = `/auth/authorize?${new URLSearchParams({ response_type: 'code', client_id: 'mobile', redirect_uri: 'com.example.app:/callback', code_challenge: CHALLENGE, code_challenge_method: 'S256', state: 's1' }).toString()}`

async function browserOf (name: string): Promise<string> {
  const r = await s.app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: name, passwd: 'x' } })
  return r.cookies.map((c) => `${c.name}=${c.value}`).join('; ')
}

t.test('the device page names the signed-in user, with and without a code in the link', async (t) => {
  const cookie = await browserOf('bob')
  const bare = await s.app.inject({ url: '/auth/device', headers: { cookie } })
  t.match(bare.body, '<p id="who">Signed in as <strong>bob</strong>.</p>')
  const code = (await s.app.inject({ method: 'POST', url: '/auth/device/code', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'client_id=cli' })).json().user_code
  const named = await s.app.inject({ url: `/auth/device?user_code=${code}`, headers: { cookie } })
  t.match(named.body, 'Sign in <strong>Demo CLI</strong> as bob?')
  const odd = await browserOf('<b>x</b>')
  t.match((await s.app.inject({ url: '/auth/device', headers: { cookie: odd } })).body, 'Signed in as <strong>&lt;b&gt;x&lt;/b&gt;</strong>', 'escaped')
  t.match(bare.body, '<label for="user_code">Code</label>', 'the code field has its label')
})

t.test('the confirmation page says how it was reached, truly', async (t) => {
  const cookie = await browserOf('cy')
  // Back from a provider's round trip: the browser marks the redirect chain cross-site; the user signed in just now.
  const back = await s.app.inject({ url: AUTHORIZE, headers: { cookie, 'sec-fetch-site': 'cross-site' } })
  t.equal(back.statusCode, 200)
  t.match(back.body, /<p id="why">You have just signed in, and were sent here to sign the app in\. Continue only if you started it in Demo phone app yourself\.<\/p>/)
  t.notMatch(back.body, /another site/)

  clock.tick(10 * 60_000)
  const linked = await s.app.inject({ url: AUTHORIZE, headers: { cookie, 'sec-fetch-site': 'cross-site' } })
  t.match(linked.body, 'This sign-in was opened from another site.', 'signed in long ago, a link on another site')
  const sibling = await s.app.inject({ url: AUTHORIZE, headers: { cookie, 'sec-fetch-site': 'same-site' } })
  t.match(sibling.body, 'This sign-in was opened from another site.', 'a sibling subdomain is another site too')
  const here = await s.app.inject({ url: AUTHORIZE, headers: { cookie, 'sec-fetch-site': 'same-origin' } })
  t.match(here.body, 'This sign-in was opened from a page, not by the app itself.', 'a page of this site')
  for (const r of [back, linked, here]) t.match(r.body, 'Demo phone app asks to be signed in as cy.')
})
