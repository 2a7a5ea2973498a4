/**
 * Audit events of password logins: success, bad credentials, the lockout that follows, the login rate limit and
 * the cross-site guard, each produced by a real request, with fields and order asserted.
 */
import t from 'tap'
import { auditApp, Jar, PASSWORDS, signIn, typesOf } from './app.js'

t.test('a password login emits login.succeeded with the user, provider, audience and request', async (t) => {
  const { app, events } = await auditApp()
  t.teardown(() => app.close())
  const before = Date.now()
  const jar = new Jar()
  const res = await jar.inject(app, { method: 'POST', url: '/auth/local/login?session=1', payload: { user: 'alice', passwd: PASSWORDS.alice, aud: 'site1' } })
  t.equal(res.statusCode, 200)
  t.same(typesOf(events), ['login.succeeded'])
  const e = events[0]!
  t.match(e, { type: 'login.succeeded', outcome: 'success', reason: 'session_issued', provider: 'local', aud: 'site1', ip: '127.0.0.1', sessionOnly: true })
  t.equal(e.userId, res.json().id, 'the hashed id the session carries')
  t.match(e.userId, /^local_[0-9a-f]{40}$/)
  t.equal(e.requestId, res.headers['request-id'] ?? e.requestId)
  t.type(e.requestId, 'string')
  t.ok(e.at >= before && e.at <= Date.now(), 'at is the time of the decision (ms)')
  t.ok(Object.isFrozen(e), 'listeners cannot change what others see')
  t.notOk(JSON.stringify(e).includes(PASSWORDS.alice), 'no password')
  t.notOk(JSON.stringify(e).includes(jar.cookies.get('XSRF-TOKEN')!), 'no session id (it is the XSRF value)')
})

t.test('a wrong password emits login.failed bad_credentials with the status', async (t) => {
  const { app, events } = await auditApp()
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'alice', passwd: 'not-it' } })
  t.equal(res.statusCode, 403)
  t.same(typesOf(events), ['login.failed'])
  t.match(events[0], { outcome: 'failure', reason: 'bad_credentials', status: 403, provider: 'local', userId: undefined })
  t.notOk(JSON.stringify(events).includes('not-it'))
})

t.test('failures lock the account: lockout.started, then a locked login is rate_limited and login.failed locked', async (t) => {
  const { app, events } = await auditApp({ rateLimit: { failures: { perAccount: 2, perIp: 0, lockout: '1m' } } })
  t.teardown(() => app.close())
  for (let i = 0; i < 2; i++) {
    const r = await app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'bob', passwd: 'guess' } })
    t.equal(r.statusCode, 403)
  }
  t.same(typesOf(events), ['login.failed', 'lockout.started', 'login.failed'], 'the lock is set by the failure that reaches the threshold')
  t.match(events[1], { type: 'lockout.started', outcome: 'failure', scope: 'account', durationMs: 60_000, reason: 'failures_on_account', ip: '127.0.0.1' })
  events.length = 0
  // Locked: even the right password is refused, and the checker does not run.
  const locked = await app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'bob', passwd: PASSWORDS.bob } })
  t.equal(locked.statusCode, 429)
  t.same(typesOf(events), ['rate_limited', 'login.failed'])
  t.match(events[0], { reason: 'locked', outcome: 'failure' })
  t.ok((events[0] as { retryAfterMs: number }).retryAfterMs > 0)
  t.match(events[1], { reason: 'locked', status: 429, provider: 'local' })
})

t.test('failures from one address lock the address (scope ip)', async (t) => {
  const { app, events } = await auditApp({ rateLimit: { failures: { perAccount: 0, perIp: 2, lockout: '1m' } } })
  t.teardown(() => app.close())
  for (const user of ['u1', 'u2']) await app.inject({ method: 'POST', url: '/auth/local/login', payload: { user, passwd: 'guess' } })
  const lock = events.filter((e) => e.type === 'lockout.started')
  t.equal(lock.length, 1)
  t.match(lock[0], { scope: 'ip', reason: 'failures_from_ip', ip: '127.0.0.1' })
})

t.test('past rateLimit.login: rate_limited (login), then login.failed throttled', async (t) => {
  const { app, events } = await auditApp({ rateLimit: { login: { max: 2, window: '1m' } } })
  t.teardown(() => app.close())
  await signIn(app)
  await signIn(app)
  events.length = 0
  const res = await app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'alice', passwd: PASSWORDS.alice } })
  t.equal(res.statusCode, 429)
  t.same(typesOf(events), ['rate_limited', 'login.failed'])
  t.match(events[0], { reason: 'login', outcome: 'failure', ip: '127.0.0.1' })
  t.match(events[1], { reason: 'throttled', status: 429, provider: 'local' })
})

t.test('a cross-site login and a cross-site logout emit cross_site.refused', async (t) => {
  const { app, events } = await auditApp()
  t.teardown(() => app.close())
  const login = await app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'alice', passwd: PASSWORDS.alice }, headers: { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' } })
  t.equal(login.statusCode, 403)
  t.same(typesOf(events), ['cross_site.refused', 'login.failed'])
  t.match(events[0], { route: 'login', provider: 'local', origin: 'https://evil.example', fetchSite: 'cross-site', reason: 'cross-site' })
  t.match(events[1], { reason: 'cross_site', status: 403 })
  events.length = 0
  const logout = await app.inject({ method: 'GET', url: '/auth/logout', headers: { origin: 'https://evil.example' } })
  t.equal(logout.statusCode, 403)
  t.same(typesOf(events), ['cross_site.refused'])
  t.match(events[0], { route: 'logout', provider: undefined, fetchSite: undefined, reason: 'origin' })
})

t.test('a confirmation sent emits confirmation.sent with the address masked', async (t) => {
  const { app, events, outbox } = await auditApp()
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'GET', url: '/auth/mail/login?user=alice&address=alice.smith@example.com&aud=site1' })
  t.equal(res.statusCode, 200)
  t.equal(outbox.length, 1)
  t.same(typesOf(events), ['confirmation.sent'])
  t.match(events[0], { provider: 'mail', to: 'a…@example.com', aud: 'site1', outcome: 'success' })
  t.notOk(JSON.stringify(events).includes('alice.smith'), 'never the full address')
  const link = /link (\S+)/.exec(outbox[0]!)![1]!
  t.notOk(JSON.stringify(events).includes(link), 'never the confirmation token')
})
