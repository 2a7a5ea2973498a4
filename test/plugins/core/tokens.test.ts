import t from 'tap'
import { coreOf } from '../../../plugins/core/signin/internals.js'
import FakeTimers from '@sinonjs/fake-timers'
import { createSigner } from 'fast-jwt'
import { authPlugin } from '../../../auth.js'
import type { Claims } from '../../../plugins/core/base/types.js'
import { client, listen, type Client } from '../../helpers/client.js'

const SECRET = 'tokens-test-secret-000-0123456789abcdef'
const validatorCalls: string[] = []
const updaterCalls: Claims[] = []
let rejectUser = ''

const { app, base } = await listen(async (app) => {
  await app.register(authPlugin, {
    secret: () => SECRET,
    url: 'http://127.0.0.1',
    // The query source is off by default (bearer.test.ts); on here, where its order and expiry are tested.
    tokenSources: { query: true },
    session: { tokenDuration: '15m', maxAge: '1h' },
    claimsUpdater: (claims) => {
      updaterCalls.push(claims)
      return { ...claims, extra: { plan: 'gold' }, user: { ...claims.user!, attrs: { blocked: claims.user?.name === 'mallory' } } }
    },
    validator: (token, claims) => {
      validatorCalls.push(token)
      return claims.user?.attrs?.blocked !== true && claims.user?.name !== rejectUser
    },
    providers: [{ kind: 'direct', name: 'local', checker: () => true }]
  })
  app.get('/private', { preHandler: app.auth.authenticate }, async (req) => ({ name: req.user!.name }))
  app.post('/private', { preHandler: app.auth.authenticate }, async (req) => ({ name: req.user!.name }))
  app.get('/claims', { preHandler: app.auth.authenticate }, async (req, reply) => {
    const s = await app.auth.tokens.read(req, reply)
    return s!.claims
  })
})
t.teardown(() => app.close())

async function login (name = 'alice', extra = ''): Promise<Client> {
  const c = client(base)
  const r = await c.fetch(`/auth/local/login${extra}`, { method: 'POST', form: { user: name, passwd: 'x' } })
  if (r.status !== 200) throw new Error(`login failed ${r.status}`)
  return c
}
const xsrf = (c: Client): Record<string, string> => ({ 'x-xsrf-token': c.jar.get('XSRF-TOKEN')! })

t.test('cookie session needs the XSRF header equal to the cookie and bound to the token', async (t) => {
  const c = await login()
  let r = await c.fetch('/private')
  t.equal(r.status, 401, 'cookie without XSRF header rejected')
  t.same(await r.json(), { error: 'unauthorized', details: 'missing XSRF header or cookie', code: 'GATEHOUSE_XSRF' })
  r = await c.fetch('/private', { headers: { 'x-xsrf-token': 'forged' } })
  t.equal(r.status, 401, 'wrong XSRF value rejected')
  r = await c.fetch('/private', { headers: xsrf(c) })
  t.equal(r.status, 200, 'with header accepted')
  r = await c.fetch('/private', { method: 'POST', headers: xsrf(c) })
  t.equal(r.status, 200)

  // A planted XSRF cookie/header pair that agree with each other but not with the session is refused.
  const other = await login('bob')
  r = await c.fetch('/private', { headers: { cookie: `JWT=${c.jar.get('JWT')}; XSRF-TOKEN=${other.jar.get('XSRF-TOKEN')}`, 'x-xsrf-token': other.jar.get('XSRF-TOKEN')! } })
  t.equal(r.status, 401, 'XSRF pair not bound to this token is refused')
})

t.test('X-JWT header and ?token= are accepted without XSRF, in order query > header > cookie', async (t) => {
  const alice = await login('alice')
  const bob = await login('bob')
  const token = alice.jar.get('JWT')!
  let r = await client(base).fetch('/private', { headers: { 'x-jwt': token } })
  t.same(await r.json(), { name: 'alice' })
  r = await client(base).fetch(`/private?token=${token}`)
  t.same(await r.json(), { name: 'alice' })
  r = await client(base).fetch(`/private?token=${token}`, { headers: { 'x-jwt': bob.jar.get('JWT')! } })
  t.same(await r.json(), { name: 'alice' }, 'query wins over header')
  r = await bob.fetch('/private', { headers: { 'x-jwt': token } })
  t.same(await r.json(), { name: 'alice' }, 'header wins over cookie')
})

t.test('claims updater runs at creation; extra data survives the round trip; validator on every request', async (t) => {
  updaterCalls.length = 0
  const c = await login('carol')
  t.equal(updaterCalls.length, 1, 'updater ran once at creation')
  const before = validatorCalls.length
  const r = await c.fetch('/claims', { headers: xsrf(c) })
  const claims = await r.json()
  t.same(claims.extra, { plan: 'gold' })
  t.same(claims.aud, [''], 'exactly one audience, the empty one without a site')
  t.equal(claims.iss, 'fastify-gatehouse')
  t.type(claims.jti, 'string')
  t.equal(claims.exp - claims.iat, 15 * 60)
  t.ok(validatorCalls.length > before, 'validator ran')
  t.equal(updaterCalls.length, 1, 'updater does not run on plain requests')
})

t.test('validator false rejects (black list by claims updater + validator)', async (t) => {
  const m = await login('mallory')
  const r = await m.fetch('/private', { headers: xsrf(m) })
  t.equal(r.status, 401)
  t.same(await r.json(), { error: 'unauthorized', details: 'rejected by validator', code: 'GATEHOUSE_UNAUTHORIZED' })
  rejectUser = 'dave'
  const d = await login('dave')
  t.equal((await d.fetch('/private', { headers: xsrf(d) })).status, 401)
  rejectUser = ''
  t.equal((await d.fetch('/private', { headers: xsrf(d) })).status, 200)
})

t.test('only HS256: alg none, HS512 and wrong secrets are rejected', async (t) => {
  const now = Math.floor(Date.now() / 1000)
  const payload = { aud: [''], iss: 'fastify-gatehouse', iat: now, nbf: now, exp: now + 600, jti: 'x', auth_time: now, purpose: 'session', user: { name: 'eve', id: 'x_1' } }
  const none = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url') + '.' + Buffer.from(JSON.stringify(payload)).toString('base64url') + '.'
  const hs512 = createSigner({ key: SECRET, algorithm: 'HS512' })(payload)
  const wrong = createSigner({ key: 'not-the-secret', algorithm: 'HS256' })(payload)
  const right = createSigner({ key: SECRET, algorithm: 'HS256' })(payload)
  for (const [label, tok] of [['alg none', none], ['HS512', hs512], ['wrong secret', wrong], ['garbage', 'a.b.c'], ['not a jwt', 'hello']] as const) {
    const r = await client(base).fetch('/private', { headers: { 'x-jwt': tok } })
    t.equal(r.status, 401, `${label} → 401`)
    t.type((await r.json()).error, 'string')
  }
  t.equal((await client(base).fetch('/private', { headers: { 'x-jwt': right } })).status, 200, 'control: correct HS256 token accepted')
})

t.test('session, handshake and confirmation tokens cannot stand in for one another', async (t) => {
  const handshake = await coreOf(app).tokens.signPurpose('handshake', { user: { name: 'eve', id: 'x' } }, 60_000)
  const confirm = await coreOf(app).tokens.signPurpose('confirm', { user: { name: 'eve', id: 'x' } }, 60_000)
  t.equal((await client(base).fetch('/private', { headers: { 'x-jwt': handshake } })).status, 401, 'handshake token is not a session')
  t.equal((await client(base).fetch('/private', { headers: { 'x-jwt': confirm } })).status, 401, 'confirmation token is not a session')
  const c = await login()
  const session = c.jar.get('JWT')!
  await t.rejects(coreOf(app).tokens.verifyPurpose('confirm', session), { statusCode: 401 }, 'session token is not a confirmation')
  await t.rejects(coreOf(app).tokens.verifyPurpose('confirm', handshake), { statusCode: 401 }, 'handshake is not a confirmation')
  t.equal((await coreOf(app).tokens.verifyPurpose('confirm', confirm)).purpose, 'confirm', 'control: confirmation verifies as one')
  // Same payload signed with the raw secret but claiming purpose confirm: the derived key does not match.
  const now = Math.floor(Date.now() / 1000)
  const forged = createSigner({ key: SECRET, algorithm: 'HS256' })({ aud: [], iss: 'fastify-gatehouse', iat: now, nbf: now, exp: now + 60, jti: 'j', purpose: 'confirm' })
  await t.rejects(coreOf(app).tokens.verifyPurpose('confirm', forged), { statusCode: 401 }, 'purpose claim alone is not enough')
})

t.test('a future nbf is rejected as 401, not 500', async (t) => {
  const now = Math.floor(Date.now() / 1000)
  const tok = createSigner({ key: SECRET, algorithm: 'HS256' })({ aud: [''], iss: 'fastify-gatehouse', iat: now, nbf: now + 3600, exp: now + 7200, jti: 'n', auth_time: now, purpose: 'session', user: { name: 'f', id: 'f' } })
  const r = await client(base).fetch('/private', { headers: { 'x-jwt': tok } })
  t.equal(r.status, 401)
  t.same(await r.json(), { error: 'unauthorized', details: 'token not valid yet', code: 'GATEHOUSE_TOKEN_INVALID' })
})

t.test('refresh: new cookie after session.tokenDuration, same session; none after session.maxAge', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const c = await login('erin')
  const first = c.jar.get('JWT')!
  const jti = c.jar.get('XSRF-TOKEN')!
  updaterCalls.length = 0

  clock.tick(16 * 60_000) // past tokenDuration (15m), within maxAge (1h)
  let r = await c.fetch('/private', { headers: xsrf(c) })
  t.equal(r.status, 200, 'expired token refreshed')
  const second = c.jar.get('JWT')!
  t.not(second, first, 'a new JWT cookie was set')
  t.equal(c.jar.get('XSRF-TOKEN'), jti, 'same session (jti) kept')
  t.equal(updaterCalls.length, 1, 'claims updater ran on refresh')

  r = await c.fetch('/auth/status', { headers: xsrf(c) })
  t.same(await r.json(), { status: 'logged in', user: 'erin' })

  clock.tick(50 * 60_000) // 66 min after login: past maxAge
  const expired = c.jar.get('JWT')!
  for (const path of ['/private', '/auth/user']) {
    r = await client(base).fetch(path, { headers: { cookie: `JWT=${expired}; XSRF-TOKEN=${jti}`, 'x-xsrf-token': jti } })
    t.equal(r.status, 401, `${path}: not refreshed past session.maxAge`)
    t.same(await r.json(), { error: 'unauthorized', details: 'session expired', code: 'GATEHOUSE_SESSION_EXPIRED' })
  }
  r = await client(base).fetch('/auth/status', { headers: { cookie: `JWT=${expired}; XSRF-TOKEN=${jti}`, 'x-xsrf-token': jti } })
  t.same(await r.json(), { status: 'not logged in' }, '/status says not logged in')
})

t.test('an expired cookie session without its XSRF header is refused before any refresh', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const c = await login('ivy')
  const token = c.jar.get('JWT')!
  const jti = c.jar.get('XSRF-TOKEN')!
  updaterCalls.length = 0
  clock.tick(16 * 60_000) // past tokenDuration: a request with its XSRF header would refresh
  for (const [label, headers] of [['no header', {}], ['wrong header', { 'x-xsrf-token': 'forged' }]] as const) {
    const r = await client(base).fetch('/private', { headers: { cookie: `JWT=${token}; XSRF-TOKEN=${jti}`, ...headers } })
    t.equal(r.status, 401, label)
    t.equal((await r.json() as { code: string }).code, 'GATEHOUSE_XSRF', label)
    t.same(r.headers.getSetCookie(), [], `${label}: no refreshed cookie handed out`)
  }
  t.equal(updaterCalls.length, 0, 'no refresh ran (the claims updater was not called)')
})

t.test('concurrent requests with one expired token refresh it once', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const c = await login('frank')
  updaterCalls.length = 0
  clock.tick(20 * 60_000)
  const res = await Promise.all(Array.from({ length: 8 }, () => c.fetch('/private', { headers: xsrf(c) })))
  t.same(res.map((r) => r.status), Array(8).fill(200))
  t.equal(updaterCalls.length, 1, 'claims updater ran once for 8 concurrent refreshes')
  const cookies = new Set(res.map((r) => r.headers.getSetCookie().find((l) => l.startsWith('JWT='))))
  t.equal(cookies.size, 1, 'every response carries the same refreshed token')
})

t.test('a cached refresh that has itself expired is not handed out again', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const c = await login('hank')
  const original = c.jar.get('JWT')!
  const jti = c.jar.get('XSRF-TOKEN')!
  clock.tick(16 * 60_000)
  t.equal((await c.fetch('/private', { headers: xsrf(c) })).status, 200, 'first refresh (cached under the original token)')
  clock.tick(20 * 60_000) // the refreshed token has expired as well; still within maxAge (1h)
  const r = await client(base).fetch('/private', { headers: { cookie: `JWT=${original}; XSRF-TOKEN=${jti}`, 'x-xsrf-token': jti } })
  t.equal(r.status, 200)
  const line = r.headers.getSetCookie().find((l) => l.startsWith('JWT='))!
  const claims = JSON.parse(Buffer.from(line.slice(4).split(';')[0]!.split('.')[1]!, 'base64url').toString())
  t.ok(claims.exp > Math.floor(Date.now() / 1000), 'the token handed out is not already expired')
})

t.test('expired X-JWT and ?token= tokens are 401 and not refreshed: only cookie sessions refresh', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const c = await login('gina')
  const token = c.jar.get('JWT')!
  t.equal((await client(base).fetch('/private', { headers: { 'x-jwt': token } })).status, 200, 'control: valid header token')
  t.equal((await client(base).fetch(`/private?token=${token}`)).status, 200, 'control: valid query token')
  clock.tick(20 * 60_000) // past tokenDuration, within maxAge: a cookie would refresh
  for (const [label, init, path] of [['header', { headers: { 'x-jwt': token } }, '/private'], ['query', {}, `/private?token=${token}`]] as const) {
    const r = await client(base).fetch(path, init)
    t.equal(r.status, 401, `${label}: expired token refused`)
    t.same(await r.json(), { error: 'unauthorized', details: 'token expired', code: 'GATEHOUSE_TOKEN_EXPIRED' })
    t.equal(r.headers.get('x-jwt'), null, `${label}: no fresh token handed out`)
    t.same(r.headers.getSetCookie(), [], `${label}: no cookie set`)
  }
  t.equal((await c.fetch('/private', { headers: xsrf(c) })).status, 200, 'the same session as a cookie refreshes')
})
