import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import Fastify from 'fastify'
import { authPlugin } from '../../../auth.js'
import { client, parseSetCookie } from '../../helpers/client.js'
import { SECRET, sessionApp, tokenOf } from '../../helpers/session-app.js'

t.test('https url: __Host- cookie names by default (Secure, Path=/, no Domain)', async (t) => {
  const s = await sessionApp({ url: 'https://app.example' })
  t.teardown(s.close)
  const c = s.client()
  const r = await c.fetch('/auth/local/login', { method: 'POST', form: { user: 'alice', passwd: 'x' } })
  t.equal(r.status, 200)
  const cookies = r.headers.getSetCookie().map(parseSetCookie)
  t.same(cookies.map((k) => k.name), ['__Host-JWT', '__Host-XSRF-TOKEN'])
  for (const k of cookies) {
    t.equal(k.attrs.secure, true, `${k.name} Secure`)
    t.equal(k.attrs.path, '/', `${k.name} Path=/`)
    t.equal(k.attrs.domain, undefined, `${k.name} without Domain`)
    t.equal(k.attrs.samesite, 'Lax', `${k.name} SameSite=Lax`)
  }
  const jti = c.jar.get('__Host-XSRF-TOKEN')!
  t.equal((await c.fetch('/private', { headers: { 'x-xsrf-token': jti } })).status, 200, 'the session works under the new names')

  // What a sibling subdomain can toss: a complete pair of the attacker's own session under the plain names.
  const attacker = s.client()
  await attacker.fetch('/auth/local/login', { method: 'POST', form: { user: 'mallory', passwd: 'x' } })
  const aj = attacker.jar.get('__Host-XSRF-TOKEN')!
  const tossed = await s.client().fetch('/whoami', { headers: { cookie: `JWT=${tokenOf(attacker)}; XSRF-TOKEN=${aj}`, 'x-xsrf-token': aj } })
  t.same(await tossed.json(), { user: null }, 'cookies without the prefix are not read: the victim is not signed in as the attacker')

  const out = await c.fetch('/auth/logout', { headers: { 'x-xsrf-token': jti } })
  t.same(out.headers.getSetCookie().map((l) => parseSetCookie(l).name), ['__Host-JWT', '__Host-XSRF-TOKEN'], 'logout clears the prefixed cookies')
})

t.test('cookie names stay configurable; http urls keep the plain names', async (t) => {
  const named = await sessionApp({ url: 'https://app.example', cookies: { sessionName: 'SID', xsrfName: 'CSRF' } })
  t.teardown(named.close)
  let r = await named.client().fetch('/auth/local/login', { method: 'POST', form: { user: 'bob', passwd: 'x' } })
  t.same(r.headers.getSetCookie().map((l) => parseSetCookie(l).name), ['SID', 'CSRF'])
  const plain = await sessionApp()
  t.teardown(plain.close)
  r = await plain.client().fetch('/auth/local/login', { method: 'POST', form: { user: 'bob', passwd: 'x' } })
  t.same(r.headers.getSetCookie().map((l) => parseSetCookie(l).name), ['JWT', 'XSRF-TOKEN'])
  for (const [opts, option] of [
    [{ cookies: { sessionName: '__Host-JWT' } }, 'cookies.sessionName'],
    [{ cookies: { xsrfName: '__Secure-X' } }, 'cookies.xsrfName'],
    [{ url: 'https://app.example', cookies: { secure: false, sessionName: '__host-jwt' } }, 'cookies.sessionName']
  ] as const) {
    const app = Fastify()
    app.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1', ...opts })
    await t.rejects(app.ready(), { code: 'GATEHOUSE_OPTION', option }, `${option} needs Secure cookies`)
    await app.close()
  }
})

t.test('session.idleTimeout: a session unused for longer is not refreshed; an active one goes on (fake clock)', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const s = await sessionApp({ session: { tokenDuration: '15m', maxAge: '1d', idleTimeout: '30m' } })
  t.teardown(s.close)
  const busy = await s.login('carol')
  const idle = await s.login('dave')
  for (let minutes = 10; minutes <= 180; minutes += 10) {
    clock.tick(10 * 60_000)
    t.equal((await s.get(busy)).status, 200, `active user, minute ${minutes}`)
    if (minutes === 20) t.equal((await s.get(idle)).status, 200, 'idle user back after 20 minutes: refreshed')
  }
  // dave was last seen at minute 20; it is now minute 180.
  const r = await s.get(idle)
  t.equal(r.status, 401)
  t.same(await r.json(), { error: 'unauthorized', details: 'session idle for too long', code: 'GATEHOUSE_SESSION_EXPIRED' })

  const app = Fastify()
  app.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1', session: { tokenDuration: '15m', idleTimeout: '15m' } })
  await t.rejects(app.ready(), { code: 'GATEHOUSE_OPTION', option: 'session.idleTimeout' }, 'idleTimeout must exceed tokenDuration')
  await app.close()
})

t.test('idleTimeout off by default: a session unused for a week within session.maxAge refreshes', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const s = await sessionApp()
  t.teardown(s.close)
  const c = await s.login('erin')
  clock.tick(7 * 86_400_000)
  t.equal((await s.get(c)).status, 200)
})
