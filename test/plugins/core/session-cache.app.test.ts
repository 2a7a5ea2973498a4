import t from 'tap'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import FakeTimers from '@sinonjs/fake-timers'
import { client } from '../../helpers/client.js'
import { sessionApp, tokenOf } from '../../helpers/session-app.js'

// The last test sends a million tokens through the token service in a child process (about fifteen CPU seconds):
// on a loaded 2-core machine that took longer than tap's 120 s (issue 38), so this file has its own limit.
t.setTimeout(480_000)

t.test('a cached session stops working the moment its token expires (fake clock)', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const s = await sessionApp({ session: { tokenDuration: '15m' } })
  t.teardown(s.close)
  const c = await s.login('alice')
  const token = tokenOf(c)
  const header = { headers: { 'x-jwt': token } }
  t.equal((await s.client().fetch('/private', header)).status, 200, 'served (and cached)')
  t.ok(s.tokens.cache.get(token), 'the token is in the cache')
  const exp = (await s.app.auth.tokens.parse(token)).exp * 1000
  clock.setSystemTime(exp - 1)
  t.equal((await s.client().fetch('/private', header)).status, 200, 'one millisecond before exp: served')
  clock.setSystemTime(exp)
  const r = await s.client().fetch('/private', header)
  t.equal(r.status, 401, 'at exp: refused, not served from the cache')
  t.equal((await r.json()).code, 'GATEHOUSE_TOKEN_EXPIRED')
  t.equal(s.tokens.cache.get(token), undefined, 'and dropped from it')
})

t.test('the validator runs on every request, cached or not', async (t) => {
  let allow = true
  let calls = 0
  const s = await sessionApp({ validator: () => { calls++; return allow } })
  t.teardown(s.close)
  const c = await s.login('bob')
  t.equal((await s.get(c)).status, 200)
  t.equal((await s.get(c)).status, 200, 'second request from the cache')
  t.equal(calls, 2)
  allow = false
  const r = await s.get(c)
  t.equal(r.status, 401, 'the validator says no: refused although cached')
  t.same(await r.json(), { error: 'unauthorized', details: 'rejected by validator', code: 'GATEHOUSE_UNAUTHORIZED' })
})

t.test('XSRF is checked on every request, cached or not', async (t) => {
  const s = await sessionApp()
  t.teardown(s.close)
  const c = await s.login('carol')
  t.equal((await s.get(c)).status, 200, 'cached now')
  const r = await c.fetch('/private')
  t.equal(r.status, 401, 'no XSRF header: refused')
  t.equal((await r.json()).code, 'GATEHOUSE_XSRF')
  t.equal((await c.fetch('/private', { headers: { 'x-xsrf-token': 'A'.repeat(22) } })).status, 401, 'wrong XSRF header: refused')
})

t.test('a token differing by one byte is not served from the cache', async (t) => {
  const s = await sessionApp()
  t.teardown(s.close)
  const c = await s.login('dave')
  const token = tokenOf(c)
  t.equal((await s.client().fetch('/private', { headers: { 'x-jwt': token } })).status, 200, 'cached')
  const flip = (str: string, i: number): string => str.slice(0, i) + (str[i] === 'A' ? 'B' : 'A') + str.slice(i + 1)
  const dot = token.indexOf('.')
  for (const [label, variant] of [
    ['header byte', flip(token, 3)],
    ['payload byte', flip(token, dot + 5)],
    ['signature byte', flip(token, token.length - 10)],
    ['appended byte', token + 'A'],
    ['truncated', token.slice(0, -1)]
  ] as const) {
    const r = await s.client().fetch('/private', { headers: { 'x-jwt': variant } })
    t.equal(r.status, 401, label)
    t.equal(s.tokens.cache.get(variant), undefined, `${label}: not cached`)
  }
})

t.test('the cache never holds more than its bound, and evicted sessions still work', async (t) => {
  const s = await sessionApp({ session: { cacheSize: 5 } })
  t.teardown(s.close)
  const clients = []
  for (let i = 0; i < 20; i++) clients.push(await s.login(`user${i}`))
  for (let round = 0; round < 2; round++) {
    for (const c of clients) {
      t.equal((await s.get(c)).status, 200)
      t.ok(s.tokens.cache.size <= 5, `size ${s.tokens.cache.size} <= 5`)
    }
  }
  const off = await sessionApp({ session: { cacheSize: 0 } })
  t.teardown(off.close)
  const c = await off.login('nocache')
  t.equal((await off.get(c)).status, 200, 'session.cacheSize 0: no cache, sessions still work')
  t.equal(off.tokens.cache.size, 0)
})

t.test('request.user of a cached session is frozen; updateUser changes one request only', async (t) => {
  const s = await sessionApp({}, (app) => {
    app.get('/mutate', { preHandler: app.auth.authenticate }, async (req) => {
      try { req.user!.setStrAttr('x', 'y'); return { mutated: true } } catch (err) { return { mutated: false, error: (err as Error).name } }
    })
    app.get('/vip', { preHandler: [app.auth.authenticate, app.auth.updateUser((u) => u.setBoolAttr('vip', true))] }, async (req) => ({ vip: req.user!.boolAttr('vip') }))
    app.get('/plain', { preHandler: app.auth.authenticate }, async (req) => ({ vip: req.user!.boolAttr('vip'), attrs: req.user!.attrs ?? null }))
  })
  t.teardown(s.close)
  const c = await s.login('erin')
  t.same(await (await s.get(c, '/mutate')).json(), { mutated: false, error: 'TypeError' }, 'the shared user cannot be changed in place')
  t.same(await (await s.get(c, '/vip')).json(), { vip: true }, 'updateUser changed this request\'s user')
  t.same(await (await s.get(c, '/plain')).json(), { vip: false, attrs: null }, 'and no other request\'s')
})

t.test('one million distinct garbage tokens leave the cache empty and memory bounded', async (t) => {
  const loader = process.execArgv.filter((a) => a.includes('ts-loader'))
  // Without the test runner's coverage (tap's processinfo turns it on in every child process unless told not to):
  // it would double the child's time, for lines the other tests cover.
  const env = { ...process.env, _TAPJS_PROCESSINFO_COVERAGE_: '0' }
  const child = spawnSync(process.execPath, ['--expose-gc', ...loader, fileURLToPath(new URL('./session-cache.garbage-child.ts', import.meta.url))], { encoding: 'utf8', env, timeout: 400_000 })
  t.equal(child.status, 0, child.stderr)
  const out = JSON.parse(child.stdout.trim().split('\n').pop()!) as { accepted: number; otherErrors: number; cacheSize: number; grownMB: number; ms: number }
  t.comment(`1M garbage tokens in ${out.ms} ms, heap ${out.grownMB.toFixed(1)} MB`)
  t.equal(out.accepted, 0, 'none accepted')
  t.equal(out.otherErrors, 0, 'each refused with a 401')
  t.equal(out.cacheSize, 0, 'no failed verification was cached')
  t.ok(out.grownMB < 20, `heap grew by ${out.grownMB.toFixed(1)} MB (< 20 MB)`)
})
