/**
 * Header refresh (`tokenSources.headerRefresh`) cannot make a refresh credential of a token (issue 43, item 2): a
 * registered client's access token is renewed at `/token` only, however it is presented; a plain header token is
 * spent by its refresh (once, on every instance sharing the state store) and never outlives the session's limits.
 */
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { MemoryStateStore } from '../../../stores/state/memory.js'
import { sessionApp } from '../../helpers/session-app.js'
import { clientsApp } from '../../helpers/clients-app.js'

const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })
const session = { tokenDuration: '15m', maxAge: '1d' }

t.test('an expired header token is refreshed once: presented again, here or on another instance, it is refused', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const stateStore = new MemoryStateStore()
  const one = await sessionApp({ session, tokenSources: { headerRefresh: true }, stateStore })
  t.teardown(one.close)
  const two = await sessionApp({ session, tokenSources: { headerRefresh: true }, stateStore })
  t.teardown(two.close)
  const login = async (): Promise<string> => (await one.app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'ann', passwd: 'x' } })).headers['x-jwt'] as string
  const token = await login()
  clock.tick(20 * 60_000)

  let r = await one.app.inject({ url: '/private', headers: bearer(token) })
  t.equal(r.statusCode, 200, 'the first presentation refreshes it')
  const next = r.headers['x-jwt'] as string
  t.ok(next !== undefined && next !== token)

  for (const [where, app] of [['here', one.app], ['on another instance', two.app]] as const) {
    for (const headers of [bearer(token), { 'x-jwt': token }]) {
      r = await app.inject({ url: '/private', headers })
      t.equal(r.statusCode, 401, `spent, ${where}: refused`)
      t.equal(r.json().code, 'GATEHOUSE_ALREADY_USED')
      t.equal(r.headers['x-jwt'], undefined, 'and no new token')
    }
  }
  r = await two.app.inject({ url: '/private', headers: bearer(next) })
  t.equal(r.statusCode, 200, 'its successor signs the session in')
  t.equal(r.headers['x-jwt'], undefined, 'without a refresh of its own')

  // Requests racing with one expired token: at most one successor, whatever the interleaving.
  const racing = await login()
  clock.tick(20 * 60_000)
  const answers = await Promise.all([1, 2, 3].map(async () => await one.app.inject({ url: '/private', headers: bearer(racing) })))
  const successors = new Set(answers.filter((a) => a.statusCode === 200).map((a) => a.headers['x-jwt']))
  t.equal(successors.size, 1, `one successor (${answers.map((a) => a.statusCode).join(', ')})`)
  for (const a of answers) t.ok(a.statusCode === 200 || a.json().code === 'GATEHOUSE_ALREADY_USED', 'or the token is spent')

  const old = await login()
  clock.tick(25 * 3_600_000)
  r = await one.app.inject({ url: '/private', headers: bearer(old) })
  t.equal(r.statusCode, 401, 'past session.maxAge: no refresh')
  t.equal(r.json().code, 'GATEHOUSE_SESSION_EXPIRED')
})

t.test('a registered client\'s access token is renewed at /token only, never by presenting it expired', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const c = await clientsApp({ session, tokenSources: { headerRefresh: true } })
  t.teardown(c.close)
  const pair = await c.pair('ann')
  let r = await c.app.inject({ url: '/private', headers: bearer(pair.access_token) })
  t.equal(r.statusCode, 200, 'live: signs in')
  clock.tick(20 * 60_000)
  for (const headers of [bearer(pair.access_token), { 'x-jwt': pair.access_token }, bearer(pair.access_token)]) {
    r = await c.app.inject({ url: '/private', headers })
    t.equal(r.statusCode, 401, 'expired: refused, not refreshed')
    t.equal(r.json().code, 'GATEHOUSE_TOKEN_EXPIRED')
    t.equal(r.headers['x-jwt'], undefined, 'no new token in X-JWT')
  }
  r = await c.app.inject({ method: 'POST', url: '/auth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `grant_type=refresh_token&client_id=mobile&refresh_token=${pair.refresh_token}` })
  t.equal(r.statusCode, 200, 'the refresh grant renews it')
  r = await c.app.inject({ url: '/private', headers: bearer(r.json().access_token) })
  t.equal(r.statusCode, 200)
})
