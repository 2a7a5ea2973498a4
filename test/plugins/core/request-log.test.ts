/**
 * Fastify's own request log masks secret query values on the app's routes too, not only on the auth routes: a
 * real `logger: true` app in a child process (its stdout read whole), and in-process apps whose log stream is
 * captured for the variants (a host's own `serializers.req`, a route's own `logSerializers`, a plugin's).
 */
import t from 'tap'
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import Fastify, { type FastifyInstance } from 'fastify'
import { authPlugin } from '../../../auth.js'

const SECRET = 'request-log-test-secret-0123456789abcdef'
interface LogLine { msg: string; req?: { url?: string; method?: string; ua?: string } }

t.test('logger: true: the incoming-request line of an app route masks a query session and other secret keys', async (t) => {
  const loader = process.execArgv.filter((a) => a.includes('ts-loader'))
  const child = fork(fileURLToPath(new URL('./request-log.child.ts', import.meta.url)), [], { execArgv: loader, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] })
  let out = ''
  child.stdout!.setEncoding('utf8').on('data', (d: string) => { out += d })
  const exited = once(child, 'exit')
  t.teardown(() => { if (child.exitCode === null) child.kill() })
  const [{ port }] = await once(child, 'message') as [{ port: number }]
  const base = `http://127.0.0.1:${port}`

  const login = await fetch(`${base}/auth/local/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user: 'alice', passwd: 'alice-pw' }) })
  t.equal(login.status, 200)
  const jwt = login.headers.getSetCookie().find((c) => c.startsWith('JWT='))!.split(';')[0]!.slice(4)
  t.ok(jwt.length > 100, 'a session token')
  const items = await fetch(`${base}/api/items?token=${jwt}&page=2`)
  t.equal(items.status, 200, 'the query session signs the request in')
  t.same(await items.json(), { items: [], user: 'alice' })
  t.equal((await fetch(`${base}/api/items?access_token=leaked-access-token-7f3a&q=shoes`)).status, 401)
  t.equal((await fetch(`${base}/api/early?token=${jwt}&apiKey=leaked-api-key-91b2`)).status, 200)
  child.send('stop')
  await exited

  const lines = out.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as LogLine)
  // Sorted: what is under test is each line's URL, not the order the child's log reached the pipe in (one run on a
  // loaded machine printed the last request's line second).
  const urls = lines.filter((l) => l.msg === 'incoming request').map((l) => l.req?.url).sort()
  t.same(urls, [
    '/api/early?token=********&apiKey=********',
    '/api/items?access_token=********&q=shoes',
    '/api/items?token=********&page=2',
    '/auth/local/login'
  ], 'every incoming line masks the secret values and keeps the rest')
  t.notOk(out.includes(jwt), 'the session token is in no log line')
  t.notOk(out.includes('leaked-access-token-7f3a') || out.includes('leaked-api-key-91b2'), 'nor the other secrets')
})

/** An app logging JSON lines into `lines`; `setup` runs before the auth plugin is registered. */
async function capturingApp (t: { teardown(fn: () => unknown): void }, logger: Record<string, unknown> = {}, setup?: (app: FastifyInstance) => void): Promise<{ app: FastifyInstance, lines: LogLine[] }> {
  const lines: LogLine[] = []
  const app = Fastify({ logger: { level: 'info', stream: { write: (l: string) => { lines.push(JSON.parse(l) as LogLine) } }, ...logger } })
  t.teardown(() => app.close())
  setup?.(app)
  await app.register(authPlugin, { secret: SECRET, url: 'http://127.0.0.1', tokenSources: { query: 'st' }, providers: [{ kind: 'direct', name: 'local', checker: () => true }] })
  return { app, lines }
}

function incoming (lines: LogLine[]): Array<LogLine['req']> {
  return lines.filter((l) => l.msg === 'incoming request').map((l) => l.req)
}

t.test('a host\'s own serializers.req keeps its fields; the URL is masked', async (t) => {
  const { app, lines } = await capturingApp(t, { serializers: { req: (req: { method: string, url: string, headers: Record<string, string> }) => ({ method: req.method, url: req.url, ua: req.headers['user-agent'] }) } })
  app.get('/search', async () => ({ ok: true }))
  await app.inject({ url: '/search?q=boots&password=hunter2&st=custom-query-name-value', headers: { 'user-agent': 'probe/1' } })
  t.same(incoming(lines), [{ method: 'GET', url: '/search?q=boots&password=********&st=********', ua: 'probe/1' }], 'the configured query name (tokenSources.query) is masked too')
})

t.test('a route\'s own logSerializers.req and a plugin\'s are masked; a URL without a query is left alone', async (t) => {
  const { app, lines } = await capturingApp(t)
  app.get('/own', { logSerializers: { req: (req: { url: string }) => ({ path: 'own', url: req.url }) } }, async () => ({ ok: true }))
  await app.register(async (scope) => {
    scope.get('/plugin', async () => ({ ok: true }))
  }, { logSerializers: { req: (req: { url: string }) => ({ path: 'plugin', url: req.url }) } })
  await app.inject({ url: '/own?token=abc.def.ghi&x=1' })
  await app.inject({ url: '/plugin?secret=s3cr3t-value' })
  await app.inject({ url: '/own' })
  await app.inject({ url: '/missing?token=abc.def.ghi' })
  t.same(incoming(lines), [
    { path: 'own', url: '/own?token=********&x=1' },
    { path: 'plugin', url: '/plugin?secret=********' },
    { path: 'own', url: '/own' },
    { method: 'GET', url: '/missing?token=********', host: 'localhost:80', remoteAddress: '127.0.0.1' }
  ])
})

t.test('two apps on one logger: each masks what it knows, nothing is wrapped twice', async (t) => {
  const first = await capturingApp(t)
  const second = Fastify({ loggerInstance: first.app.log })
  t.teardown(() => second.close())
  await second.register(authPlugin, { secret: SECRET, url: 'http://127.0.0.1', tokenSources: { query: 'zz' }, providers: [{ kind: 'direct', name: 'local', checker: () => true }] })
  second.get('/a', async () => ({ ok: true }))
  await second.inject({ url: '/a?zz=second-app-token&token=t' })
  t.same(incoming(first.lines).map((r) => r?.url), ['/a?zz=********&token=********'])
})

t.test('a logger that is not pino: the plugin registers and requests are answered', async (t) => {
  const seen: unknown[] = []
  const logger = {
    level: 'info',
    info: (...args: unknown[]) => { seen.push(args) },
    error: () => {}, debug: () => {}, fatal: () => {}, warn: () => {}, trace: () => {}, silent: () => {},
    child () { return logger }
  }
  const app = Fastify({ loggerInstance: logger as never })
  t.teardown(() => app.close())
  await app.register(authPlugin, { secret: SECRET, url: 'http://127.0.0.1', providers: [{ kind: 'direct', name: 'local', checker: () => true }] })
  app.get('/x', async () => ({ ok: true }))
  t.equal((await app.inject({ url: '/x?token=abc' })).statusCode, 200)
  t.ok(seen.length > 0, 'the host\'s logger got the request (and masks it with sanitizeUrl, as the logging guide shows)')
})
