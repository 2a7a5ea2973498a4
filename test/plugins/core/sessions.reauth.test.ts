/**
 * Ending other sessions from the session list, over HTTP: it needs a fresh sign-in or the password in the body
 * (`reauthentication.otherSessions`, on by default), so that a stolen session cannot sign its owner out and stay;
 * ending one's own session does not; "end all others" also ends the sessions dropped from the list past
 * `maxPerUser`, and spares the one that asked (on every instance: the revocation mark spares it by id).
 */
import t from 'tap'
import { MemoryStateStore } from '../../../stores/state/memory.js'
import { Revocations } from '../../../plugins/core/sessions/revocation.js'
import { noopLogger } from '../../../lib/logging/logger.js'
import { accountApp, call, fakeClock, PASSWORDS, sessionIdOf, signedIn, signIn } from '../../helpers/account-app.js'

t.test('a session signed in 20 minutes ago ends the others only with the password; its own end needs nothing', async (t) => {
  const clock = fakeClock(t)
  const app = await accountApp(t)
  const [a, b] = [app.client(), app.client()]
  await signIn(a, 'alice')
  await signIn(b, 'alice')
  clock.tick(20 * 60_000)
  for (const path of ['/auth/sessions', `/auth/sessions/${encodeURIComponent(sessionIdOf(a))}`]) {
    const res = await call(b, 'DELETE', path)
    t.equal(res.status, 401, path)
    t.match(await res.json(), { code: 'GATEHOUSE_REAUTHENTICATE' })
    const wrong = await call(b, 'DELETE', path, { password: 'guess' })
    t.equal(wrong.status, 403, `${path}: a wrong password`)
    t.match(await wrong.json(), { code: 'GATEHOUSE_CREDENTIALS' })
  }
  t.ok(await signedIn(a), 'nothing ended')
  const ended = await call(b, 'DELETE', '/auth/sessions', { password: PASSWORDS.alice })
  t.equal(ended.status, 200)
  t.same(await ended.json(), { revoked: 1 })
  t.notOk(await signedIn(a))
  t.ok(await signedIn(b))
  const own = await call(b, 'DELETE', `/auth/sessions/${encodeURIComponent(sessionIdOf(b))}`)
  t.equal(own.status, 204, 'ending one\'s own session is a logout: no password')
  t.equal(own.headers.get('clear-site-data'), '"cookies"')
})

t.test('reauthentication.otherSessions: false lets a signed-in session end the others as before', async (t) => {
  const clock = fakeClock(t)
  const app = await accountApp(t, { reauthentication: { otherSessions: false } })
  const [a, b] = [app.client(), app.client()]
  await signIn(a, 'alice')
  await signIn(b, 'alice')
  clock.tick(20 * 60_000)
  t.equal((await call(b, 'DELETE', `/auth/sessions/${encodeURIComponent(sessionIdOf(a))}`)).status, 204)
  t.notOk(await signedIn(a))
})

t.test('"end all others" ends the sessions dropped from the list past maxPerUser too, and spares the current one', async (t) => {
  const clock = fakeClock(t)
  const app = await accountApp(t, { revocation: { sessionList: { maxPerUser: 2 } } })
  const [a, b, c] = [app.client(), app.client(), app.client()]
  for (const x of [a, b, c]) {
    await signIn(x, 'alice')
    clock.tick(1000)
  }
  const listed = await (await call(c, 'GET', '/auth/sessions')).json() as Array<{ id: string }>
  t.same(listed.map((s) => s.id).sort(), [sessionIdOf(b), sessionIdOf(c)].sort(), 'the oldest session is no longer listed')
  const byId = await call(c, 'DELETE', `/auth/sessions/${encodeURIComponent(sessionIdOf(a))}`)
  t.equal(byId.status, 404, 'and cannot be ended by its id')
  const ended = await call(c, 'DELETE', '/auth/sessions')
  t.equal(ended.status, 200)
  t.same(await ended.json(), { revoked: 1 }, 'one listed session ended')
  const dropped = await a.fetch('/auth/user', { headers: { 'x-xsrf-token': sessionIdOf(a) } })
  t.equal(dropped.status, 401, 'the dropped session is ended too')
  t.match(await dropped.json(), { code: 'GATEHOUSE_SESSION_REVOKED' })
  t.notOk(await signedIn(b))
  t.ok(await signedIn(c), 'the session that asked stays')
  clock.tick(1000)
  const later = app.client()
  await signIn(later, 'alice')
  t.ok(await signedIn(later), 'a later sign-in is not affected')
})

/** A store the revocations read through promises, as any shared store (the plain memory store is read synchronously). */
class SharedStore extends MemoryStateStore {}

for (const Store of [MemoryStateStore, SharedStore]) t.test(`a revocation mark that spares one session, heard on another instance (${Store.name})`, async (t) => {
  const store = new Store()
  t.teardown(() => store.close())
  const made = (): Revocations => new Revocations({ store, recheckMs: 30_000, cacheLifetimeMs: 60_000, sessionLifetimeMs: 86_400_000, logger: noopLogger, dropCache: () => {} })
  const [one, two] = [made(), made()]
  await one.start()
  await two.start()
  t.teardown(async () => { await one.close(); await two.close() })
  const authTime = Date.now() / 1000 - 60
  const kept = { jti: 'kept-session-0123456789', userId: 'u1', authTime }
  const other = { jti: 'other-session-012345678', userId: 'u1', authTime }
  await one.revokeUser('u1', kept)
  t.equal(two.cached(kept, Date.now(), Date.now()), 'ok', 'heard: the spared session is served')
  t.equal(two.cached(other, Date.now(), Date.now()), 'revoked', 'heard: the other is refused')
  t.equal(await two.isRevoked(kept), false, 'in the store: spared')
  t.equal(await two.isRevoked(other), true)
  t.same(await two.revokedAmong('u1', [kept, other]), [false, true])
  // A later full revocation spares nothing; a session an earlier mark ended is not spared by a later one.
  await one.revokeUser('u1')
  t.equal(await two.isRevoked(kept), true)
  await one.revokeUser('u1', kept)
  t.equal(await two.isRevoked(kept), true, 'not brought back')
})
