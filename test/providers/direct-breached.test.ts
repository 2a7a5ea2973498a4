/**
 * The direct provider's `breachedPasswords` over real HTTP: an app on a port whose checker accepts known-breached
 * passwords, the range API a local stand-in. `warn` signs in with the flag header and a `password.breached`
 * event; `refuse` answers 403 `GATEHOUSE_BREACHED_PASSWORD` and issues nothing; a wrong password is never sent
 * to the check; fail-open and fail-closed at sign-in.
 */
import t, { type Test } from 'tap'
import { authPlugin } from '../../auth.js'
import { directProvider, type DirectBreachedPasswords } from '../../providers/direct.js'
import { breachedPasswords } from '../../lib/breached-passwords.js'
import type { AuditEvent } from '../../lib/audit/events.js'
import { listen } from '../helpers/client.js'
import { pwnedStandin } from '../helpers/pwned-standin.js'

const SECRET = 'breached-test-secret-0123456789abcdef-0123456789'
const standin = await pwnedStandin()
t.teardown(() => standin.close())
standin.breach('password123', 250_000)

async function start (t: Test, breached: DirectBreachedPasswords): Promise<{ base: string; events: AuditEvent[] }> {
  const events: AuditEvent[] = []
  const { app, base } = await listen(async (app) => {
    await app.register(authPlugin, { secret: SECRET, url: 'http://app.localhost', onEvent: (e) => { events.push(e) } })
    // The checker takes both a breached and a fresh password for ann: the breach check decides.
    await app.register(directProvider, { name: 'local', checker: (_user: string, passwd: string) => passwd === 'password123' || passwd === 'fresh-long-passphrase-42', breachedPasswords: breached })
  })
  t.teardown(() => app.close())
  return { base, events }
}

const login = async (base: string, passwd: string) => await fetch(`${base}/auth/local/login`, { method: 'POST', body: new URLSearchParams({ user: 'ann', passwd }) })

t.test('warn: signed in, flagged on the answer and audited', async (t) => {
  const app = await start(t, { check: breachedPasswords({ rangeUrl: standin.rangeUrl }), onBreached: 'warn' })
  const res = await login(app.base, 'password123')
  t.equal(res.status, 200)
  t.equal(res.headers.get('gatehouse-password-breached'), 'true')
  t.match(res.headers.get('set-cookie'), /JWT=/)
  t.match(app.events.find((e) => e.type === 'password.breached'), { reason: 'warned', outcome: 'success', provider: 'local', count: 250_000 })
  const clean = await login(app.base, 'fresh-long-passphrase-42')
  t.equal(clean.status, 200)
  t.equal(clean.headers.get('gatehouse-password-breached'), null, 'no flag for a password not in breaches')
})

t.test('refuse: 403 GATEHOUSE_BREACHED_PASSWORD, no session; a wrong password never reaches the check', async (t) => {
  const app = await start(t, { check: breachedPasswords({ rangeUrl: standin.rangeUrl }), onBreached: 'refuse' })
  const res = await login(app.base, 'password123')
  t.equal(res.status, 403)
  t.match(await res.json(), { code: 'GATEHOUSE_BREACHED_PASSWORD', details: /data breaches/ })
  t.equal(res.headers.get('set-cookie'), null, 'nothing issued')
  t.match(app.events.filter((e) => e.type !== 'login.failed').map((e) => [e.type, e.reason]), [['password.breached', 'refused']])
  t.match(app.events.find((e) => e.type === 'login.failed'), { reason: 'breached_password', status: 403 })
  const asked = standin.asked.length
  t.equal((await login(app.base, 'wrong')).status, 403)
  t.equal(standin.asked.length, asked, 'the range API was not asked for a wrong password')
  t.equal((await login(app.base, 'fresh-long-passphrase-42')).status, 200)
})

t.test('the range API down: fail-open signs in, fail-closed answers 503', async (t) => {
  t.teardown(() => { standin.mode = 'ok' })
  standin.mode = 'down'
  const open = await start(t, { check: breachedPasswords({ rangeUrl: standin.rangeUrl }), onBreached: 'refuse' })
  t.equal((await login(open.base, 'password123')).status, 200, 'fail-open: let in unchecked')
  const closed = await start(t, { check: breachedPasswords({ rangeUrl: standin.rangeUrl, onUnavailable: 'refuse' }), onBreached: 'refuse' })
  const res = await login(closed.base, 'password123')
  t.equal(res.status, 503)
  t.equal((await res.json()).code, 'GATEHOUSE_UNAVAILABLE')
  t.equal(res.headers.get('set-cookie'), null)
})

t.test('the range API slow or answering a proxy\'s page: the sign-in waits only until the deadline', async (t) => {
  t.teardown(() => { standin.mode = 'ok' })
  standin.mode = 'slow'
  const open = await start(t, { check: breachedPasswords({ rangeUrl: standin.rangeUrl, timeout: 300 }), onBreached: 'refuse' })
  // `slow` never answers: a sign-in held past the deadline would never answer (and fail on the file's time limit).
  const letIn = await login(open.base, 'password123')
  t.equal(letIn.status, 200, 'fail-open: let in unchecked after the deadline')
  t.equal(letIn.headers.get('gatehouse-password-breached'), null, 'not flagged: it was not checked')
  const closed = await start(t, { check: breachedPasswords({ rangeUrl: standin.rangeUrl, timeout: 300, onUnavailable: 'refuse' }), onBreached: 'refuse' })
  const began = performance.now()
  const refused = await login(closed.base, 'password123')
  t.equal(refused.status, 503)
  t.equal((await refused.json()).code, 'GATEHOUSE_UNAVAILABLE')
  t.equal(refused.headers.get('set-cookie'), null, 'nothing issued')
  // A lower bound only (load makes it later, never earlier).
  t.ok(performance.now() - began >= 250, 'it waited for the service until the deadline')
  standin.mode = 'garbage'
  const page = await login(closed.base, 'password123')
  t.equal(page.status, 503, 'a 200 HTML page is not a range: fail-closed refuses')
  t.equal(page.headers.get('set-cookie'), null)
})

t.test('bad options name the option', async (t) => {
  const Fastify = (await import('fastify')).default
  const register = async (breached: unknown): Promise<void> => {
    const app = Fastify()
    await app.register(authPlugin, { secret: SECRET, url: 'http://app.localhost' })
    await app.register(directProvider, { checker: () => true, breachedPasswords: breached as never })
    await app.ready()
  }
  await t.rejects(register({}), { option: 'direct.breachedPasswords.check' })
  await t.rejects(register({ check: breachedPasswords(), onBreached: 'shrug' }), { option: 'direct.breachedPasswords.onBreached' })
  await t.rejects(register({ check: breachedPasswords(), colour: 1 }), { option: 'direct.breachedPasswords.colour' })
})
