/**
 * Audit events of passkeys, with the software authenticator over real HTTP (no browser needed): a passkey added,
 * the password login that then waits for it (login.second_factor_required), the passkey login that completes it,
 * a passkey answer that does not verify, and the passkey removed.
 */
import t from 'tap'
import type { AuditEvent } from '../../../lib/audit/events.js'
import { passwordLogin, passkeyLogin, startApp, withPasskey, xsrf } from '../../helpers/passkey-app.js'
import { typesOf } from './app.js'

t.test('passkey.added, login.second_factor_required, login.succeeded by passkey, passkey.removed', async (t) => {
  const events: AuditEvent[] = []
  const app = await startApp(t, { secondFactor: ['local'] }, { onEvent: (e) => { events.push(e) } })
  const { c, authn, credential } = await withPasskey(app, 'alice')
  t.same(typesOf(events), ['login.succeeded', 'passkey.added', 'session.revoked', 'logout'])
  const userId = events[0]!.userId
  t.match(events[1], { type: 'passkey.added', provider: 'passkey', userId, reason: 'registered', outcome: 'success' })
  t.notOk(JSON.stringify(events[1]).includes(credential.id), 'no credential data')

  events.length = 0
  const pending = await passwordLogin(c, 'alice')
  t.equal(pending.status, 401)
  t.same(typesOf(events), ['login.second_factor_required'])
  t.match(events[0], { provider: 'local', userId, outcome: 'pending', reason: 'second_factor' })

  events.length = 0
  const bad = await passkeyLogin(c, authn, credential, {}, { origin: 'https://evil.example' })
  t.equal(bad.status >= 400 && bad.status < 500, true, `refused: ${bad.status}`)
  t.match(events.at(-1), { type: 'login.failed', provider: 'passkey', status: bad.status })

  events.length = 0
  const done = await passkeyLogin(c, authn, credential)
  t.equal(done.status, 200, await done.clone().text())
  t.same(typesOf(events), ['login.succeeded'])
  t.match(events[0], { provider: 'passkey', userId })

  events.length = 0
  const del = await c.fetch(`/auth/passkey/credentials/${credential.id}`, { method: 'DELETE', headers: xsrf(c) })
  t.equal(del.status, 200)
  t.same(typesOf(events), ['passkey.removed'])
  t.match(events[0], { provider: 'passkey', userId, reason: 'removed_by_user' })
})
