/**
 * `migration.goPkgz`: session tokens exactly as go-pkgz/auth v2 issues them (its own test vectors, signed with
 * "xyz 12345", issuer remark42, audience test_sys) are accepted once, from the token header or from the cookie
 * with go-pkgz's XSRF rule, and answered with a new session of this package (a `kid`, a session on its own, the
 * same user, audience and session-only flag); every bad one is refused 401 with nothing issued; without the
 * option they are refused as before.
 */
import t from 'tap'
import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import FakeTimers from '@sinonjs/fake-timers'
import { authPlugin, type AuditEvent, type AuthOptions } from '../../../index.js'

const vectors = JSON.parse(readFileSync(new URL('../../fixtures/vectors/go-pkgz/tokens.json', import.meta.url), 'utf8')) as { tokens: Record<string, string> }
const GO = vectors.tokens
const GO_SECRET = 'xyz 12345'
const SECRET = 'a-secret-of-this-package-32-bytes-or-more'

/** A token signed as go-pkgz signs (HS256, no kid), with any header and claims: for the bad inputs the vectors lack. */
function goToken (payload: Record<string, unknown>, header: Record<string, unknown> = { alg: 'HS256', typ: 'JWT' }, secret = GO_SECRET): string {
  const input = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`
}
const now = (): number => Math.floor(Date.now() / 1000)
const goClaims = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  iss: 'remark42', aud: 'test_sys', exp: now() + 900, iat: now() - 10, jti: 'go-jti-1', user: { name: 'name1', id: 'id1' }, ...extra
})

const decode = (token: string): { header: Record<string, unknown>; payload: Record<string, unknown> } => {
  const [h, p] = token.split('.')
  return { header: JSON.parse(Buffer.from(h!, 'base64url').toString()), payload: JSON.parse(Buffer.from(p!, 'base64url').toString()) }
}
const setCookies = (res: LightMyRequestResponse): string[] => [res.headers['set-cookie'] ?? []].flat().map(String)
const cookieValue = (res: LightMyRequestResponse, name: string): string | undefined =>
  setCookies(res).find((l) => l.startsWith(`${name}=`))?.split(';')[0]!.slice(name.length + 1)

interface App { app: FastifyInstance; events: AuditEvent[] }
async function start (t: Tap.Test, opts: Partial<AuthOptions> = {}): Promise<App> {
  const events: AuditEvent[] = []
  const app = Fastify()
  await app.register(authPlugin, {
    secret: SECRET, url: 'http://127.0.0.1', issuer: 'remark42', rateLimit: false,
    migration: { goPkgz: { secret: GO_SECRET } },
    onEvent: (e) => { events.push(e) },
    ...opts
  } as AuthOptions)
  app.get('/me', { preHandler: app.auth.authenticate }, async (request) => ({ user: request.user, aud: (request.user as { aud?: string } | null)?.aud }))
  app.post('/me', { preHandler: app.auth.authenticate }, async (request) => ({ user: request.user }))
  await app.ready()
  t.teardown(async () => { await app.close() })
  return { app, events }
}

/** A refusal changes nothing: 401 JSON, no cookie, no token header, no migration told. */
function refusedCleanly (t: Tap.Test, res: LightMyRequestResponse, a: App, what: string): void {
  t.equal(res.statusCode, 401, `${what}: 401 (${res.body})`)
  t.match(res.json(), { error: 'unauthorized', code: /^GATEHOUSE_/ }, `${what}: a JSON error with a code`)
  t.same(setCookies(res), [], `${what}: no cookie set`)
  t.equal(res.headers['x-jwt'], undefined, `${what}: no token issued`)
  t.notOk(a.events.some((e) => e.type === 'session.migrated'), `${what}: no migration`)
}

t.test('go-pkgz test vector from X-JWT: accepted once, answered with a new session of ours (kid, its own jti, same user and audience)', async (t) => {
  const a = await start(t)
  const res = await a.app.inject({ url: '/me', headers: { 'x-jwt': GO.testJwtValidNoHandshake! } })
  t.equal(res.statusCode, 200, res.body)
  t.match(res.json().user, { name: 'name1', id: 'id1', picture: 'http://example.com/pic.png', ip: '127.0.0.1', email: 'me@example.com', attrs: { boola: true, stra: 'stra-val' } })
  const fresh = String(res.headers['x-jwt'])
  const { header, payload } = decode(fresh)
  t.equal(header.alg, 'HS256')
  t.equal(typeof header.kid, 'string', 'the new token names its key')
  t.same(payload.aud, ['test_sys'], 'same audience')
  t.equal(payload.purpose, 'session')
  t.not(payload.jti, 'random id', 'a session of its own')
  t.notOk(payload.sess, 'not session-only, as the Go token')
  t.same(setCookies(res), [], 'a header token is answered in the header, not with cookies')
  t.match(a.events.filter((e) => e.type === 'session.migrated'), [{ outcome: 'success', reason: 'go_pkgz', userId: 'id1', aud: 'test_sys', sessionOnly: false, source: 'header' }])

  const again = await a.app.inject({ url: '/me', headers: { 'x-jwt': fresh } })
  t.equal(again.statusCode, 200, 'the new token is a session on its own')
  t.equal(again.headers['x-jwt'], undefined, 'and is not exchanged again')
  t.equal((await a.app.auth.tokens.parse(fresh)).user?.id, 'id1')

  const raced = await a.app.inject({ url: '/me', headers: { 'x-jwt': GO.testJwtValidNoHandshake! } })
  t.equal(raced.headers['x-jwt'], fresh, 'a request that raced with the exchange gets the same session, not a second one')
  const clock = FakeTimers.install({ now: Date.now(), toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  clock.tick(31_000)
  const replay = await a.app.inject({ url: '/me', headers: { 'x-jwt': GO.testJwtValidNoHandshake! } })
  t.equal(replay.statusCode, 401, 'afterwards the Go token is refused: taken once')
  t.match(replay.json(), { details: /exchanged already/ })
  t.equal(a.events.filter((e) => e.type === 'session.migrated').length, 1, 'one migration')
})

t.test('go-pkgz cookie session with its XSRF rule; session-only kept; without the XSRF header refused', async (t) => {
  const a = await start(t)
  const cookie = `JWT=${GO.testJwtValidSess!}; XSRF-TOKEN=random%20id`
  const noHeader = await a.app.inject({ method: 'POST', url: '/me', headers: { cookie } })
  refusedCleanly(t, noHeader, a, 'no XSRF header')
  t.match(noHeader.json(), { code: 'GATEHOUSE_XSRF' })
  const wrong = await a.app.inject({ method: 'POST', url: '/me', headers: { cookie, 'x-xsrf-token': 'other id' } })
  refusedCleanly(t, wrong, a, 'XSRF header not the jti')

  const res = await a.app.inject({ method: 'POST', url: '/me', headers: { cookie, 'x-xsrf-token': 'random id' } })
  t.equal(res.statusCode, 200, res.body)
  const jwt = cookieValue(res, 'JWT')!
  const { header, payload } = decode(jwt)
  t.ok(header.kid, 'new token has a kid')
  t.equal(payload.sess, true, 'session-only kept')
  t.notMatch(setCookies(res).join('\n'), /Max-Age=[1-9]/, 'session cookies (no Max-Age), as the Go cookies were')
  t.equal(cookieValue(res, 'XSRF-TOKEN'), payload.jti, 'the new XSRF cookie is the new session\'s')
  t.match(a.events.find((e) => e.type === 'session.migrated'), { sessionOnly: true, source: 'cookie' })

  const next = await a.app.inject({ method: 'POST', url: '/me', headers: { cookie: `JWT=${jwt}; XSRF-TOKEN=${String(payload.jti)}`, 'x-xsrf-token': String(payload.jti) } })
  t.equal(next.statusCode, 200, 'the new cookies are a session')
  t.same(setCookies(next), [], 'nothing exchanged again')
})

t.test('on https the Go cookies (JWT, XSRF-TOKEN) are read beside this package\'s __Host- cookies and cleared once moved', async (t) => {
  const a = await start(t, { url: 'https://127.0.0.1' })
  const res = await a.app.inject({ url: '/me', headers: { cookie: `JWT=${GO.testJwtValidNoHandshake!}; XSRF-TOKEN=random%20id`, 'x-xsrf-token': 'random id' } })
  t.equal(res.statusCode, 200, res.body)
  t.ok(cookieValue(res, '__Host-JWT'), 'a session of ours in our cookie')
  t.equal(cookieValue(res, 'JWT'), '', 'the Go token cookie is cleared')
  t.equal(cookieValue(res, 'XSRF-TOKEN'), '', 'the Go XSRF cookie is cleared')
  const anon = await a.app.inject({ url: '/me', headers: { cookie: 'JWT=; other=1' } })
  t.equal(anon.statusCode, 401, 'an empty Go cookie is no session')
})

t.test('per-audience secrets (AudSecrets) and an audience list', async (t) => {
  const a = await start(t, { audiences: ['test_sys', 'test_aud_only'], migration: { goPkgz: { secret: async (aud: string) => aud === 'test_aud_only' ? 'audsecret' : GO_SECRET } } })
  const ok = await a.app.inject({ url: '/me', headers: { 'x-jwt': goToken(goClaims({ aud: 'test_aud_only' }), undefined, 'audsecret') } })
  t.equal(ok.statusCode, 200, ok.body)
  t.same(decode(String(ok.headers['x-jwt'])).payload.aud, ['test_aud_only'])
  a.events.length = 0
  refusedCleanly(t, await a.app.inject({ url: '/me', headers: { 'x-jwt': GO.testJwtNonAudSign! } }), a, 'signed with the other audience\'s secret')
})

t.test('bad go-pkgz tokens: each 401, nothing issued', async (t) => {
  const a = await start(t, { audiences: ['test_sys'] })
  const cases: Array<[string, string]> = [
    ['go-pkgz vector signed with another secret (testJwtBadSign)', GO.testJwtBadSign!],
    ['signed with another secret', goToken(goClaims(), undefined, 'another secret')],
    ['go-pkgz vector with its claims changed (sess_only added), signature kept', (() => {
      const [h, p, sig] = GO.testJwtValidNoHandshake!.split('.')
      const claims = { ...JSON.parse(Buffer.from(p!, 'base64url').toString()), sess_only: true }
      return `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${sig}`
    })()],
    ['go-pkgz vector alg none (testJwtNoneAlg)', GO.testJwtNoneAlg!],
    ['alg none, claims fine, no signature', `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify(goClaims())).toString('base64url')}.`],
    ['RS256 header signed with the HS secret', goToken(goClaims(), { alg: 'RS256', typ: 'JWT' })],
    ['HS512 header', goToken(goClaims(), { alg: 'HS512', typ: 'JWT' })],
    ['a kid go-pkgz never sends', goToken(goClaims(), { alg: 'HS256', typ: 'JWT', kid: 'default' })],
    ['go-pkgz vector nbf in the future (testJwtNbf)', GO.testJwtNbf!],
    ['nbf in the future', goToken(goClaims({ nbf: now() + 3600 }))],
    ['go-pkgz vector expired (testJwtExpired)', GO.testJwtExpired!],
    ['expired', goToken(goClaims({ exp: now() - 1 }))],
    ['no exp', goToken(goClaims({ exp: undefined }))],
    ['go-pkgz vector without aud (testJwtNoAud)', GO.testJwtNoAud!],
    ['go-pkgz vector, string aud outside audiences (testJwtValidAud)', GO.testJwtValidAud!],
    ['string aud outside audiences', goToken(goClaims({ aud: 'other' }))],
    ['array aud outside audiences', goToken(goClaims({ aud: ['other'] }))],
    ['two audiences', goToken(goClaims({ aud: ['test_sys', 'other'] }))],
    ['aud of another case (go-pkgz compares ignoring case)', goToken(goClaims({ aud: 'TEST_SYS' }))],
    ['user a string', goToken(goClaims({ user: 'name1' }))],
    ['user an array', goToken(goClaims({ user: [{ name: 'name1', id: 'id1' }] }))],
    ['no user', goToken(goClaims({ user: undefined }))],
    ['user without id', goToken(goClaims({ user: { name: 'name1' } }))],
    ['user attrs not an object', goToken(goClaims({ user: { name: 'n', id: 'i', attrs: 'x' } }))],
    ['sess_only not a boolean', goToken(goClaims({ sess_only: 'yes' }))],
    ['another issuer', goToken(goClaims({ iss: 'someone-else' }))],
    ['go-pkgz vector carrying a login handshake (testJwtValid)', GO.testJwtValid!],
    ['a 100 KB token', goToken(goClaims({ pad: 'x'.repeat(100_000) }))],
    ['garbage', 'eyJhbGciOiJIUzI1NiJ9.not-json.sig']
  ]
  for (const [what, token] of cases) {
    refusedCleanly(t, await a.app.inject({ url: '/me', headers: { 'x-jwt': token } }), a, what)
  }
  const viaCookie = await a.app.inject({ url: '/me', headers: { cookie: `JWT=${GO.testJwtBadSign!}; XSRF-TOKEN=random%20id`, 'x-xsrf-token': 'random id' } })
  refusedCleanly(t, viaCookie, a, 'bad signature from the cookie')
  // An app that reads query tokens (`tokenSources.query`): its own tokens may come in a link, a Go token never.
  const q = await start(t, { audiences: ['test_sys'], tokenSources: { query: true } })
  const viaQuery = await q.app.inject({ url: `/me?token=${GO.testJwtValidNoHandshake!}` })
  refusedCleanly(t, viaQuery, q, 'a good Go token in the query string (links leak): not exchanged')
  t.ok(a.events.filter((e) => e.type === 'session.refused').length >= cases.length, 'each refusal audited')
})

t.test('without migration.goPkgz a go-pkgz token is refused as before', async (t) => {
  const a = await start(t, { migration: undefined })
  refusedCleanly(t, await a.app.inject({ url: '/me', headers: { 'x-jwt': GO.testJwtValidNoHandshake! } }), a, 'header')
  refusedCleanly(t, await a.app.inject({ url: '/me', headers: { cookie: `JWT=${GO.testJwtValidNoHandshake!}; XSRF-TOKEN=random%20id`, 'x-xsrf-token': 'random id' } }), a, 'cookie')
})

t.test('a user revoked after the Go token was made gets no session from it', async (t) => {
  const a = await start(t)
  await a.app.auth.revokeUser('id1')
  refusedCleanly(t, await a.app.inject({ url: '/me', headers: { 'x-jwt': goToken(goClaims({ iat: now() - 60 })) } }), a, 'revoked user')
})

t.test('options: migration.goPkgz is checked at registration', async (t) => {
  const bad: Array<[unknown, string]> = [
    [{ goPkgz: { secret: '' } }, 'migration.goPkgz.secret'],
    [{ goPkgz: {} }, 'migration.goPkgz.secret'],
    [{ goPkgz: { secret: 42 } }, 'migration.goPkgz.secret'],
    [{ goPkgz: { secret: 's', cookieName: 7 } }, 'migration.goPkgz.cookieName'],
    [{ goPkgz: { secret: 's', secrets: 's' } }, 'migration.goPkgz.secrets'],
    [{ goPkz: {} }, 'migration.goPkz']
  ]
  for (const [migration, option] of bad) {
    const app = Fastify()
    await t.rejects(app.register(authPlugin, { secret: SECRET, url: 'http://127.0.0.1', migration } as AuthOptions).ready(), { code: 'GATEHOUSE_OPTION', option }, option)
    await app.close()
  }
  const short = Fastify()
  await short.register(authPlugin, { secret: SECRET, url: 'http://127.0.0.1', migration: { goPkgz: { secret: 'x' } } })
  await t.resolves(short.ready(), 'a Go secret of any length (it only verifies)')
  await short.close()
})
