import t from 'tap'
import type { Test } from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { hostname } from 'node:os'
import { freePort } from '../../helpers/redis-server.js'
import { authPlugin } from '../../../auth.js'
import { SmtpSender, SendError, verifyProvider } from '../../../providers/index.js'
import { client, listen, parseSetCookie, type Client } from '../../helpers/client.js'
import { funcLogger } from '../../../lib/logging/logger.js'
import { MailSink, selfSignedCert } from '../../helpers/mail-sink.js'

const TEMPLATE = 'Hello {{.User}} <{{.Address}}>, confirm your login to {{.Site}}: {{.Token}}'
const sink = new MailSink()
await sink.start()
t.teardown(() => sink.stop())
const cert = selfSignedCert()
const noTls = typeof cert === 'string' ? cert : undefined
if (noTls !== undefined) console.log(`# skipping the STARTTLS test: ${noTls}`)
const authSink = new MailSink({ user: 'mailer', pass: 'mail-secret' }, typeof cert === 'string' ? undefined : cert)
await authSink.start()
t.teardown(() => authSink.stop())
const flaky = new MailSink()
await flaky.start()
t.teardown(() => flaky.stop())

const senders: SmtpSender[] = []
const smtp = (opts: Partial<ConstructorParameters<typeof SmtpSender>[0]> & { port: number }): SmtpSender => {
  const s = new SmtpSender({ host: '127.0.0.1', from: 'Gatehouse <no-reply@example.com>', subject: 'Your login', timeout: '3s', ...opts })
  senders.push(s)
  return s
}
const sentByFunc: Array<{ address: string; text: string }> = []
const logs: string[] = []
/** Log lines written since `from` (an index into `logs`). */
const logsSince = (from: number): string[] => logs.slice(from)
// 5xx bodies name the kind of peer only; its address and reply go to the log.
const MAIL_UNAVAILABLE = { error: 'mail server unavailable', details: 'the confirmation message could not be sent now; try again later', code: 'GATEHOUSE_UNAVAILABLE' }
const MAIL_FAILED = { error: 'mail server failed', details: 'the confirmation message could not be sent', code: 'GATEHOUSE_UPSTREAM' }
const downPort = await freePort()

const { app, base } = await listen(async (app) => {
  // Every message of this file is asked for from one address, some to one destination, within the hour: above
  // the default limits, which are tested on their own (test/lib/throttle, test/e2e/redis/lockout.test.ts).
  const rateLimit = { login: { max: 10_000 }, sends: { perAddress: 10_000, perIp: 10_000 } }
  await app.register(authPlugin, { secret: () => 'verify-test-secret-0123456789-0123456789abcdef', url: 'http://127.0.0.1', rateLimit, logger: funcLogger((l) => logs.push(l)) })
  // Most providers through the fastify.auth wrapper, some through the plugin itself: both mount the same thing.
  await app.register(verifyProvider, { name: 'email', template: TEMPLATE, sender: smtp({ port: sink.port }) })
  app.auth.addVerifProvider('short', 'token {{.Token}}', smtp({ port: sink.port }), { tokenTtl: '1m' })
  app.auth.addVerifProvider('html', '<p>Hi {{.User}}</p><a href="https://x.test/?t={{.Token}}">go</a>',
    smtp({ port: sink.port, contentType: 'text/html', charset: 'iso-8859-1' }))
  // A template without a tag, mailed as HTML: the body is still HTML, so values must still be escaped.
  app.auth.addVerifProvider('htmlbody', 'Hi {{.User}}, your code: {{.Token}}', smtp({ port: sink.port, contentType: 'text/html' }))
  app.auth.addVerifProvider('secure', 'token {{.Token}}',
    smtp({ port: authSink.port, startTLS: true, insecureSkipVerify: true, username: 'mailer', password: 'mail-secret' }))
  app.auth.addVerifProvider('untrusted', 'token {{.Token}}', smtp({ port: authSink.port, startTLS: true, username: 'mailer', password: 'mail-secret' }))
  app.auth.addVerifProvider('wrongpw', 'token {{.Token}}', smtp({ port: authSink.port, startTLS: true, insecureSkipVerify: true, username: 'mailer', password: 'nope' }))
  app.auth.addVerifProvider('down', 'token {{.Token}}', smtp({ port: downPort }))
  app.auth.addVerifProvider('flaky', 'token {{.Token}}', smtp({ port: flaky.port }))
  await app.register(verifyProvider, { name: 'func', template: 'code {{.Token}} for {{.User}}', sender: (address: string, text: string) => { sentByFunc.push({ address, text }) } })
  app.auth.addVerifProvider('leaky', 'token {{.Token}}', () => { throw new Error('db password=hunter2 refused') })
  app.auth.addVerifProvider('hung', 'token {{.Token}}', () => new Promise<void>(() => {}), { sendTimeout: '200ms' })
  await app.register(verifyProvider, { name: 'picky', template: 'token {{.Token}}', sender: { send () { throw new SendError('rejected', 'only example.org addresses') } } })
})
t.teardown(async () => { await app.close(); for (const s of senders) s.close() })

const TOKEN_IN_MAIL = /([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)/

async function requestMail (c: Client, provider: string, query: Record<string, string>, box = sink): Promise<{ res: Response; token: string; mail: Awaited<ReturnType<MailSink['next']>> }> {
  const arriving = box.next()
  const res = await c.fetch(`/auth/${provider}/login?${new URLSearchParams(query)}`)
  if (res.status !== 200) throw new Error(`send failed: ${res.status} ${await res.text()}`)
  const mail = await arriving
  return { res, token: TOKEN_IN_MAIL.exec(mail.body)![1]!, mail }
}

/** The JWT and XSRF-TOKEN cookies a response sets. */
function sessionCookies (res: Response): Array<ReturnType<typeof parseSetCookie>> {
  return res.headers.getSetCookie().map(parseSetCookie).filter((c) => c.name === 'JWT' || c.name === 'XSRF-TOKEN')
}

/** Whether a login response set session-only cookies (neither Max-Age nor Expires) or persistent ones. */
function cookieLifetime (t: Test, res: Response, sessionOnly: boolean, what: string): void {
  const cookies = sessionCookies(res)
  t.same(cookies.map((c) => c.name).sort(), ['JWT', 'XSRF-TOKEN'], `${what}: both cookies set`)
  for (const c of cookies) {
    if (sessionOnly) {
      t.notOk('max-age' in c.attrs || 'expires' in c.attrs, `${what}: ${c.name} is session-only`)
    } else {
      t.ok(Number(c.attrs['max-age']) > 0, `${what}: ${c.name} is persistent`)
    }
  }
}

async function whoAmI (c: Client): Promise<Response> {
  return await c.fetch('/auth/user', { headers: { 'x-xsrf-token': c.jar.get('XSRF-TOKEN') ?? '' } })
}

t.test('end to end over SMTP: mail with the rendered template, its token signs in once', async (t) => {
  const c = client(base)
  const { res, token, mail } = await requestMail(c, 'email', { user: 'alice', address: 'alice@example.com', aud: 'site1', from: 'http://127.0.0.1/after' })
  t.same(await res.json(), { status: 'sent', user: 'alice', address: 'alice@example.com' })
  t.equal(res.headers.get('cache-control'), 'no-store')
  t.equal(c.jar.get('JWT'), undefined, 'asking for a mail signs nobody in')
  t.same(mail.to, ['alice@example.com'])
  t.equal(mail.from, 'no-reply@example.com')
  t.equal(mail.headers.subject, 'Your login')
  t.match(mail.headers['content-type'], /^text\/plain; charset=utf-8/)
  t.equal(mail.body, `Hello alice <alice@example.com>, confirm your login to site1: ${token}`)

  const login = await c.fetch(`/auth/email/login?token=${token}&sess=1`)
  t.equal(login.status, 303, 'redirects to the allowed from')
  t.equal(login.headers.get('location'), 'http://127.0.0.1/after')
  t.ok(c.jar.cookies.get('JWT'), 'session cookie set')
  cookieLifetime(t, login, true, 'sess=1')
  const me = await whoAmI(c)
  t.equal(me.status, 200)
  const user = await me.json() as { name: string; id: string }
  t.equal(user.name, 'alice')
  t.match(user.id, /^email_[0-9a-f]{40}$/)

  const again = await client(base).fetch(`/auth/email/login?token=${token}`)
  t.equal(again.status, 401, 'the same token a second time is refused')
  t.same(await again.json(), { error: 'unauthorized', details: 'confirmation token already used', code: 'GATEHOUSE_ALREADY_USED' })
})

t.test('the user id follows the address, the name is the one asked for', async (t) => {
  const ids = new Set<string>()
  for (const user of ['alice', 'Alice B.']) {
    const c = client(base)
    const { token } = await requestMail(c, 'email', { user, address: 'same@example.com' })
    const r = await c.fetch(`/auth/email/login?token=${token}`)
    t.equal(r.status, 200, 'no from: the user comes back as JSON')
    cookieLifetime(t, r, false, 'without sess=1')
    const u = await r.json() as { name: string; id: string }
    t.equal(u.name, user)
    ids.add(u.id)
  }
  t.equal(ids.size, 1)
})

t.test('an expired confirmation token is refused (fake clock)', async (t) => {
  const c = client(base)
  const { token } = await requestMail(c, 'short', { user: 'late', address: 'late@example.com' })
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  clock.tick(61_000)
  const r = await c.fetch(`/auth/short/login?token=${token}`)
  t.equal(r.status, 401)
  t.same(await r.json(), { error: 'unauthorized', details: 'token expired', code: 'GATEHOUSE_TOKEN_EXPIRED' })
  t.equal(c.jar.get('JWT'), undefined)
})

t.test('default lifetime is 30 minutes', async (t) => {
  const c = client(base)
  const { token } = await requestMail(c, 'email', { user: 'slow', address: 'slow@example.com' })
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  clock.tick(29 * 60_000)
  t.equal((await c.fetch(`/auth/email/login?token=${token}`)).status, 200, 'valid at 29 minutes')
  const { token: second } = await requestMail(c, 'email', { user: 'slow', address: 'slow@example.com' })
  clock.tick(30 * 60_000 + 1000)
  const late = await c.fetch(`/auth/email/login?token=${second}`)
  t.equal(late.status, 401, 'expired after 30 minutes')
  t.equal((await late.json() as { code: string }).code, 'GATEHOUSE_TOKEN_EXPIRED')
})

t.test('STARTTLS with SMTP AUTH delivers; certificate and password failures are clear 502s', { skip: noTls ?? false }, async (t) => {
  const c = client(base)
  const { mail, token } = await requestMail(c, 'secure', { user: 'tls', address: 'tls@example.com' }, authSink)
  t.equal(mail.user, 'mailer', 'authenticated as the configured user')
  t.equal(mail.body, `token ${token}`)

  const before = authSink.mails.length
  let mark = logs.length
  const untrusted = await c.fetch('/auth/untrusted/login?user=a&address=a@example.com')
  t.equal(untrusted.status, 502)
  t.same(await untrusted.json(), MAIL_FAILED, 'the body names the peer, nothing of its address or reply')
  t.match(logsSince(mark), [/^\[WARN\] verified provider untrusted: send failed \(failed\): SMTP 127\.0\.0\.1:\d+: .*certificate/i], 'the TLS failure is logged, once')

  mark = logs.length
  const wrong = await c.fetch('/auth/wrongpw/login?user=a&address=a@example.com')
  t.equal(wrong.status, 502)
  t.same(await wrong.json(), MAIL_FAILED)
  t.match(logsSince(mark), [/send failed \(failed\): .*535/], 'the refusal is logged, once')
  t.notOk(logsSince(mark).some((l) => l.includes('nope')), 'the password is not logged')
  t.equal(authSink.mails.length, before, 'nothing delivered')
})

t.test('HTML template: values escaped, content type and charset as configured', async (t) => {
  const c = client(base)
  const { mail, token } = await requestMail(c, 'html', { user: 'Zoë <script>x</script>', address: 'zoe@example.com' })
  t.match(mail.headers['content-type'], /^text\/html; charset=iso-8859-1/)
  t.equal(mail.body, `<p>Hi Zoë &lt;script&gt;x&lt;/script&gt;</p><a href="https://x.test/?t=${token}">go</a>`)
})

t.test('HTML mail from a template without tags: values still escaped', async (t) => {
  const c = client(base)
  const { mail, token } = await requestMail(c, 'htmlbody', { user: '<a href="https://evil.test/">Click</a>', address: 'zoe@example.com' })
  t.match(mail.headers['content-type'], /^text\/html/)
  t.equal(mail.body, `Hi &lt;a href=&quot;https://evil.test/&quot;&gt;Click&lt;/a&gt;, your code: ${token}`)
})

t.test('template injection in user is rendered literally', async (t) => {
  const c = client(base)
  const n = sentByFunc.length
  const r = await c.fetch('/auth/func/login?' + new URLSearchParams({ user: '{{.Token}} {{ .Site }} {{.Address}}', address: 'x@example.com', aud: 's' }))
  t.equal(r.status, 200)
  t.equal(sentByFunc.length, n + 1)
  const text = sentByFunc[n]!.text
  t.match(text, /^code [A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+ for \{\{\.Token\}\} \{\{ \.Site \}\} \{\{\.Address\}\}$/)
  t.equal(text.match(/\./g)!.length, 2 + 3, 'one token, placeholders left as typed')
})

t.test('bad inputs: 4xx JSON, nothing sent, nothing signed in', async (t) => {
  const c = client(base)
  const conns = sink.connections
  const funcSent = sentByFunc.length
  const BAD = 'GATEHOUSE_BAD_REQUEST'
  const cases: Array<[string, number, string, RegExp]> = [
    ['/auth/email/login?address=a@example.com', 400, BAD, /user is required/],
    ['/auth/email/login?user=alice', 400, BAD, /address is required/],
    ['/auth/email/login?user=&address=a@example.com', 400, BAD, /user is required/],
    ['/auth/email/login?user=a&user=b&address=a@example.com', 400, BAD, /user must be given once/],
    ['/auth/email/login?user=a%0d%0aBcc:%20x@evil.test&address=a@example.com', 400, BAD, /control characters/],
    ['/auth/email/login?user=%20%20&address=a@example.com', 400, BAD, /only spaces/],
    [`/auth/email/login?user=${'u'.repeat(129)}&address=a@example.com`, 400, BAD, /too long/],
    ['/auth/email/login?user=a&address=a@example.com,b@example.com', 400, BAD, /not a single mail address/],
    ['/auth/email/login?user=a&address=%22Eve%22%20%3Ceve@example.com%3E', 400, BAD, /not a single mail address/],
    ['/auth/email/login?user=a&address=no-at-sign', 400, BAD, /not a single mail address/],
    ['/auth/email/login?user=a&address=a@example.com&sess=bogus', 400, BAD, /sess must be 1, 0, true or false/],
    ['/auth/email/login?user=a&address=a@example.com&session=yes', 400, BAD, /session must be 1, 0, true or false/],
    ['/auth/email/login?user=a&address=a@example.com&sess=1&sess=1', 400, BAD, /sess must be 1, 0, true or false/],
    ['/auth/email/login?token=not-a-token', 400, BAD, /malformed confirmation token/],
    ['/auth/email/login?token=a.b.c', 401, 'GATEHOUSE_TOKEN_INVALID', /malformed token|invalid token/],
    ['/auth/email/login?token=', 400, BAD, /malformed confirmation token/],
    ['/auth/func/login?user=a&address=%0a', 400, BAD, /control characters/],
    ['/auth/picky/login?user=a&address=a@example.com', 400, BAD, /only example\.org addresses/]
  ]
  for (const [path, status, code, details] of cases) {
    const r = await c.fetch(path)
    t.equal(r.status, status, path)
    t.match(r.headers.get('content-type'), /^application\/json/)
    const body = await r.json() as { error: string; details: string; code: string }
    t.equal(body.code, code, path)
    t.match(body.details, details, path)
    t.notMatch(JSON.stringify(body), /at .*\.ts:\d+/, 'no stack trace')
  }
  t.equal(sink.connections, conns, 'the SMTP server was never contacted')
  t.equal(sentByFunc.length, funcSent)
  t.equal(c.jar.get('JWT'), undefined)
})

t.test('a recipient refused by the SMTP server: 400, the server\'s reply in the log only', async (t) => {
  const c = client(base)
  const before = sink.mails.length
  const mark = logs.length
  const r = await c.fetch('/auth/email/login?user=nobody&address=nobody@example.com')
  t.equal(r.status, 400)
  t.same(await r.json(), { error: 'address rejected', details: 'the mail server refused this recipient', code: 'GATEHOUSE_BAD_REQUEST' })
  t.match(logsSince(mark), [/send failed \(rejected\): the mail server refused this recipient \(.*550 5\.1\.1 no such user here\)/])
  t.equal(sink.mails.length, before)
})

t.test('token kinds cannot stand in for each other', async (t) => {
  const c = client(base)
  // A session token as a confirmation token.
  const { token } = await requestMail(c, 'email', { user: 'kim', address: 'kim@example.com' })
  t.equal((await c.fetch(`/auth/email/login?token=${token}`)).status, 200)
  const session = c.jar.get('JWT')!
  const r1 = await client(base).fetch(`/auth/email/login?token=${session}`)
  t.equal(r1.status, 401)
  t.same(await r1.json(), { error: 'unauthorized', details: 'invalid token', code: 'GATEHOUSE_TOKEN_INVALID' })
  // A confirmation token as a session token (query, header).
  const { token: confirm } = await requestMail(client(base), 'email', { user: 'kim', address: 'kim@example.com' })
  t.equal((await client(base).fetch(`/auth/user?token=${confirm}`)).status, 401)
  t.equal((await client(base).fetch('/auth/user', { headers: { 'x-jwt': confirm } })).status, 401)
  // A confirmation token of another verified provider.
  const other = client(base)
  const funcSent = sentByFunc.length
  await other.fetch('/auth/func/login?user=kim&address=kim@example.com')
  const funcToken = TOKEN_IN_MAIL.exec(sentByFunc[funcSent]!.text)![1]!
  const r2 = await other.fetch(`/auth/email/login?token=${funcToken}`)
  t.equal(r2.status, 401)
  t.same(await r2.json(), { error: 'unauthorized', details: 'confirmation token of another provider', code: 'GATEHOUSE_TOKEN_INVALID' })
  t.equal((await other.fetch(`/auth/func/login?token=${funcToken}`)).status, 200, 'and it still works where it belongs')
  // The confirmation token was never consumed by the failed attempts.
  t.equal((await client(base).fetch(`/auth/email/login?token=${confirm}`)).status, 200)
})

t.test('a from outside the allowed origins is dropped', async (t) => {
  const c = client(base)
  const { token } = await requestMail(c, 'email', { user: 'r', address: 'r@example.com', from: 'https://evil.test/steal' })
  const r = await c.fetch(`/auth/email/login?token=${token}`)
  t.equal(r.status, 200)
  t.equal(r.headers.get('location'), null)
})

t.test('SMTP server down: 503 naming the peer, not its address; the cause logged; works again when it is back', async (t) => {
  const c = client(base)
  const mark = logs.length
  const r = await c.fetch('/auth/down/login?user=a&address=a@example.com')
  t.equal(r.status, 503)
  t.same(await r.json(), MAIL_UNAVAILABLE)
  t.match(logsSince(mark), [new RegExp(`send failed \\(unavailable\\): SMTP 127\\.0\\.0\\.1:${downPort}: .*ECONNREFUSED`)])

  await flaky.stop()
  const r2 = await c.fetch('/auth/flaky/login?user=a&address=a@example.com')
  t.equal(r2.status, 503)
  t.equal((await r2.json() as { code: string }).code, 'GATEHOUSE_UNAVAILABLE')
  await flaky.start()
  const { token } = await requestMail(c, 'flaky', { user: 'a', address: 'a@example.com' }, flaky)
  t.equal((await c.fetch(`/auth/flaky/login?token=${token}`)).status, 200)
})

t.test('a host sender that throws: 502 without its internals', async (t) => {
  const r = await client(base).fetch('/auth/leaky/login?user=a&address=a@example.com')
  t.equal(r.status, 502)
  t.same(await r.json(), { error: 'sender failed', details: 'the confirmation message could not be sent', code: 'GATEHOUSE_UPSTREAM' })
})

t.test('a sender that never answers: 503 at the send deadline, not a request held open', async (t) => {
  // The sender never settles: only the 200 ms send deadline can answer (a request held open fails on the file's
  // time limit).
  const started = Date.now()
  const r = await client(base).fetch('/auth/hung/login?user=a&address=a@example.com')
  t.equal(r.status, 503)
  t.same(await r.json(), { error: 'sender unavailable', details: 'the confirmation message could not be sent now; try again later', code: 'GATEHOUSE_UNAVAILABLE' })
  // A lower bound only (load makes it later, never earlier).
  t.ok(Date.now() - started >= 190, 'answered at the deadline')
})

t.test('callback and logout', async (t) => {
  const c = client(base)
  const cb = await c.fetch('/auth/email/callback')
  t.equal(cb.status, 404)
  t.same(await cb.json(), { error: 'not found', details: 'provider "email" has no callback', code: 'GATEHOUSE_NOT_FOUND' })
  const { token } = await requestMail(c, 'email', { user: 'o', address: 'o@example.com' })
  await c.fetch(`/auth/email/login?token=${token}`)
  t.ok(c.jar.get('JWT'))
  const out = await c.fetch('/auth/email/logout')
  t.same(await out.json(), { status: 'logged out' })
  t.equal(c.jar.get('JWT'), undefined)
})

t.test('session-only cookies: session or sess (1 or true), asked for when the mail is sent or when the link is opened', async (t) => {
  // [flag on the send step, flag on the confirm step, session-only expected]
  const cases: Array<[string, string, boolean]> = [
    ['sess=1', '', true],
    ['session=1', '', true],
    ['sess=true', '', true],
    ['session=true', '', true],
    ['', 'sess=1', true],
    ['', 'session=1', true],
    ['', 'sess=true', true],
    ['sess=1', 'sess=0', true],
    ['', '', false],
    ['sess=0', '', false],
    ['session=false', 'sess=0', false]
  ]
  for (const [atSend, atConfirm, sessionOnly] of cases) {
    const what = `send "${atSend}", confirm "${atConfirm}"`
    const c = client(base)
    const n = sentByFunc.length
    const sent = await c.fetch(`/auth/func/login?user=s&address=s@example.com&${atSend}`)
    t.equal(sent.status, 200, what)
    t.equal(sessionCookies(sent).length, 0, 'sending signs nobody in')
    const token = TOKEN_IN_MAIL.exec(sentByFunc[n]!.text)![1]!
    const login = await c.fetch(`/auth/func/login?token=${token}&${atConfirm}`)
    t.equal(login.status, 200, what)
    cookieLifetime(t, login, sessionOnly, what)
    t.equal((await whoAmI(c)).status, 200, `${what}: the session works`)
  }
})

t.test('a malformed session flag: 400, nothing sent, the confirmation token not spent', async (t) => {
  const c = client(base)
  const n = sentByFunc.length
  const bad = await c.fetch('/auth/func/login?user=s&address=s@example.com&sess=bogus')
  t.equal(bad.status, 400)
  t.same(await bad.json(), { error: 'bad request', details: 'sess must be 1, 0, true or false', code: 'GATEHOUSE_BAD_REQUEST' })
  t.equal(sentByFunc.length, n, 'nothing sent')

  t.equal((await c.fetch('/auth/func/login?user=s&address=s@example.com')).status, 200)
  const token = TOKEN_IN_MAIL.exec(sentByFunc[n]!.text)![1]!
  for (const flag of ['sess=bogus', 'session=2']) {
    const r = await c.fetch(`/auth/func/login?token=${token}&${flag}`)
    t.equal(r.status, 400, flag)
    t.equal((await r.json() as { code: string }).code, 'GATEHOUSE_BAD_REQUEST')
    t.equal(sessionCookies(r).length, 0, 'no session')
  }
  const ok = await c.fetch(`/auth/func/login?token=${token}&sess=1`)
  t.equal(ok.status, 200, 'the token still works')
  cookieLifetime(t, ok, true, 'after the refused attempts')
})

t.test('heloName (go-pkgz/auth HELOHost) is the name the server sees in EHLO; a bad one is an OptionsError', async (t) => {
  const named = smtp({ port: sink.port, heloName: 'mail.gatehouse.example' })
  const got = sink.next()
  await named.send('helo@example.com', 'hello')
  t.equal((await got).helo, 'mail.gatehouse.example', 'EHLO with the configured name')
  const plain = smtp({ port: sink.port })
  const dflt = sink.next()
  await plain.send('helo@example.com', 'hello')
  const dfltName = (await dflt).helo
  // nodemailer's default: the machine's name when it is a full domain name, else the local address as a literal.
  t.ok(dfltName === hostname() || /^\[[0-9a-f:.]+\]$/i.test(dfltName), `without it, nodemailer's default (${dfltName})`)
  for (const bad of ['mail.example.com\r\nMAIL FROM:<x@y>', 'two words', '', '-dash.example', 'x'.repeat(254), 42]) {
    t.throws(() => new SmtpSender({ host: '127.0.0.1', from: 'a@example.com', heloName: bad as string }), { code: 'GATEHOUSE_OPTION', option: 'SmtpSender.heloName' }, JSON.stringify(bad))
  }
  t.doesNotThrow(() => new SmtpSender({ host: '127.0.0.1', from: 'a@example.com', heloName: '[192.0.2.1]' }).close(), 'an address literal')
})
