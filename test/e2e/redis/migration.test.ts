/**
 * `migration.goPkgz` on a shared Redis (issue 43, item 10): a go-pkgz/auth token signed before this service first
 * started (its `iat`, the moved session's `auth_time`, older than the store's revocation epoch) is exchanged and its
 * session then served on every instance, refreshed, listed, and turned into a client's family, as on the memory
 * store. The epoch still holds: when the store loses its data, the moved session is refused like a native one.
 * Real redis-server, stopped and started again (it keeps nothing).
 */
import t from 'tap'
import { createHash, createHmac } from 'node:crypto'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import FakeTimers from '@sinonjs/fake-timers'
import { authPlugin, type AuthOptions } from '../../../index.js'
import { redisForTests } from '../../helpers/redis-server.js'
import { coreOf } from '../../../plugins/core/signin/internals.js'

const GO_SECRET = 'xyz 12345'
const SECRET = 'a-secret-of-this-package-32-bytes-or-more'
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const VERIFIER = 'a-pkce-verifier-of-forty-three-characters-or-more-0123'
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url')

/** A go-pkgz/auth v2 session token (HS256, the Go service's secret), signed an hour before this test. */
function goToken (jti: string, name: string): string {
  const now = Math.floor(Date.now() / 1000)
  const payload = { iss: 'remark42', aud: 'test_sys', exp: now + 900, iat: now - 3600, jti, user: { name, id: `id-${name}` } }
  const input = `${Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`
  return `${input}.${createHmac('sha256', GO_SECRET).update(input).digest('base64url')}`
}

async function instance (url: string): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(authPlugin, {
    secret: SECRET,
    url: 'http://127.0.0.1',
    issuer: 'remark42',
    stateStore: url,
    rateLimit: false,
    migration: { goPkgz: { secret: GO_SECRET } },
    providers: [{ kind: 'direct', name: 'local', checker: () => true }],
    clients: [{ id: 'mobile', kind: 'native', name: 'Phone app', redirectUris: ['com.example.app:/callback'] }]
  } as AuthOptions)
  app.get('/me', { preHandler: app.auth.authenticate }, async (request) => ({ name: request.user!.name }))
  await app.ready()
  return app
}

const cookiesOf = (res: LightMyRequestResponse): Record<string, string> => Object.fromEntries(res.cookies.filter((c) => c.value !== '').map((c) => [c.name, c.value]))
const withCookies = (jar: Record<string, string>): Record<string, string> => ({
  cookie: Object.entries(jar).map(([k, v]) => `${k}=${v}`).join('; '), 'x-xsrf-token': jar['XSRF-TOKEN'] ?? ''
})

const redis = await redisForTests(t, 'go-pkgz migration on Redis')
if (redis !== undefined) {
  t.test('a go-pkgz token older than the store\'s revocation epoch moves over on Redis as on memory', async (t) => {
    const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
    t.teardown(() => clock.uninstall())
    const a = await instance(redis.url)
    const b = await instance(redis.url)
    t.teardown(async () => { await a.close(); await b.close() })

    // From the token header: exchanged on A, the new token served on B.
    let r = await a.inject({ url: '/me', headers: { 'x-jwt': goToken('go-1', 'ann') } })
    t.equal(r.statusCode, 200, `the Go token is exchanged (${r.body})`)
    const moved = String(r.headers['x-jwt'])
    r = await b.inject({ url: '/me', headers: { 'x-jwt': moved } })
    t.equal(r.statusCode, 200, 'its session is served on the other instance')
    t.same(r.json(), { name: 'ann' })

    // From the cookie (with go-pkgz's XSRF rule): the moved cookie session is served, listed and refreshed.
    const go = goToken('go-2', 'bob')
    r = await a.inject({ url: '/me', headers: { cookie: `JWT=${go}; XSRF-TOKEN=go-2`, 'x-xsrf-token': 'go-2' } })
    t.equal(r.statusCode, 200, `the Go cookie is exchanged (${r.body})`)
    let jar = cookiesOf(r)
    t.equal((await b.inject({ url: '/me', headers: withCookies(jar) })).statusCode, 200)
    await coreOf(a).sessions!.flush() // the exchange's sighting, written in the next batch
    const listed = await b.inject({ url: '/auth/sessions', headers: withCookies(jar) })
    t.equal(listed.statusCode, 200)
    t.equal(listed.json().length, 1, 'the moved session is in the session list')
    clock.tick(20 * 60_000)
    r = await b.inject({ url: '/me', headers: withCookies(jar) })
    t.equal(r.statusCode, 200, 'past its token\'s 15 minutes: refreshed')
    jar = { ...jar, ...cookiesOf(r) }
    t.equal((await a.inject({ url: '/me', headers: withCookies(jar) })).statusCode, 200, 'the refreshed token is served too')

    // A native client signed in from the moved browser session: its family lives and refreshes.
    r = await a.inject({ url: `/auth/authorize?response_type=code&client_id=mobile&redirect_uri=com.example.app:/callback&code_challenge=${CHALLENGE}&code_challenge_method=S256`, headers: { ...withCookies(jar), 'sec-fetch-site': 'none' } })
    t.equal(r.statusCode, 302)
    const code = new URL(String(r.headers.location)).searchParams.get('code')!
    r = await b.inject({ method: 'POST', url: '/auth/token', headers: FORM, payload: new URLSearchParams({ grant_type: 'authorization_code', client_id: 'mobile', code, redirect_uri: 'com.example.app:/callback', code_verifier: VERIFIER }).toString() })
    t.equal(r.statusCode, 200, `the code buys a pair (${r.body})`)
    const pair = r.json()
    t.equal((await a.inject({ url: '/me', headers: { authorization: `Bearer ${pair.access_token as string}` } })).statusCode, 200, 'its access token is served')
    r = await a.inject({ method: 'POST', url: '/auth/token', headers: FORM, payload: new URLSearchParams({ grant_type: 'refresh_token', client_id: 'mobile', refresh_token: pair.refresh_token }).toString() })
    t.equal(r.statusCode, 200, `its refresh token refreshes (${r.body})`)

    // The epoch still holds: the store loses its data, and sessions started here before are refused, moved or not.
    const native = cookiesOf(await a.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'cy', passwd: 'x' } }))
    t.equal((await a.inject({ url: '/me', headers: withCookies(native) })).statusCode, 200, 'control: a native session')
    clock.tick(1000)
    await redis.stop()
    await redis.start()
    const c = await instance(redis.url)
    t.teardown(() => c.close())
    for (const [what, headers] of [['the moved header session', { 'x-jwt': moved }], ['the moved cookie session', withCookies(jar)], ['a native session', withCookies(native)]] as const) {
      const res = await c.inject({ url: '/me', headers })
      t.equal(res.statusCode, 401, `after the store lost its data: ${what} is refused`)
      t.equal(res.json().code, 'GATEHOUSE_SESSION_REVOKED')
    }
  })
}
