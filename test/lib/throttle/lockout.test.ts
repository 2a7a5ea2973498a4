/**
 * Throttling and lockout of credential checks through the app (over `inject`: nothing here depends on the wire): the brute force of the attack pass (1,000 wrong
 * passwords for `admin`, then the right one) is refused after the configured number, the right password included;
 * unknown accounts answer exactly like existing ones; parallel guesses get no extra tries; an address trying many
 * accounts is locked; the core's basic auth is locked the same way.
 */
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import type { FastifyInstance } from 'fastify'
import { authPlugin } from '../../../auth.js'
import { MemoryStateStore } from '../../../stores/state/memory.js'
import type { Client } from '../../helpers/client.js'
import { injectApp } from '../../helpers/app.js'
import { latencyStore } from '../../helpers/latency-store.js'

const SECRET = () => 'throttle-test-secret-0123456789abcdef'
const USERS: Record<string, string> = { admin: 'admin-secret', alice: 'alice-secret' }

interface Started { app: FastifyInstance; open: () => Client; checks: string[] }

async function start (rateLimit?: unknown, extra: Record<string, unknown> = {}): Promise<Started> {
  const checks: string[] = []
  const { app, client: open } = await injectApp(async (app) => {
    await app.register(authPlugin, {
      secret: SECRET,
      url: 'http://127.0.0.1',
      ...(rateLimit === undefined ? {} : { rateLimit: rateLimit as never }),
      ...extra,
      providers: [{ kind: 'direct', name: 'local', checker: (u: string, p: string) => { checks.push(u); return USERS[u] === p } }]
    })
    app.get('/private', { preHandler: app.auth.authenticate }, async (req) => ({ name: req.user!.name }))
  })
  t.teardown(() => app.close())
  return { app, open, checks }
}

async function login (open: () => Client, user: string, passwd: string): Promise<Response> {
  return await open().fetch('/auth/local/login', { method: 'POST', json: { user, passwd } })
}

t.test('the brute force: 429 after the configured failures, the right password refused while locked', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const { open, checks } = await start({ login: { max: 2000 } })
  const statuses: number[] = []
  for (let i = 0; i < 1000; i++) statuses.push((await login(open, 'admin', `guess-${i}`)).status)
  t.same(statuses.slice(0, 5), [403, 403, 403, 403, 403], 'five wrong passwords are checked and refused')
  t.ok(statuses.slice(5).every((s) => s === 429), 'every later guess is 429')
  t.equal(checks.length, 5, 'the checker ran five times only')
  const right = await login(open, 'admin', 'admin-secret')
  t.equal(right.status, 429, 'the right password is refused during the lockout')
  t.equal(right.headers.get('retry-after'), '60', 'Retry-After: the first lockout, one minute')
  t.same(await right.json(), { error: 'too many requests', details: 'too many failed sign-in attempts; try again later', code: 'GATEHOUSE_RATE_LIMITED' })
  t.equal(right.headers.get('set-cookie'), null, 'no session')
  t.equal(checks.length, 5)

  clock.tick(60_000)
  const wrongAgain = await login(open, 'admin', 'still-wrong')
  t.equal(wrongAgain.status, 403, 'after the lockout one attempt runs')
  const locked = await login(open, 'admin', 'admin-secret')
  t.equal(locked.status, 429, 'and a failure locks again at once')
  t.equal(locked.headers.get('retry-after'), '120', '… for twice as long (backoff)')
  clock.tick(120_000)
  const ok = await login(open, 'admin', 'admin-secret')
  t.equal(ok.status, 200, 'the right password once the lock ran out')
  t.equal((await ok.json()).name, 'admin')
  t.equal((await login(open, 'admin', 'wrong')).status, 403, 'a success forgot the failures: a new guess is checked')
  t.equal((await login(open, 'alice', 'alice-secret')).status, 200, 'other accounts were never locked')
})

t.test('an unknown account answers exactly like an existing one', async (t) => {
  const { open } = await start({ login: { max: 2000 } })
  const seen: Record<string, string[]> = {}
  for (const user of ['alice', 'nobody-here']) {
    seen[user] = []
    for (let i = 0; i < 8; i++) {
      const r = await login(open, user, `wrong-${i}`)
      seen[user].push(`${r.status} ${r.headers.get('retry-after')} ${await r.text()}`)
    }
  }
  t.same(seen['nobody-here'], seen.alice, 'same statuses, Retry-After and bodies')
  t.match(seen.alice![5], /^429 60 /)
})

t.test('parallel guesses get no more tries than a sequence', async (t) => {
  // A store with a network's latency: the 60 guesses are all counted before the first verdict, as on Redis.
  const { open, checks } = await start({ login: { max: 2000 } }, { stateStore: latencyStore() })
  const statuses = await Promise.all(Array.from({ length: 60 }, (_, i) => login(open, 'admin', `p-${i}`).then((r) => r.status)))
  t.ok(checks.length <= 5 && checks.length >= 1, `the checker ran ${checks.length} times (at most the threshold)`)
  t.equal(statuses.filter((s) => s === 429).length, 60 - checks.length)
})

t.test('one address trying many accounts is locked (perIp)', async (t) => {
  const { open, checks } = await start({ login: { max: 2000 }, failures: { perIp: 10, perAccount: 3 } })
  const statuses: number[] = []
  for (let i = 0; i < 15; i++) statuses.push((await login(open, `user-${i}`, 'pw')).status)
  t.same(statuses.slice(0, 10), Array(10).fill(403))
  t.same(statuses.slice(10), Array(5).fill(429), 'after ten failures from this address')
  t.equal(checks.length, 10)
  t.equal((await login(open, 'alice', 'alice-secret')).status, 429, 'the right password of another account too')
})

t.test('login requests per address (rateLimit.login): the 31st within a minute is 429', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const { open } = await start()
  const statuses: number[] = []
  for (let i = 0; i < 31; i++) statuses.push((await login(open, 'alice', 'alice-secret')).status)
  t.same(statuses.slice(0, 30), Array(30).fill(200))
  const r = await login(open, 'alice', 'alice-secret')
  t.equal(r.status, 429)
  t.match(r.headers.get('retry-after'), /^(60|59)$/)
  t.match(await r.json(), { code: 'GATEHOUSE_RATE_LIMITED', details: 'too many login requests from this address' })
  clock.tick(60_000)
  t.equal((await login(open, 'alice', 'alice-secret')).status, 200, 'the next minute')
})

t.test('basic auth of the core (basicAuth.adminPasswd): locked the same way', async (t) => {
  const { open } = await start({ login: { max: 2000 } }, { basicAuth: { adminPasswd: 'right-admin-pw' } })
  const basic = (u: string, p: string): Promise<Response> =>
    open().fetch('/private', { headers: { authorization: `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}` } })
  for (let i = 0; i < 5; i++) t.equal((await basic('admin', `wrong-${i}`)).status, 401)
  const locked = await basic('admin', 'right-admin-pw')
  t.equal(locked.status, 429, 'the right password is refused while locked')
  t.equal(locked.headers.get('retry-after'), '60')
  t.match(await locked.json(), { code: 'GATEHOUSE_RATE_LIMITED' })
  const other = await start({ login: { max: 2000 } }, { basicAuth: { adminPasswd: 'right-admin-pw' } })
  const fresh = await other.open().fetch('/private', { headers: { authorization: `Basic ${Buffer.from('admin:right-admin-pw').toString('base64')}` } })
  t.equal(fresh.status, 200, 'without failures basic auth signs in')
})

t.test('rateLimit: false turns every limit off', async (t) => {
  const { open, checks } = await start(false)
  for (let i = 0; i < 40; i++) t.equal((await login(open, 'admin', `g-${i}`)).status, 403)
  t.equal(checks.length, 40)
  t.equal((await login(open, 'admin', 'admin-secret')).status, 200)
})

t.test('counts live in the state store given to the core', async (t) => {
  const store = new MemoryStateStore()
  const { open } = await start({ login: { max: 2000 } }, { stateStore: store })
  t.equal(store.size, 0)
  await login(open, 'admin', 'wrong')
  t.ok(store.size > 0, 'a failed attempt left counts in it')
  t.ok(store.entriesOf('127.0.0.1') > 0, 'counted for the client that made them')
})

t.test('bad options fail registration naming the option', async (t) => {
  const cases: Array<[unknown, string]> = [
    ['yes', 'rateLimit'],
    [{ bogus: 1 }, 'rateLimit.bogus'],
    [{ login: { max: -1 } }, 'rateLimit.login.max'],
    [{ login: { window: 'soon' } }, 'rateLimit.login.window'],
    [{ failures: { perAccount: 1.5 } }, 'rateLimit.failures.perAccount'],
    [{ failures: { lockout: '1h', maxLockout: '1m' } }, 'rateLimit.failures.maxLockout'],
    [{ sends: { perAddress: 'x' } }, 'rateLimit.sends.perAddress'],
    [{ clientKey: 'ip' }, 'rateLimit.clientKey'],
    [{ failures: { accountKey: 'nfkc' } }, 'rateLimit.failures.accountKey']
  ]
  for (const [rateLimit, option] of cases) {
    const err = await start(rateLimit).then(() => undefined, (e: unknown) => e)
    t.match(err, { code: 'GATEHOUSE_OPTION', option }, JSON.stringify(rateLimit))
  }
  const noCount = { setIfAbsent: async () => true, set: async () => {}, get: async () => undefined, take: async () => undefined, delete: async () => false, close: async () => {} }
  const err = await start(undefined, { stateStore: noCount }).then(() => undefined, (e: unknown) => e)
  t.match(err, { code: 'GATEHOUSE_OPTION', option: 'stateStore' }, 'a store that cannot count, with limits on')
  const off = await start(false, { stateStore: noCount })
  t.equal((await login(off.open, 'alice', 'alice-secret')).status, 200, '… serves with rateLimit: false')
})

/** An app whose checker folds names its own way (`fold`), with `rateLimit` as given; records every check. */
async function startFolding (fold: (name: string) => string, rateLimit: Record<string, unknown>): Promise<Started> {
  const checks: string[] = []
  const { app, client: open } = await injectApp(async (app) => {
    await app.register(authPlugin, {
      secret: SECRET,
      url: 'http://127.0.0.1',
      rateLimit: rateLimit as never,
      providers: [{ kind: 'direct', name: 'local', checker: (u: string, p: string) => { checks.push(u); return USERS[fold(u)] === p } }]
    })
  })
  t.teardown(() => app.close())
  return { app, open, checks }
}

t.test('every spelling a trimming, NFKC, case-folding checker accepts shares one count', async (t) => {
  const lenient = (u: string): string => u.normalize('NFKC').trim().toLowerCase().replace(/\u200b/g, '')
  const { open, checks } = await startFolding(lenient, { failures: { perIp: 0 } })
  const spellings = ['alice ', ' alice', '\uff41\uff4c\uff49\uff43\uff45', 'alice\u200b', 'ALICE', 'Al\u00ADice', 'alice']
  const statuses: number[] = []
  for (const name of spellings) statuses.push((await login(open, name, 'wrong')).status)
  t.same(statuses, [403, 403, 403, 403, 403, 429, 429], 'five guesses in all, whatever the spelling')
  t.equal(checks.length, 5)
  t.equal((await login(open, '\u2003alice\u2003', 'alice-secret')).status, 429, 'the right password too, in yet another spelling')
})

t.test('rateLimit.failures.accountKey: the host\'s own folding decides which names share a count', async (t) => {
  // A checker that ignores dots (as some mail providers do): the lock must agree with it.
  const dotless = (u: string): string => u.replace(/\./g, '').toLowerCase()
  const { open, checks } = await startFolding(dotless, { failures: { perIp: 0, accountKey: dotless } })
  const statuses: number[] = []
  for (const name of ['a.lice', 'al.ice', 'ali.ce', 'alic.e', 'Alice', 'a.l.i.c.e']) statuses.push((await login(open, name, 'wrong')).status)
  t.same(statuses, [403, 403, 403, 403, 403, 429])
  t.equal(checks.length, 5)
  t.equal((await login(open, 'bob', 'wrong')).status, 403, 'another account has its own count')
})
