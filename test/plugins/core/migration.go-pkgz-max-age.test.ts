/**
 * `migration.goPkgz.maxAge` (issue 49, item 4): go-pkgz/auth refreshes an expired cookie token while its cookie
 * lives (`CookieDuration`), so a cut-over without both services running side by side keeps users signed in only if
 * the move takes such a token too. With `maxAge`, a Go cookie token past its `exp` is exchanged while its `iat`
 * (else `nbf`: when go-pkgz last set the cookie) is within `maxAge`, under every other check (signature, issuer,
 * audience, XSRF, revocation) and once: the once-mark lives as long as the token could be taken, not until its
 * `exp`. A header token must still be unexpired (go-pkgz refuses an expired one outside its cookie). go-pkgz's own
 * test vectors (tokens.json) are among the cases. The clock is a fake one.
 */
import t from 'tap'
import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import FakeTimers from '@sinonjs/fake-timers'
import { authPlugin, type AuditEvent, type AuthOptions } from '../../../index.js'

const GO = (JSON.parse(readFileSync(new URL('../../fixtures/vectors/go-pkgz/tokens.json', import.meta.url), 'utf8')) as { tokens: Record<string, string> }).tokens
const GO_SECRET = 'xyz 12345'
const SECRET = 'a-secret-of-this-package-32-bytes-or-more'
const clock = FakeTimers.install({ now: Date.UTC(2026, 2, 1, 12, 0, 0), toFake: ['Date'] })
t.teardown(() => clock.uninstall())
const now = (): number => Math.floor(Date.now() / 1000)
const DAY = 86_400

/** A token signed as go-pkgz signs it (HS256, no kid). */
function goToken (payload: Record<string, unknown>, secret = GO_SECRET): string {
  const input = `${Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`
}
/** A Go session token made `setAgo` seconds ago with go-pkgz's default lifetime (15 minutes). */
const goClaims = (setAgo: number, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ iss: 'remark42', aud: 'test_sys', iat: now() - setAgo, exp: now() - setAgo + 900, jti: `jti-${setAgo}-${Math.random()}`, user: { name: 'name1', id: 'id1' }, ...extra })

interface App { app: FastifyInstance; events: AuditEvent[] }
async function start (t: Tap.Test, goPkgz: Record<string, unknown> = { secret: GO_SECRET, maxAge: '31d' }, root: Partial<AuthOptions> = {}): Promise<App> {
  const events: AuditEvent[] = []
  const app = Fastify()
  await app.register(authPlugin, { secret: SECRET, url: 'http://127.0.0.1', issuer: 'remark42', login: { rateLimit: false }, migration: { goPkgz }, onEvent: (e) => { events.push(e) }, ...root } as AuthOptions)
  app.get('/me', { preHandler: app.auth.authenticate }, async (request) => ({ user: request.user }))
  await app.ready()
  t.teardown(async () => { await app.close() })
  return { app, events }
}

/** The Go cookie with go-pkgz's XSRF rule (the XSRF cookie and header are the token's jti). */
async function withCookie (a: App, token: string): Promise<LightMyRequestResponse> {
  const jti = String(JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).jti)
  return await a.app.inject({ url: '/me', headers: { cookie: `JWT=${token}; XSRF-TOKEN=${encodeURIComponent(jti)}`, 'x-xsrf-token': jti } })
}
const newJwt = (r: LightMyRequestResponse): string | undefined => [r.headers['set-cookie'] ?? []].flat().map(String).find((c) => c.startsWith('JWT=') && !c.startsWith('JWT=;'))?.split(';')[0]!.slice(4)

function refused (t: Tap.Test, r: LightMyRequestResponse, a: App, what: string, details?: RegExp): void {
  t.equal(r.statusCode, 401, `${what}: 401 (${r.body})`)
  if (details !== undefined) t.match(r.json().details, details, `${what}: ${String(details)}`)
  t.equal(newJwt(r), undefined, `${what}: no session issued`)
  t.notOk(a.events.some((e) => e.type === 'session.migrated'), `${what}: nothing migrated`)
}

t.test('within maxAge: an expired Go cookie token moves, once; the new session keeps the Go sign-in time', async (t) => {
  const a = await start(t)
  const token = goToken(goClaims(3600))
  const r = await withCookie(a, token)
  t.equal(r.statusCode, 200, r.body)
  t.match(r.json().user, { name: 'name1', id: 'id1' })
  const claims = await a.app.auth.tokens.parse(newJwt(r)!)
  t.equal(Math.floor(claims.auth_time!), now() - 3600, 'auth_time is the Go token\'s iat: session.maxAge and revokeUser count from it')
  t.match(a.events.filter((e) => e.type === 'session.migrated'), [{ source: 'cookie', userId: 'id1' }])

  clock.tick(120_000)
  const again = await withCookie(a, token)
  t.equal(again.statusCode, 401, 'past its exp and the race window, a copy of the token is still refused: the mark lives as long as the token could be taken')
  t.match(again.json().details, /exchanged already/)
})

t.test('outside maxAge, or from a header, or without a date of its setting: refused as expired', async (t) => {
  const a = await start(t)
  refused(t, await withCookie(a, goToken(goClaims(32 * DAY))), a, 'set 32 days ago, maxAge 31 days', /token expired/)
  refused(t, await a.app.inject({ url: '/me', headers: { 'x-jwt': goToken(goClaims(3600)) } }), a, 'an expired header token (go-pkgz refuses it too)', /token expired/)
  refused(t, await withCookie(a, goToken(goClaims(3600, { iat: undefined }))), a, 'no iat and no nbf', /token expired/)
  const off = await start(t, { secret: GO_SECRET })
  refused(t, await withCookie(off, goToken(goClaims(3600))), off, 'maxAge off (the default)', /token expired/)
})

t.test('nbf stands for the setting time when there is no iat (as in go-pkgz\'s own vectors)', async (t) => {
  const a = await start(t)
  const r = await withCookie(a, goToken(goClaims(3600, { iat: undefined, nbf: now() - 3600 })))
  t.equal(r.statusCode, 200, r.body)
})

t.test('every other check still holds for an expired token: signature, issuer, audience, XSRF, revocation', async (t) => {
  const a = await start(t, undefined, { audiences: ['test_sys'] })
  refused(t, await withCookie(a, goToken(goClaims(3600), 'another secret')), a, 'another secret')
  refused(t, await withCookie(a, goToken(goClaims(3600, { iss: 'someone-else' }))), a, 'another issuer')
  refused(t, await withCookie(a, goToken(goClaims(3600, { aud: 'other' }))), a, 'an audience outside audiences')
  const token = goToken(goClaims(3600))
  refused(t, await a.app.inject({ url: '/me', headers: { cookie: `JWT=${token}` } }), a, 'without the XSRF header')
  await a.app.auth.sessions.revokeUser('id1')
  refused(t, await withCookie(a, goToken(goClaims(3600))), a, 'a user revoked after the Go sign-in')
})

t.test('go-pkgz\'s own vectors under maxAge', async (t) => {
  const a = await start(t, { secret: GO_SECRET, maxAge: '400d' })
  // testJwtValidNoHandshake: nbf 2018-05-21, exp 2058-05-20. A day past its exp, its cookie would be long gone.
  clock.setSystemTime((2789191822 + DAY) * 1000)
  refused(t, await withCookie(a, GO.testJwtValidNoHandshake!), a, 'testJwtValidNoHandshake a day past its exp, set 40 years before', /token expired/)
  refused(t, await withCookie(a, GO.testJwtValidSess!), a, 'testJwtValidSess likewise', /token expired/)
  // testJwtExpired: exp an hour after its nbf; an hour later it is within maxAge, and refused for having no audience.
  clock.setSystemTime((1526887822 + 3600) * 1000)
  refused(t, await withCookie(a, GO.testJwtExpired!), a, 'testJwtExpired within maxAge: no audience, refused all the same', /exactly one audience/)
  refused(t, await withCookie(a, GO.testJwtBadSign!), a, 'testJwtBadSign')
  // Back within the vectors' lifetime: the valid one moves, as without maxAge.
  clock.setSystemTime((1526884222 + DAY) * 1000)
  t.equal((await withCookie(a, GO.testJwtValidNoHandshake!)).statusCode, 200, 'testJwtValidNoHandshake before its exp')
})

t.test('options: maxAge is a duration of a cookie\'s lifetime', async (t) => {
  for (const maxAge of ['30s', '401d', 'a month', -5]) {
    const app = Fastify()
    await t.rejects(app.register(authPlugin, { secret: SECRET, url: 'http://127.0.0.1', migration: { goPkgz: { secret: GO_SECRET, maxAge } } } as AuthOptions).ready(), { code: 'GATEHOUSE_OPTION', option: 'migration.goPkgz.maxAge' }, String(maxAge))
    await app.close()
  }
})
