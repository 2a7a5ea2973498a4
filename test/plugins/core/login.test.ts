/**
 * A sign-in ends the session the browser held before it, server-side (ASVS 5.0 7.2.4): the new session replaces the
 * old one in the browser, and a copy of the old token (taken on a shared computer, or out of this browser) is
 * refused from then on, an expired but still refreshable one included. A cookie that is no session of ours ends
 * nothing and does not stop the sign-in; with `revocation: false` nothing can be ended server-side.
 */
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { authPlugin, type AuthOptions } from '../../../auth.js'
import type { AuditEvent } from '../../../lib/audit/events.js'
import { userId } from '../../../lib/user.js'
import { injectApp } from '../../helpers/app.js'
import { CookieJar, type Client } from '../../helpers/client.js'

async function start (t: Tap.Test, extra: Partial<AuthOptions> = {}) {
  const events: AuditEvent[] = []
  const injected = await injectApp(async (app) => {
    await app.register(authPlugin, {
      secret: () => 'prior-session-secret-0123456789abcdef',
      url: 'http://127.0.0.1',
      onEvent: (e) => { events.push(e) },
      providers: [{ kind: 'direct', name: 'local', checker: () => true }],
      ...extra
    })
  })
  t.teardown(() => injected.app.close())
  return { ...injected, events }
}

const signIn = async (c: Client, user: string): Promise<number> => (await c.fetch('/auth/local/login', { method: 'POST', json: { user, passwd: 'x' } })).status
const me = async (c: Client): Promise<Response> => await c.fetch('/auth/user', { headers: { 'x-xsrf-token': c.jar.get('XSRF-TOKEN') ?? '' } })
/** A browser holding a copy of `c`'s cookies. */
function copyOf (client: (jar?: CookieJar) => Client, c: Client): Client {
  const jar = new CookieJar()
  for (const [name, cookie] of c.jar.cookies) jar.cookies.set(name, { ...cookie })
  return client(jar)
}

t.test('a session the browser held before signing in is revoked server-side at sign-in', async (t) => {
  const { client, events } = await start(t)
  const browser = client()
  t.equal(await signIn(browser, 'alice'), 200)
  const copy = copyOf(client, browser)
  t.equal((await me(copy)).status, 200, 'the copy works while the session lives')

  t.equal(await signIn(browser, 'bob'), 200, 'another user signs in in the same browser')
  t.equal((await (await me(browser)).json()).name, 'bob')
  const old = await me(copy)
  t.equal(old.status, 401, 'the old session is ended on the server, not only replaced in the browser')
  t.match(await old.json(), { code: 'GATEHOUSE_SESSION_REVOKED' })
  t.match(events.find((e) => e.type === 'session.revoked'), { reason: 'sign_in', by: 'sign_in', scope: 'session', userId: userId('local', 'alice') })

  const again = copyOf(client, browser)
  t.equal(await signIn(browser, 'bob'), 200, 'the same user signing in again')
  t.equal((await me(again)).status, 401, 'ends the older session too')
  t.equal((await me(browser)).status, 200, 'the new one lives')
})

t.test('an expired but refreshable session is ended too', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const { client } = await start(t)
  const browser = client()
  await signIn(browser, 'carol')
  const copy = copyOf(client, browser)
  clock.tick(20 * 60_000)
  const refreshed = copyOf(client, copy)
  t.equal((await me(refreshed)).status, 200, 'control: past the token lifetime the session still refreshes')
  await signIn(browser, 'carol')
  t.equal((await me(copy)).status, 401, 'the expired token no longer refreshes once the browser signed in anew')
})

t.test('a cookie that is no session of ours ends nothing and does not stop the sign-in', async (t) => {
  const { client, events } = await start(t)
  const browser = client()
  browser.jar.cookies.set('JWT', { name: 'JWT', value: 'eyJhbGciOiJIUzI1NiJ9.e30.not-a-signature', attrs: {} })
  t.equal(await signIn(browser, 'dave'), 200)
  t.equal((await me(browser)).status, 200)
  t.notOk(events.some((e) => e.type === 'session.revoked'))
})

t.test('with revocation off nothing is ended server-side (documented)', async (t) => {
  const { client } = await start(t, { revocation: false })
  const browser = client()
  await signIn(browser, 'erin')
  const copy = copyOf(client, browser)
  t.equal(await signIn(browser, 'erin'), 200)
  t.equal((await me(copy)).status, 200, 'a stateless session lives until it expires')
})
