/**
 * The auth routes' scope: forms parsed there only (issue 23 item 4), per-request lines through `request.log`
 * (item 5) and no password of a GET login in Fastify's request log (item 11).
 */
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { authPlugin } from '../../../auth.js'
import type { AuthOptions } from '../../../auth.js'

const secret = (): string => 'scope-test-secret-0123456789-0123456789'
const users: Record<string, string> = { alice: 'PW-alice-7731' }

/** An app with Fastify's own logger writing JSON lines into `lines`. */
async function appWithLog (opts: Partial<AuthOptions> = {}, allowGet = false): Promise<{ app: FastifyInstance; lines: string[] }> {
  const lines: string[] = []
  const app = Fastify({ logger: { level: 'info', stream: { write: (line: string) => { lines.push(line) } } } })
  await app.register(authPlugin, {
    secret,
    url: 'http://127.0.0.1',
    providers: [{ kind: 'direct', name: 'local', checker: (u, p) => users[u] === p, allowGet }],
    ...opts
  })
  app.post('/host/echo', async (request) => ({ body: request.body ?? null }))
  await app.ready()
  return { app, lines }
}

t.test('a host route does not parse forms because of the package; the login form is parsed', async (t) => {
  const { app } = await appWithLog()
  t.teardown(() => app.close())
  const form = { 'content-type': 'application/x-www-form-urlencoded' }
  const host = await app.inject({ method: 'POST', url: '/host/echo', headers: form, payload: 'a=1' })
  t.equal(host.statusCode, 415, 'the host route answers 415 to a form')
  const json = await app.inject({ method: 'POST', url: '/host/echo', payload: { a: 1 } })
  t.same(json.json(), { body: { a: 1 } }, 'JSON still parsed on the host route')
  const login = await app.inject({ method: 'POST', url: '/auth/local/login', headers: form, payload: 'user=alice&passwd=PW-alice-7731' })
  t.equal(login.statusCode, 200, 'the password login form works')
  t.equal(login.json().name, 'alice')
  const repeated = await app.inject({ method: 'POST', url: '/auth/local/login', headers: form, payload: 'user=alice&user=bob&passwd=x' })
  t.equal(repeated.statusCode, 400)
  t.same(repeated.json(), { error: 'bad request', details: 'user must be given once', code: 'GATEHOUSE_BAD_REQUEST' })
})

t.test('a host that parses forms itself keeps its parser, and the login form uses it', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  let hostParsed = 0
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_r, body, done) => {
    hostParsed++
    done(null, Object.fromEntries(new URLSearchParams(body as string)))
  })
  await app.register(authPlugin, { secret, url: 'http://127.0.0.1', providers: [{ kind: 'direct', name: 'local', checker: (u, p) => users[u] === p }] })
  app.post('/host/echo', async (request) => ({ body: request.body }))
  const form = { 'content-type': 'application/x-www-form-urlencoded' }
  t.same((await app.inject({ method: 'POST', url: '/host/echo', headers: form, payload: 'a=1' })).json(), { body: { a: '1' } })
  const login = await app.inject({ method: 'POST', url: '/auth/local/login', headers: form, payload: 'user=alice&passwd=PW-alice-7731' })
  t.equal(login.statusCode, 200)
  t.equal(hostParsed, 2, 'the host parser served both')
})

t.test('a refused from= is logged with the reason, on the request\'s log line (reqId)', async (t) => {
  const { app, lines } = await appWithLog()
  t.teardown(() => app.close())
  const r = await app.inject({ method: 'POST', url: '/auth/local/login?from=https://evil.example/x', payload: { user: 'alice', passwd: 'PW-alice-7731' } })
  t.equal(r.statusCode, 200, 'the login goes on, answering the user as JSON')
  t.equal(r.headers.location, undefined, 'no redirect')
  const entries = lines.map((l) => JSON.parse(l) as { reqId?: string; msg: string; level: number })
  const incoming = entries.find((e) => e.msg === 'incoming request')!
  const refusal = entries.find((e) => e.msg.includes('from=https://evil.example/x is not followed'))
  t.ok(refusal, 'the refusal is logged')
  t.match(refusal!.msg, /host evil\.example is neither the origin of url nor in allowedRedirectHosts/, 'with the reason')
  t.equal(refusal!.level, 40, 'at warn')
  t.equal(refusal!.reqId, incoming.reqId, 'on the request\'s own log (its reqId)')
  t.ok(refusal!.reqId !== undefined && refusal!.reqId !== '')
})

t.test('a 5xx answer of an auth route is logged with the request\'s reqId', async (t) => {
  const lines: string[] = []
  const app = Fastify({ logger: { level: 'info', stream: { write: (line: string) => { lines.push(line) } } } })
  t.teardown(() => app.close())
  await app.register(authPlugin, {
    secret,
    url: 'http://127.0.0.1',
    providers: [{ kind: 'direct', name: 'local', checker: () => { throw new Error('db down') } }]
  })
  const r = await app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'alice', passwd: 'x' } })
  t.equal(r.statusCode, 503)
  const entries = lines.map((l) => JSON.parse(l) as { reqId?: string; msg: string })
  const incoming = entries.find((e) => e.msg === 'incoming request')!
  const line = entries.find((e) => e.msg.includes('answered 503'))
  t.match(line?.msg, /db down/)
  t.equal(line?.reqId, incoming.reqId)
})

t.test('GET password logins are off by default: 405, and the password is in no log line', async (t) => {
  const { app, lines } = await appWithLog()
  t.teardown(() => app.close())
  const r = await app.inject({ method: 'GET', url: '/auth/local/login?user=alice&passwd=PW-alice-7731' })
  t.equal(r.statusCode, 405)
  t.equal(r.headers.allow, 'POST')
  t.same(r.json(), {
    error: 'method not allowed',
    details: 'POST the user and passwd; GET logins are off (direct provider "local" option allowGet)',
    code: 'GATEHOUSE_BAD_REQUEST'
  })
  t.equal(r.headers['set-cookie'], undefined, 'no session')
  t.ok(lines.length > 0, 'the request was logged')
  t.notOk(lines.join('\n').includes('PW-alice-7731'), 'the password appears in no log line')
})

t.test('allowGet: true signs in with GET, and Fastify\'s request log masks the password', async (t) => {
  const { app, lines } = await appWithLog({}, true)
  t.teardown(() => app.close())
  const r = await app.inject({ method: 'GET', url: '/auth/local/login?user=alice&passwd=PW-alice-7731&from=/home' })
  t.equal(r.statusCode, 303)
  t.equal(r.headers.location, 'http://127.0.0.1/home')
  const incoming = lines.map((l) => JSON.parse(l) as { msg: string; req?: { url: string } }).find((e) => e.msg === 'incoming request')
  t.match(incoming?.req?.url, /^\/auth\/local\/login\?user=alice&passwd=\*+&from=\/home$/, 'the URL is logged with passwd masked')
  t.notOk(lines.join('\n').includes('PW-alice-7731'), 'the password appears in no log line')
})

t.test('allowGet must be a boolean', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  app.register(authPlugin, { secret, url: 'http://127.0.0.1', providers: [{ kind: 'direct', name: 'local', checker: () => true, allowGet: 'yes' as unknown as boolean }] })
  await t.rejects(app.ready(), { name: 'OptionsError', option: 'direct.allowGet' })
})
