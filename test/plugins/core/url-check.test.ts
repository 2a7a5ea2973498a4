/**
 * The `url` option against where login requests arrive (plugins/core/signin/url-check.ts): a loopback arrival at
 * another origin is warned about once, with the origin to use; matching and non-loopback arrivals are not.
 * Also the plain-string `secret` (plugins/core/options.ts): accepted when long enough, an OptionsError otherwise.
 */
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { format } from 'node:util'
import { authPlugin } from '../../../auth.js'
import { OptionsError } from '../../../lib/errors.js'
import { loopbackMismatch } from '../../../plugins/core/signin/url-check.js'

const SECRET = 'url-check-secret-0123456789-0123456789'

async function appWith (url: string, lines: string[], trustProxy = false): Promise<FastifyInstance> {
  const app = Fastify({ trustProxy })
  await app.register(authPlugin, {
    secret: SECRET,
    url,
    logger: { logf: (f: string, ...a: unknown[]) => { lines.push(format(f, ...a)) } },
    providers: [{ kind: 'direct', name: 'local', checker: (u, p) => u === 'ann' && p === 'pw' }]
  })
  t.teardown(() => app.close())
  return app
}

const login = (app: FastifyInstance, host: string, headers: Record<string, string> = {}) => app.inject({
  method: 'POST', url: '/auth/local/login?from=/', headers: { host, ...headers }, payload: { user: 'ann', passwd: 'pw' }
})
const warnings = (lines: string[]): string[] => lines.filter((l) => l.includes('requests arrive at'))

t.test('the tutorial url on localhost: one warning naming the origin to use, the login itself unchanged', async (t) => {
  const lines: string[] = []
  const app = await appWith('https://example.com', lines)
  const r = await login(app, 'localhost:8080')
  t.equal(r.statusCode, 303, 'the login still answers')
  t.equal(r.headers.location, 'https://example.com/', 'what the warning is about: the redirect leaves localhost')
  t.match(String(r.headers['set-cookie']), /__Host-JWT=.*Secure/)
  await login(app, 'localhost:8080')
  const w = warnings(lines)
  t.equal(w.length, 1, 'once, not per request')
  t.match(w[0], /^\[WARN\] auth options: url is https:\/\/example\.com but requests arrive at http:\/\/localhost:8080/)
  t.match(w[0], /Secure cookies/)
  t.match(w[0], /set url to http:\/\/localhost:8080/)
})

t.test('an app\'s test logging in through inject (no Host of its own) is not warned about; one naming a Host is', async (t) => {
  const lines: string[] = []
  const app = await appWith('http://localhost:3000', lines)
  const r = await app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'ann', passwd: 'pw' } })
  t.equal(r.statusCode, 200, 'signed in')
  t.same(warnings(lines), [], 'inject is no development server on the wrong address')
  await login(app, 'localhost:80')
  t.same(warnings(lines), [], 'the same Host given explicitly reads the same')
  await login(app, 'localhost:8080')
  t.equal(warnings(lines).length, 1, 'a Host the test names is an arrival')
})

t.test('a url matching the loopback origin is not warned about', async (t) => {
  const lines: string[] = []
  const app = await appWith('http://localhost:8080', lines)
  const r = await login(app, 'localhost:8080')
  t.equal(r.statusCode, 303)
  t.equal(r.headers.location, 'http://localhost:8080/')
  t.same(warnings(lines), [])
})

t.test('a public host (a reverse proxy may name anything) is not warned about', async (t) => {
  const lines: string[] = []
  const app = await appWith('https://example.com', lines)
  t.equal((await login(app, 'internal.example.net:3000')).statusCode, 303)
  t.same(warnings(lines), [])
})

t.test('behind a trusted proxy the forwarded host and protocol count', async (t) => {
  const lines: string[] = []
  const app = await appWith('https://example.com', lines, true)
  await login(app, 'localhost:3000', { 'x-forwarded-host': 'example.com', 'x-forwarded-proto': 'https' })
  t.same(warnings(lines), [], 'the public origin arrived through the proxy')
})

t.test('loopbackMismatch: loopback spellings, default ports, hosts that are not hosts', async (t) => {
  t.equal(loopbackMismatch('https://example.com', 'http', '127.0.0.1:3000'), 'http://127.0.0.1:3000')
  t.equal(loopbackMismatch('https://example.com', 'http', '[::1]:3000'), 'http://[::1]:3000')
  t.equal(loopbackMismatch('https://example.com', 'http', 'app.localhost'), 'http://app.localhost')
  t.equal(loopbackMismatch('http://localhost', 'http', 'localhost:80'), undefined, 'the default port is the same origin')
  t.equal(loopbackMismatch('http://localhost:8080', 'http', 'LOCALHOST:8080'), undefined)
  t.equal(loopbackMismatch('https://example.com', 'http', 'localhost:99999'), undefined, 'no such port')
  t.equal(loopbackMismatch('https://example.com', 'http', 'evil@localhost'), undefined)
  t.equal(loopbackMismatch('https://example.com', 'http', undefined), undefined)
})

t.test('secret as a plain string', async (t) => {
  const lines: string[] = []
  const app = await appWith('http://localhost', lines)
  const r = await login(app, 'localhost')
  t.equal(r.statusCode, 303, 'signs sessions')
  const me = await app.inject({ url: '/auth/status', headers: { cookie: String(r.headers['set-cookie']).split(';')[0]! } })
  t.equal(me.statusCode, 200)
  for (const [secret, why] of [['', /empty string/], ['short-secret', /is 12 bytes; at least 32/], [undefined, /is required: .*environment variable/]] as const) {
    const bad = Fastify()
    const err = await bad.register(authPlugin, { secret: secret as string, url: 'http://localhost' }).ready().then(() => null, (e: unknown) => e)
    t.ok(err instanceof OptionsError, `${JSON.stringify(secret)}: an OptionsError`)
    t.equal((err as OptionsError).option, 'secret')
    t.match((err as Error).message, why)
    await bad.close()
  }
})
