/**
 * One identity per account over HTTP: a checker that folds names as user stores do (NFKC, trimmed, lower case,
 * zero-width characters removed) accepts `ALICE`, ` alice`, `ａｌｉｃｅ` and `alice` with a zero-width space with
 * alice's password; each of them must be alice, with alice's one id, so that her second factor, her session list,
 * the lockout and `revokeUser` see one account. A checker may name the account itself (`{ ok, user }`); an answer
 * that is neither is refused as a wrong password and logged.
 */
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { funcLogger, normaliseAccountName, safeEqual, type CredChecker } from '../../index.js'
import { userId } from '../../lib/user.js'
import { oathtool, passwordLogin, secondStep, startApp, withTotp } from '../helpers/totp-app.js'
import { listApp } from '../helpers/sessions-app.js'
import { client, type Client } from '../helpers/client.js'

const PASSWORDS: Record<string, string> = { alice: 'alice-secret', bob: 'bob-secret' }
const SPELLINGS = ['ALICE', ' alice', 'ａｌｉｃｅ', 'alice\u200b']
const ALICE_ID = userId('local', 'alice')

/** A checker comparing names as a user store with a case-insensitive, NFKC-folded unique index does. */
const foldingChecker: CredChecker = (user, passwd) => {
  const key = normaliseAccountName(user)
  return Object.hasOwn(PASSWORDS, key) && safeEqual(PASSWORDS[key]!, passwd)
}

async function login (c: Client, user: string, passwd = 'alice-secret'): Promise<Response> {
  return await c.fetch('/auth/local/login', { method: 'POST', json: { user, passwd } })
}

function xsrf (c: Client): Record<string, string> {
  return { 'x-xsrf-token': c.jar.get('XSRF-TOKEN') ?? '' }
}

t.test('every spelling of a user holding an authenticator app needs the second factor, and completes as that user', async (t) => {
  const clock = FakeTimers.install({ now: Date.UTC(2026, 10, 25, 12, 0, 15), toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const app = await startApp(t, {}, { providers: [{ kind: 'direct', name: 'local', checker: foldingChecker }] })
  const { secret } = await withTotp(app, 'alice')
  for (const spelling of SPELLINGS) {
    const c = app.client()
    const res = await passwordLogin(c, spelling, 'alice-secret')
    t.equal(res.status, 401, `${JSON.stringify(spelling)}: the password alone is not enough`)
    t.match(await res.json(), { code: 'GATEHOUSE_SECOND_FACTOR', methods: ['totp'] })
    t.equal(c.jar.get('JWT'), undefined, 'no session')
  }
  const c = app.client()
  await passwordLogin(c, 'ＡＬＩＣＥ', 'alice-secret')
  clock.tick(30_000)
  const done = await secondStep(c, { code: oathtool(secret) })
  t.equal(done.status, 200)
  t.match(await done.json(), { name: 'alice', id: ALICE_ID }, 'signed in as alice, with her id')
})

t.test('a boolean checker: every spelling signs in as one user; the session list shows them together and revokeUser ends them all', async (t) => {
  const app = await listApp({ providers: [{ kind: 'direct', name: 'local', checker: foldingChecker }] })
  t.teardown(() => app.close())
  const clients: Client[] = []
  for (const spelling of ['alice', ...SPELLINGS]) {
    const c = app.client()
    const res = await login(c, spelling)
    t.equal(res.status, 200)
    t.match(await res.json(), { name: 'alice', id: ALICE_ID }, `${JSON.stringify(spelling)} is alice`)
    clients.push(c)
  }
  const bob = app.client()
  t.equal((await login(bob, 'Bob', 'bob-secret')).status, 200)

  const list = await (await app.list(clients[0]!)).json() as Array<{ current: boolean }>
  t.equal(list.length, 5, 'one list holds the sessions of every spelling')
  t.equal(list.filter((s) => s.current).length, 1)

  await app.app.auth.revokeUser(ALICE_ID)
  for (const [i, c] of clients.entries()) t.equal((await app.get(c)).status, 401, `session ${i} ended`)
  t.equal((await app.get(bob)).status, 200, 'another user\'s session lives on')
})

t.test('lockout and identity follow one rule: accountKey ignoring dots makes a.l.i.c.e alice for both', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const accountKey = (name: string): string => normaliseAccountName(name).replaceAll('.', '')
  const checker: CredChecker = (user, passwd) => Object.hasOwn(PASSWORDS, accountKey(user)) && safeEqual(PASSWORDS[accountKey(user)]!, passwd)
  const app = await listApp({ providers: [{ kind: 'direct', name: 'local', checker }], rateLimit: { failures: { accountKey, perIp: 100 } } })
  t.teardown(() => app.close())
  const c = app.client()
  for (const spelling of ['a.lice', 'AL.ICE', 'alice', 'ａｌｉｃｅ.', 'al.ice ']) t.equal((await login(c, spelling, 'wrong')).status, 403)
  const locked = await login(c, 'a.l.i.c.e')
  t.equal(locked.status, 429, 'five failures over five spellings lock the account for every spelling, the right password included')
  clock.tick(61_000)
  const res = await login(c, 'a.l.i.c.e')
  t.equal(res.status, 200)
  t.match(await res.json(), { name: 'alice', id: ALICE_ID }, 'signed in as alice: the name and id the lockout counts by')
})

t.test('a checker naming the account: its name as the store keeps it, the id from its key', async (t) => {
  const directory: Record<string, { name: string; id: string; email: string }> = {
    alice: { name: 'Alice', id: 'db-42', email: 'alice@example.com' }
  }
  const byName: CredChecker = (user, passwd) => foldingChecker(user, passwd) === true ? { ok: true, user: 'Alice' } : { ok: false }
  const byRecord: CredChecker = (user, passwd) => {
    const record = directory[normaliseAccountName(user)]
    return record !== undefined && foldingChecker(user, passwd) === true ? { ok: true, user: { ...record, role: 'editor', attrs: { team: 'docs' } } } : { ok: false }
  }
  const app = await listApp({ providers: [{ kind: 'direct', name: 'local', checker: byName }, { kind: 'direct', name: 'staff', checker: byRecord }] })
  t.teardown(() => app.close())
  for (const spelling of ['alice', ' ALICE']) {
    const res = await login(app.client(), spelling)
    t.match(await res.json(), { name: 'Alice', id: ALICE_ID }, 'the canonical name; its id the same as a boolean checker gives alice')
  }
  const c = app.client()
  const res = await c.fetch('/auth/staff/login', { method: 'POST', json: { user: 'ａｌｉｃｅ', passwd: 'alice-secret' } })
  t.equal(res.status, 200)
  t.match(await res.json(), { name: 'Alice', id: userId('staff', 'db-42'), email: 'alice@example.com', role: 'editor', attrs: { team: 'docs' } })
  directory.alice!.name = 'Alice Liddell'
  const renamed = await app.client().fetch('/auth/staff/login', { method: 'POST', json: { user: 'alice', passwd: 'alice-secret' } })
  t.match(await renamed.json(), { name: 'Alice Liddell', id: userId('staff', 'db-42') }, 'a renamed account keeps its id')
  t.equal((await login(app.client(), 'alice', 'wrong')).status, 403, '{ ok: false } is a wrong password')
})

t.test('checker answers that are not true, false or { ok, user }: 403 as a wrong password, no session, the reason logged, counted by the lockout', async (t) => {
  const lines: string[] = []
  let answer: unknown
  const app = await listApp({
    logger: funcLogger((line) => lines.push(line)),
    rateLimit: { failures: { perIp: 1000 } },
    providers: [{ kind: 'direct', name: 'local', checker: (() => answer) as unknown as CredChecker }]
  })
  t.teardown(() => app.close())
  const cases: Array<[string, unknown, RegExp]> = [
    ['undefined', undefined, /undefined, not true, false or \{ ok, user \}/],
    ['null', null, /null, not true/],
    ['a number', 1, /a number, not true/],
    ['a string', 'alice', /a string, not true/],
    ['an array', [true], /an array, not true/],
    ['a promise of nothing', Promise.resolve(), /undefined, not true/],
    ['no ok', {}, /ok: undefined, not true or false/],
    ['ok as a string', { ok: 'true' }, /ok: a string, not true or false/],
    ['an unknown field', { ok: true, username: 'alice' }, /unknown field "username"/],
    ['a user that is a number', { ok: true, user: 42 }, /user: a number, not a name or/],
    ['an empty name', { ok: true, user: ' ' }, /user: an empty name/],
    ['a name of invisible characters only', { ok: true, user: '\u200b\u2060' }, /a user name that is empty as the lockout counts it/],
    ['a name of 257 characters', { ok: true, user: 'a'.repeat(257) }, /longer than 256 characters/],
    ['a user without a name', { ok: true, user: {} }, /user.name: undefined, not a string/],
    ['an id that is a number', { ok: true, user: { name: 'alice', id: 7 } }, /user.id: a number, not a string/],
    ['an unknown user field', { ok: true, user: { name: 'alice', admin: true } }, /unknown user field "admin"/],
    ['attrs that are a list', { ok: true, user: { name: 'alice', attrs: ['x'] } }, /user.attrs: an array, not an object/],
    ['a role that is a number', { ok: true, user: { name: 'alice', role: 1 } }, /user.role: a number/],
    ['{ ok: false } with a malformed user', { ok: false, user: 5 }, /user: a number/]
  ]
  for (const [i, [label, value, reason]] of cases.entries()) {
    answer = value
    lines.length = 0
    const c = app.client()
    const res = await login(c, `user${i}`, 'pw')
    t.equal(res.status, 403, label)
    t.same(await res.json(), { error: 'forbidden', details: 'incorrect user or password', code: 'GATEHOUSE_CREDENTIALS' }, `${label}: the answer of a wrong password`)
    t.same(res.headers.getSetCookie(), [], `${label}: no cookie`)
    t.match(lines.join('\n'), reason, `${label}: the reason is logged`)
    t.match(lines.join('\n'), /\[ERROR\] direct provider "local": the checker answered .*; refused as a wrong password/)
  }
  t.notOk(lines.join('\n').includes('alice-secret'), 'nothing of an answer\'s content is logged')

  answer = true
  const empty = await login(app.client(), '\u200b \u200b', 'pw')
  t.equal(empty.status, 403, 'true for a name that is empty once folded names no account')
  t.match(lines.join('\n'), /a name that is empty as the lockout counts it/)

  answer = null
  for (let i = 0; i < 5; i++) t.equal((await login(app.client(), 'carol', 'pw')).status, 403)
  answer = true
  t.equal((await login(app.client(), 'carol', 'pw')).status, 429, 'malformed answers count as failures: the account locks')
  const owner = app.client()
  t.equal((await login(owner, 'dave', 'pw')).status, 200, 'a good answer signs in')
  t.equal((await (await app.list(owner)).json() as unknown[]).length, 1, 'no session was listed for a refused login')
  t.match(await (await owner.fetch('/auth/user', { headers: xsrf(owner) })).json(), { name: 'dave', id: userId('local', 'dave') })
})
