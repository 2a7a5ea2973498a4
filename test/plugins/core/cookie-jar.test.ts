/**
 * The package's own cookies (plugins/core/base/cookie-jar.ts): the session and XSRF cookies read straight from the
 * header give the same session as @fastify/cookie's parsed cookies for odd headers, the package's Set-Cookie
 * lines and a host's own `setCookie` lines both reach the client, a host hook that changes `request.cookies` is
 * what the package reads, and a revoked or expired token is not served by the cached path.
 */
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import cookie from '@fastify/cookie'
import FakeTimers from '@sinonjs/fake-timers'
import { parseCookie } from 'cookie'
import { authPlugin } from '../../../auth.js'
import { readCookie } from '../../../plugins/core/base/cookie-jar.js'

const SECRET = 'cookie-jar-tests-secret-0123456789abcdef-01'
const USER = { name: 'alice', id: 'local_0123456789abcdef0123456789abcdef01234567' }

/** An app with the root plugin; `hostCookie` registers @fastify/cookie first, as a host may. */
async function app (hostCookie: boolean): Promise<FastifyInstance> {
  const a = Fastify()
  if (hostCookie) await a.register(cookie)
  await a.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1', avatar: false })
  a.get('/private', { preHandler: a.auth.authenticate }, async (req) => ({ name: req.user!.name }))
  if (hostCookie) {
    a.get('/set', { preHandler: a.auth.authenticate }, async (req, reply) => {
      reply.setCookie('fresh', 'v1', { path: '/' })
      return { seen: req.cookies.seen ?? null }
    })
  }
  await a.ready()
  return a
}

const HEADERS = [
  'a=1; b=2',
  'a=1;b=2;a=3',
  '  a = 1 ;\tb=\t2\t; c',
  'a="quoted value"; b="x"',
  'a=%41%42; b=%E0%A4%A; c=%',
  'noequals; a=1; =empty; b==2',
  'c; d; a=1',
  'a',
  '',
  'x=1; a=;b= ; a=2',
  'ab=1; a=2; b=3',
  '__proto__=1; constructor=2; a=3'
]

t.test('readCookie gives what the parser gives, name by name', async (t) => {
  for (const header of HEADERS) {
    const parsed = parseCookie(header)
    for (const name of ['a', 'b', 'c', 'd', 'ab', 'x', '__proto__', 'constructor', 'missing']) {
      t.equal(readCookie(header, name), parsed[name], `${JSON.stringify(header)} ${name}`)
    }
  }
  t.equal(readCookie(undefined, 'a'), undefined)
})

t.test('readCookie agrees with the parser on random headers', async (t) => {
  const alphabet = ['a', 'b', '=', ';', ' ', '\t', '"', '%', '4', '1', 'x']
  let seed = 7
  const next = (n: number): number => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n }
  let mismatches = 0
  for (let i = 0; i < 5000; i++) {
    let header = ''
    for (let j = next(24); j > 0; j--) header += alphabet[next(alphabet.length)]
    const parsed = parseCookie(header)
    for (const name of ['a', 'b', 'ab', 'x']) if (readCookie(header, name) !== parsed[name]) mismatches++
  }
  t.equal(mismatches, 0)
})

/** A session created by the app's own service, with the cookie header a browser would send. */
async function session (a: FastifyInstance): Promise<{ token: string; jti: string }> {
  const { token, claims } = await a.auth.tokens.create({ user: USER })
  return { token, jti: claims.jti }
}

t.test('odd cookie headers give the same session as parsed cookies', async (t) => {
  const lazy = await app(false)
  const host = await app(true)
  t.teardown(async () => { await lazy.close(); await host.close() })
  const { token, jti } = await session(lazy)
  const other = await session(lazy)
  const cases: Array<[string, string]> = [
    ['plain', `JWT=${token}; XSRF-TOKEN=${jti}`],
    ['odd spacing', ` JWT =\t${token} ;XSRF-TOKEN= ${jti}\t`],
    ['duplicates: the first wins', `JWT=${token}; XSRF-TOKEN=${jti}; JWT=${other.token}; XSRF-TOKEN=${other.jti}`],
    ['duplicates the other way', `JWT=${other.token}; XSRF-TOKEN=${jti}; JWT=${token}`],
    ['URL-encoded', `JWT=${token.replace(/\./g, '%2E')}; XSRF-TOKEN=${encodeURIComponent(jti).replace(/-/g, '%2D')}`],
    ['quoted', `JWT="${token}"; XSRF-TOKEN=${jti}`],
    ['no session cookie', `XSRF-TOKEN=${jti}; JWTX=${token}`],
    ['a bare word before', `junk; JWT=${token}; XSRF-TOKEN=${jti}`]
  ]
  for (const [label, cookieHeader] of cases) {
    // Twice each: the first request verifies the token, the second is answered from the verified-session cache.
    for (const round of ['first', 'cached']) {
      const headers = { cookie: cookieHeader, 'x-xsrf-token': jti }
      const a = await lazy.inject({ url: '/private', headers })
      const b = await host.inject({ url: '/private', headers })
      t.equal(a.statusCode, b.statusCode, `${label} (${round}): same status`)
      t.same(a.json(), b.json(), `${label} (${round}): same answer`)
    }
  }
  const ok = await lazy.inject({ url: '/private', headers: { cookie: cases[0]![1], 'x-xsrf-token': jti } })
  t.same(ok.json(), { name: 'alice' }, 'the plain header signs alice in')
  const dup = await lazy.inject({ url: '/private', headers: { cookie: cases[3]![1], 'x-xsrf-token': jti } })
  t.equal(dup.statusCode, 401, 'the first JWT is the one read: its XSRF pair does not match')
})

t.test('a host hook that changes request.cookies (the host\'s @fastify/cookie) is what authenticate reads', async (t) => {
  const a = Fastify()
  await a.register(cookie)
  await a.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1', avatar: false })
  a.addHook('onRequest', async (req) => { req.cookies.JWT = 'replaced' })
  a.get('/private', { preHandler: a.auth.authenticate }, async () => ({ ok: true }))
  await a.ready()
  t.teardown(() => a.close())
  const { token, jti } = await session(a)
  const r = await a.inject({ url: '/private', headers: { cookie: `JWT=${token}; XSRF-TOKEN=${jti}`, 'x-xsrf-token': jti } })
  t.equal(r.statusCode, 401, 'the replaced cookie is not a session')
})

t.test('a revoked or expired token is not served from the cached path', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const a = await app(false)
  t.teardown(() => a.close())
  const first = await session(a)
  const second = await session(a)
  const get = (s: { token: string; jti: string }) => a.inject({ url: '/private', headers: { cookie: `JWT=${s.token}; XSRF-TOKEN=${s.jti}`, 'x-xsrf-token': s.jti } })
  t.equal((await get(first)).statusCode, 200)
  t.equal((await get(first)).statusCode, 200, 'served from the cache')
  await a.auth.revokeSession(first.jti)
  const revoked = await get(first)
  t.equal(revoked.statusCode, 401, 'revoked: refused')
  t.equal((await get(second)).statusCode, 200)
  clock.tick(16 * 60_000)
  const refreshed = await get(second)
  t.equal(refreshed.statusCode, 200, 'past the token\'s exp, within the session\'s age: answered')
  t.match(refreshed.headers['set-cookie'], /JWT=/, 'by a refreshed token, not from the cache')
  clock.tick(32 * 86_400_000)
  const expired = await get(second)
  t.equal(expired.statusCode, 401, 'past the session\'s age: refused')
})

t.test('a refreshed session\'s Set-Cookie lines and the host\'s setCookie line all reach the client', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const a = await app(true)
  t.teardown(() => a.close())
  const { token, jti } = await session(a)
  clock.tick(16 * 60_000)
  const r = await a.inject({ url: '/set', headers: { cookie: `JWT=${token}; XSRF-TOKEN=${jti}; seen=yes`, 'x-xsrf-token': jti } })
  t.same(r.json(), { seen: 'yes' })
  const lines = r.headers['set-cookie'] as string[]
  t.same(lines.map((l) => l.split('=')[0]), ['JWT', 'XSRF-TOKEN', 'fresh'], 'the refresh\'s two cookies, then the host\'s')
  t.match(lines[0], /^JWT=[\w-]+\.[\w-]+\.[\w-]+; Max-Age=\d+; Path=\/; HttpOnly; SameSite=Lax$/)
  t.match(lines[2], /^fresh=v1; Path=\/; SameSite=Lax$/)
})

t.test('a second session set in the same reply replaces the first one\'s lines', async (t) => {
  const a = Fastify()
  await a.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1', avatar: false })
  a.get('/twice', async (_req, reply) => {
    await a.auth.tokens.set(reply, { user: USER })
    const second = await a.auth.tokens.set(reply, { user: { ...USER, name: 'bob' } })
    return { jti: second.claims.jti }
  })
  await a.ready()
  t.teardown(() => a.close())
  const r = await a.inject({ url: '/twice' })
  const lines = r.headers['set-cookie'] as string[]
  t.same(lines.map((l) => l.split('=')[0]), ['JWT', 'XSRF-TOKEN'], 'one line per cookie')
  t.match(lines[1], new RegExp(`^XSRF-TOKEN=${r.json<{ jti: string }>().jti};`), 'the second session\'s')
})
