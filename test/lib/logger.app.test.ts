/**
 * An honest log: package lines go through the `logger` option (Fastify's own log by default) at their level,
 * a failure answering 5xx is logged once with its cause, and secrets never reach a log line.
 */
import t from 'tap'
import { Writable } from 'node:stream'
import Fastify from 'fastify'
import { authPlugin } from '../../auth.js'
import { funcLogger, packageLogger, pinoLogger, redactSecrets, stdLogger, type Logger, type LogLevel } from '../../lib/logging/logger.js'
import { client, listen } from '../helpers/client.js'

const SECRET = 'logging-test-secret-0123456789abcdef'

function pinoSink (): { stream: Writable; records: () => Array<{ level: number; msg: string }> } {
  const chunks: string[] = []
  return {
    stream: new Writable({ write (c, _e, cb) { chunks.push(String(c)); cb() } }),
    records: () => chunks.join('').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { level: number; msg: string })
  }
}

t.test('pinoLogger maps the level prefix to pino levels and drops it', async (t) => {
  const sink = pinoSink()
  const app = Fastify({ logger: { level: 'debug', stream: sink.stream } })
  const log = pinoLogger(app.log)
  log.logf('[DEBUG] d %s', 1)
  log.logf('[INFO] i')
  log.logf('[WARN] w')
  log.logf('[ERROR] e %v', new Error('boom'))
  log.logf('plain')
  await app.close()
  t.same(sink.records().filter((r) => r.msg !== 'Server listening').map((r) => [r.level, r.msg]).slice(0, 5), [
    [20, 'd 1'], [30, 'i'], [40, 'w'], [50, 'e boom'], [30, 'plain']
  ])
})

t.test('stdLogger keeps the prefix; funcLogger hands the level too', async (t) => {
  const out: string[] = []
  stdLogger(new Writable({ write (c, _e, cb) { out.push(String(c)); cb() } })).logf('[WARN] careful %s', 'now')
  t.same(out, ['[WARN] careful now\n'])
  const got: Array<[string, LogLevel]> = []
  const f = funcLogger((line, level) => { got.push([line, level]) })
  f.logf('[ERROR] broke')
  f.logf('[DEBUG] detail')
  f.logf('no prefix')
  t.same(got, [['[ERROR] broke', 'error'], ['[DEBUG] detail', 'debug'], ['no prefix', 'info']])
})

t.test('secrets are redacted from log lines', async (t) => {
  const cases: Array<[string, string]> = [
    ['connect postgres://app:hunter2@db.internal:5432/users failed', 'connect postgres://app:***@db.internal:5432/users failed'],
    ['redis://:s3cr3t@10.0.0.5:6379 refused', 'redis://:***@10.0.0.5:6379 refused'],
    ['clone https://ghp_abcdef123456@github.com/x/y', 'clone https://***@github.com/x/y'],
    ['GET /auth/github/callback?code=abc123&state=xyz789 failed', 'GET /auth/github/callback?code=***&state=*** failed'],
    ['GET /auth/email/login?token=eyJ0.eyJ1.c2ln&from=/', 'GET /auth/email/login?token=***&from=/'],
    ['POST /auth/local/login?user=ann&passwd=pw1 done', 'POST /auth/local/login?user=ann&passwd=*** done'],
    ['answer {"access_token":"gho_16C7e42F","token_type":"bearer"}', 'answer {"access_token":"***","token_type":"bearer"}'],
    ['header Authorization: Bearer abc.def-ghi', 'header Authorization: Bearer ***'],
    ['token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl in body', 'token *** in body'],
    ['fetch https://api.telegram.org/bot123456:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/getUpdates failed', 'fetch https://api.telegram.org/bot***/getUpdates failed'],
    ['host=db password=hunter2 user=app', 'host=db password=*** user=app'],
    ['client_secret=abc&grant_type=authorization_code', 'client_secret=***&grant_type=authorization_code']
  ]
  for (const [line, want] of cases) t.equal(redactSecrets(line), want, line)
  t.equal(redactSecrets('user alice signed in from 10.0.0.1 at https://example.com/x?page=2'), 'user alice signed in from 10.0.0.1 at https://example.com/x?page=2', 'ordinary text is untouched')
})

t.test('a host\'s own { logf } gets formatted, redacted lines; adapters pass through; no option means Fastify\'s log', async (t) => {
  const calls: unknown[][] = []
  const own: Logger = { logf: (...args: unknown[]) => { calls.push(args) } }
  const wrapped = packageLogger(own, Fastify().log) as Logger
  wrapped.logf('[ERROR] db %s failed: %v', 'mysql://root:pw@db/app', new Error('refused', { cause: new Error('ECONNREFUSED') }))
  t.same(calls, [['%s', '[ERROR] db mysql://root:***@db/app failed: refused: ECONNREFUSED']])
  const std = stdLogger()
  t.equal(packageLogger(std, Fastify().log), std)
  t.equal(packageLogger(console, Fastify().log), console, 'not a logger: left for the option check')

  const sink = pinoSink()
  const { app, base } = await listen(async (a) => {
    await a.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1', providers: [{ kind: 'direct', name: 'db', checker: () => { throw new Error('connect mysql://root:pw@db/app: timeout') } }] })
  }, { logger: { level: 'info', stream: sink.stream } })
  t.teardown(() => app.close())
  const r = await client(base).fetch('/auth/db/login', { method: 'POST', json: { user: 'ann', passwd: 'pw' } })
  t.equal(r.status, 503)
  const errors = sink.records().filter((rec) => rec.level === 50)
  t.equal(errors.length, 1, 'logged once, at error level, in Fastify\'s log')
  t.match(errors[0]?.msg, /^POST \/auth\/db\/login answered 503 GATEHOUSE_UNAVAILABLE: unavailable \(credential check failed\): connect mysql:\/\/root:\*\*\*@db\/app: timeout$/)
})

t.test('a 5xx is logged once with its cause; the client sees no cause; the password never appears', async (t) => {
  const lines: Array<[LogLevel, string]> = []
  const { app, base } = await listen(async (a) => {
    await a.register(authPlugin, {
      secret: () => SECRET,
      url: 'http://127.0.0.1',
      logger: funcLogger((line, level) => { lines.push([level, line]) }),
      providers: [{ kind: 'direct', name: 'db', checker: () => { throw new Error('query failed on postgres://svc:db-pass-123@10.1.2.3/users', { cause: new Error('ETIMEDOUT') }) } }]
    })
  })
  t.teardown(() => app.close())
  const r = await client(base).fetch('/auth/db/login', { method: 'POST', json: { user: 'ann', passwd: 'user-password-42' } })
  t.equal(r.status, 503)
  const body = await r.text()
  t.same(JSON.parse(body), { error: 'unavailable', details: 'credential check failed', code: 'GATEHOUSE_UNAVAILABLE' })
  t.notMatch(body, /postgres|ETIMEDOUT/, 'no cause in the answer')
  const errors = lines.filter(([level]) => level === 'error')
  t.equal(errors.length, 1, 'one error line')
  t.match(errors[0]?.[1], /^\[ERROR\] POST \/auth\/db\/login answered 503 GATEHOUSE_UNAVAILABLE: unavailable \(credential check failed\): query failed on postgres:\/\/svc:\*\*\*@10\.1\.2\.3\/users: ETIMEDOUT$/)
  const all = lines.map(([, l]) => l).join('\n')
  t.notMatch(all, /db-pass-123/, 'database password redacted')
  t.notMatch(all, /user-password-42/, 'user password never logged')
})

t.test('an unexpected throw in an auth route is a 500 logged once with its cause', async (t) => {
  const lines: string[] = []
  const { app, base } = await listen(async (a) => {
    await a.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1', logger: funcLogger((l) => { lines.push(l) }) })
    a.auth.addCustomHandler({ name: 'broken', login: async () => { throw new Error('bug at https://user:pw@internal.example/x') } })
  })
  t.teardown(() => app.close())
  const r = await client(base).fetch('/auth/broken/login')
  t.equal(r.status, 500)
  t.same(await r.json(), { error: 'internal error', code: 'GATEHOUSE_INTERNAL' })
  // The url (port 80) is not the test server's port: that warning (plugins/core/signin/url-check.ts) is not this test's subject.
  t.same(lines.filter((l) => !l.includes('requests arrive at')), ['[ERROR] GET /auth/broken/login failed: bug at https://user:***@internal.example/x'])
})
