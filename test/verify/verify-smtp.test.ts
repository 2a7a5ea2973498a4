import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { freePort } from '../state-store/redis-server.js'
import { authPlugin } from '../../plugins/auth.js'
import { addVerifProvider, SmtpSender, SendError } from '../../providers/verify/index.js'
import { client, listen, type Client } from '../helpers/client.js'
import { MailSink, selfSignedCert } from './mail-sink.js'

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
const downPort = await freePort()

const { app, base } = await listen(async (app) => {
  await app.register(authPlugin, { secret: () => 'verify-test-secret-0123456789', url: 'http://127.0.0.1' })
  addVerifProvider(app.auth, 'email', TEMPLATE, smtp({ port: sink.port }))
  addVerifProvider(app.auth, 'short', 'token {{.Token}}', smtp({ port: sink.port }), { tokenTtl: '1m' })
  addVerifProvider(app.auth, 'html', '<p>Hi {{.User}}</p><a href="https://x.test/?t={{.Token}}">go</a>',
    smtp({ port: sink.port, contentType: 'text/html', charset: 'iso-8859-1' }))
  // A template without a tag, mailed as HTML: the body is still HTML, so values must still be escaped.
  addVerifProvider(app.auth, 'htmlbody', 'Hi {{.User}}, your code: {{.Token}}', smtp({ port: sink.port, contentType: 'text/html' }))
  addVerifProvider(app.auth, 'secure', 'token {{.Token}}',
    smtp({ port: authSink.port, startTLS: true, insecureSkipVerify: true, username: 'mailer', password: 'mail-secret' }))
  addVerifProvider(app.auth, 'untrusted', 'token {{.Token}}', smtp({ port: authSink.port, startTLS: true, username: 'mailer', password: 'mail-secret' }))
  addVerifProvider(app.auth, 'wrongpw', 'token {{.Token}}', smtp({ port: authSink.port, startTLS: true, insecureSkipVerify: true, username: 'mailer', password: 'nope' }))
  addVerifProvider(app.auth, 'down', 'token {{.Token}}', smtp({ port: downPort }))
  addVerifProvider(app.auth, 'flaky', 'token {{.Token}}', smtp({ port: flaky.port }))
  addVerifProvider(app.auth, 'func', 'code {{.Token}} for {{.User}}', (address, text) => { sentByFunc.push({ address, text }) })
  addVerifProvider(app.auth, 'leaky', 'token {{.Token}}', () => { throw new Error('db password=hunter2 refused') })
  addVerifProvider(app.auth, 'hung', 'token {{.Token}}', () => new Promise<void>(() => {}), { sendTimeout: '200ms' })
  addVerifProvider(app.auth, 'picky', 'token {{.Token}}', { send () { throw new SendError('rejected', 'only example.org addresses') } })
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
  t.equal(login.status, 302, 'redirects to the allowed from')
  t.equal(login.headers.get('location'), 'http://127.0.0.1/after')
  const jwt = c.jar.cookies.get('JWT')!
  t.ok(jwt, 'session cookie set')
  t.notOk(jwt.attrs['max-age'], 'sess=1 gives a session-only cookie')
  const me = await whoAmI(c)
  t.equal(me.status, 200)
  const user = await me.json() as { name: string; id: string }
  t.equal(user.name, 'alice')
  t.match(user.id, /^email_[0-9a-f]{40}$/)

  const again = await client(base).fetch(`/auth/email/login?token=${token}`)
  t.equal(again.status, 401, 'the same token a second time is refused')
  t.same(await again.json(), { error: 'unauthorized', details: 'confirmation token already used' })
})

t.test('the user id follows the address, the name is the one asked for', async (t) => {
  const ids = new Set<string>()
  for (const user of ['alice', 'Alice B.']) {
    const c = client(base)
    const { token } = await requestMail(c, 'email', { user, address: 'same@example.com' })
    const r = await c.fetch(`/auth/email/login?token=${token}`)
    t.equal(r.status, 200, 'no from: the user comes back as JSON')
    const u = await r.json() as { name: string; id: string }
    t.equal(u.name, user)
    ids.add(u.id)
    t.notOk(c.jar.cookies.get('JWT')!.attrs['max-age'] === undefined, 'persistent cookie without sess=1')
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
  t.same(await r.json(), { error: 'unauthorized', details: 'token expired' })
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
  t.equal((await c.fetch(`/auth/email/login?token=${second}`)).status, 401, 'expired after 30 minutes')
})

t.test('STARTTLS with SMTP AUTH delivers; certificate and password failures are clear 502s', { skip: noTls ?? false }, async (t) => {
  const c = client(base)
  const { mail, token } = await requestMail(c, 'secure', { user: 'tls', address: 'tls@example.com' }, authSink)
  t.equal(mail.user, 'mailer', 'authenticated as the configured user')
  t.equal(mail.body, `token ${token}`)

  const before = authSink.mails.length
  const untrusted = await c.fetch('/auth/untrusted/login?user=a&address=a@example.com')
  t.equal(untrusted.status, 502)
  const ub = await untrusted.json() as { error: string; details: string }
  t.equal(ub.error, 'sender failed')
  t.match(ub.details, /^SMTP 127\.0\.0\.1:\d+: .*certificate/i, 'names the TLS failure')

  const wrong = await c.fetch('/auth/wrongpw/login?user=a&address=a@example.com')
  t.equal(wrong.status, 502)
  const wb = await wrong.json() as { error: string; details: string }
  t.match(wb, { error: 'sender failed', details: /535/ })
  t.notMatch(wb.details, /nope/, 'the password is not echoed')
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
  const cases: Array<[string, number, RegExp]> = [
    ['/auth/email/login?address=a@example.com', 400, /user is required/],
    ['/auth/email/login?user=alice', 400, /address is required/],
    ['/auth/email/login?user=&address=a@example.com', 400, /user is required/],
    ['/auth/email/login?user=a&user=b&address=a@example.com', 400, /user must be given once/],
    ['/auth/email/login?user=a%0d%0aBcc:%20x@evil.test&address=a@example.com', 400, /control characters/],
    ['/auth/email/login?user=%20%20&address=a@example.com', 400, /only spaces/],
    [`/auth/email/login?user=${'u'.repeat(129)}&address=a@example.com`, 400, /too long/],
    ['/auth/email/login?user=a&address=a@example.com,b@example.com', 400, /not a single mail address/],
    ['/auth/email/login?user=a&address=%22Eve%22%20%3Ceve@example.com%3E', 400, /not a single mail address/],
    ['/auth/email/login?user=a&address=no-at-sign', 400, /not a single mail address/],
    ['/auth/email/login?token=not-a-token', 400, /malformed confirmation token/],
    ['/auth/email/login?token=a.b.c', 401, /malformed token|invalid token/],
    ['/auth/email/login?token=', 400, /malformed confirmation token/],
    ['/auth/func/login?user=a&address=%0a', 400, /control characters/],
    ['/auth/picky/login?user=a&address=a@example.com', 400, /only example\.org addresses/]
  ]
  for (const [path, status, details] of cases) {
    const r = await c.fetch(path)
    t.equal(r.status, status, path)
    t.match(r.headers.get('content-type'), /^application\/json/)
    const body = await r.json() as { error: string; details: string }
    t.match(body.details, details, path)
    t.notMatch(JSON.stringify(body), /at .*\.ts:\d+/, 'no stack trace')
  }
  t.equal(sink.connections, conns, 'the SMTP server was never contacted')
  t.equal(sentByFunc.length, funcSent)
  t.equal(c.jar.get('JWT'), undefined)
})

t.test('a recipient refused by the SMTP server: 400 naming the refusal', async (t) => {
  const c = client(base)
  const before = sink.mails.length
  const r = await c.fetch('/auth/email/login?user=nobody&address=nobody@example.com')
  t.equal(r.status, 400)
  t.same(await r.json(), {
    error: 'address rejected',
    details: "recipient refused by the mail server: Can't send mail - all recipients were rejected: 550 5.1.1 no such user here"
  })
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
  t.same(await r1.json(), { error: 'unauthorized', details: 'invalid token' })
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
  t.same(await r2.json(), { error: 'unauthorized', details: 'confirmation token of another provider' })
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

t.test('SMTP server down: 503 naming the failure, no stack; works again when it is back', async (t) => {
  const c = client(base)
  const r = await c.fetch('/auth/down/login?user=a&address=a@example.com')
  t.equal(r.status, 503)
  const body = await r.json() as { error: string; details: string }
  t.equal(body.error, 'sender unavailable')
  t.match(body.details, new RegExp(`^SMTP 127\\.0\\.0\\.1:${downPort}: .*ECONNREFUSED`))

  await flaky.stop()
  const r2 = await c.fetch('/auth/flaky/login?user=a&address=a@example.com')
  t.equal(r2.status, 503)
  await flaky.start()
  const { token } = await requestMail(c, 'flaky', { user: 'a', address: 'a@example.com' }, flaky)
  t.equal((await c.fetch(`/auth/flaky/login?token=${token}`)).status, 200)
})

t.test('a host sender that throws: 502 without its internals', async (t) => {
  const r = await client(base).fetch('/auth/leaky/login?user=a&address=a@example.com')
  t.equal(r.status, 502)
  t.same(await r.json(), { error: 'sender failed', details: 'the confirmation message could not be sent' })
})

t.test('a sender that never answers: 503 at the send deadline, not a request held open', async (t) => {
  const started = Date.now()
  const r = await client(base).fetch('/auth/hung/login?user=a&address=a@example.com', { signal: AbortSignal.timeout(5000) })
  t.equal(r.status, 503)
  t.same(await r.json(), { error: 'sender unavailable', details: 'no answer within 200 ms' })
  t.ok(Date.now() - started < 2000, 'answered at the deadline')
})

t.test('callback and logout', async (t) => {
  const c = client(base)
  const cb = await c.fetch('/auth/email/callback')
  t.equal(cb.status, 404)
  const { token } = await requestMail(c, 'email', { user: 'o', address: 'o@example.com' })
  await c.fetch(`/auth/email/login?token=${token}`)
  t.ok(c.jar.get('JWT'))
  const out = await c.fetch('/auth/email/logout')
  t.same(await out.json(), { status: 'logged out' })
  t.equal(c.jar.get('JWT'), undefined)
})
