/**
 * The demo server over real HTTP: defaults, routes, toolkit headers, providers, the email sender's output,
 * login failures sent back to the page, and one-line start-up errors.
 */
import t from 'tap'
import { gunzipSync } from 'node:zlib'
import { generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { get, type IncomingHttpHeaders } from 'node:http'
import { readConfig } from '../../example/config.js'
import { runDemo } from '../../example/server.js'
import { client } from '../helpers/client.js'
import { Browser } from '../helpers/oauth2-browser.js'
import { CapturedIO, demoCaptchaToken, freePort, isListening, occupyPort, startDemo } from '../helpers/demo.js'
import { MailSink } from '../helpers/mail-sink.js'
import { simpleSamlMissing } from '../../example/simplesamlphp.js'

/** `saml` is on where SimpleSAMLphp is installed (the demo starts one), off with a warning elsewhere. */
const SAML = simpleSamlMissing() === undefined ? ['saml'] : []

t.test('defaults: ports 8080/8084/9096, bolt avatar store, random secret with a warning', async (t) => {
  const a = readConfig({}, ['github'])
  const b = readConfig({}, ['github'])
  t.equal(a.port, 8080)
  t.equal(a.devPort, 8084)
  t.equal(a.customPort, 9096)
  t.equal(a.url, undefined, 'public URL follows the bound port')
  t.equal(a.avatarStore, 'bolt://./var/avatars.db')
  t.not(a.secret, b.secret, 'a new random secret per start')
  t.ok(a.secret.length >= 32)
  t.match(a.warnings, [/AUTH_SECRET is not set/])
  t.same(a.builtins, [])
  t.equal(a.oidc, undefined)
  t.equal(a.telegram, undefined)
  t.equal(a.smtp, undefined)
})

t.test('environment switches providers on and reports half-configured ones', async (t) => {
  const c = readConfig({
    AUTH_SECRET: 's3cret-demo-config-0123456789abcdef', GITHUB_CID: 'id', GITHUB_CSEC: 'sec', GOOGLE_CID: 'only-id', OIDC_ISSUER: 'http://127.0.0.1:1',
    TELEGRAM_TOKEN: '1:abc', TELEGRAM_API_URL: 'http://127.0.0.1:2', SMTP_HOST: 'mail', SMTP_PORT: '2525', AUTH_URL: 'https://demo.example/'
  }, ['github', 'google'])
  t.equal(c.secret, 's3cret-demo-config-0123456789abcdef')
  t.same(c.warnings.length, 2)
  t.match(c.warnings.join('\n'), /google is off: GOOGLE_CID and GOOGLE_CSEC/)
  t.match(c.warnings.join('\n'), /oidc is off/)
  t.same(c.builtins, [{ name: 'github', cid: 'id', csecret: 'sec' }])
  t.same(c.telegram, { token: '1:abc', apiUrl: 'http://127.0.0.1:2' })
  t.match(c.smtp, { host: 'mail', port: 2525 })
  t.equal(c.url, 'https://demo.example')
})

t.test('bad variables are one-line errors naming the variable', async (t) => {
  for (const [env, re] of [
    [{ PORT: 'eighty' }, /^demo: PORT must be a port number 0\.\.65535, got "eighty"$/],
    [{ PORT: '70000' }, /^demo: PORT must be a port number/],
    [{ DEV_AUTH_PORT: '-1' }, /^demo: DEV_AUTH_PORT must be a port number/],
    [{ AUTH_URL: 'localhost:8080' }, /^demo: AUTH_URL must be an http\(s\) origin/],
    [{ SMTP_HOST: 'mail' }, /^demo: SMTP_HOST and SMTP_PORT must be set together$/],
    [{ PORT: '0', DEV_AUTH_PORT: '0', CUSTOM_AUTH_PORT: '0', AVATAR_STORE: 'ftp://x/y' }, /^demo: .*avatar\.store.*ftp/]
  ] as const) {
    const io = new CapturedIO()
    t.equal(await runDemo(env, io), undefined, JSON.stringify(env))
    t.equal(io.errLines.length, 1)
    t.match(io.errLines[0], re)
  }
})

t.test('a short AUTH_SECRET stops the start with one line naming the secret option', async (t) => {
  const io = new CapturedIO()
  t.equal(await runDemo({ PORT: '0', DEV_AUTH_PORT: '0', CUSTOM_AUTH_PORT: '0', AVATAR_STORE: 'memory://', AUTH_SECRET: 'too-short' }, io), undefined)
  t.equal(io.errLines.length, 1)
  t.match(io.errLines[0], /^demo: fastify-gatehouse: option "secret" for the default audience is 9 bytes; at least 32 are needed, make one with `openssl rand -base64 48`$/)
})

t.test('a port already in use is one line naming the port; nothing is left running', async (t) => {
  for (const variable of ['PORT', 'DEV_AUTH_PORT', 'CUSTOM_AUTH_PORT']) {
    const busy = await occupyPort()
    const others = { PORT: String(await freePort()), DEV_AUTH_PORT: String(await freePort()), CUSTOM_AUTH_PORT: String(await freePort()) }
    const io = new CapturedIO()
    const demo = await runDemo({ ...others, [variable]: String(busy.port), AVATAR_STORE: 'memory://' }, io)
    await busy.close()
    t.equal(demo, undefined, `${variable} busy: no demo`)
    t.same(io.errLines, [`demo: port ${busy.port} is already in use (set ${variable} to another port)`])
    for (const [name, port] of Object.entries(others)) {
      if (name !== variable) t.notOk(await isListening(Number(port)), `${name} ${port} released after the failed start`)
    }
  }
})

t.test('without SimpleSAMLphp the demo starts without saml and says how to install it', async (t) => {
  const before = process.env.SIMPLESAMLPHP_WWW
  process.env.SIMPLESAMLPHP_WWW = '/nonexistent/simplesamlphp/www'
  try {
    const { demo, io, stop } = await startDemo({ AUTH_SECRET: 'demo-test-secret-0123456789abcdef' })
    t.teardown(stop)
    t.notOk(demo.providers.includes('saml'))
    t.ok(io.errLines.concat(io.outLines).some((l) => /provider saml is off: SimpleSAMLphp is not installed; to try SAML: apt-get install -y --no-install-recommends simplesamlphp /.test(l)), 'says how to install it')
  } finally {
    if (before === undefined) delete process.env.SIMPLESAMLPHP_WWW
    else process.env.SIMPLESAMLPHP_WWW = before
  }
})

t.test('a running demo', async (t) => {
  const { demo, io, stop } = await startDemo({ AUTH_SECRET: 'demo-test-secret-0123456789abcdef', ADMIN_PASSWD: 'basic-pw' })
  t.teardown(stop)
  const c = client(`http://127.0.0.1:${demo.port}`)
  t.equal(demo.url, `http://localhost:${demo.port}`)
  t.same(demo.providers, ['local', 'dev', 'email', 'emailcode', 'custom', 'passkey', 'totp', ...SAML])
  t.match(io.outLines, [/./], 'prints something')
  t.ok(io.outLines.includes(`demo: open ${demo.url}/`), 'prints where to open it')
  t.ok(io.outLines.includes(`demo: providers on: ${['local', 'dev', 'email', 'emailcode', 'custom', 'passkey', 'totp', ...SAML].join(', ')}`), 'prints the providers')

  t.test('/ serves the page, gzipped when asked, with app info and a request id', async (t) => {
    const plain = await c.fetch('/')
    t.equal(plain.status, 200)
    t.match(plain.headers.get('content-type'), /^text\/html/)
    t.match(await plain.text(), /<title>fastify-gatehouse demo<\/title>/)
    t.equal(plain.headers.get('app-name'), 'gatehouse-demo')
    t.match(plain.headers.get('app-version'), /^\d+\.\d+\.\d+/)
    t.match(plain.headers.get('x-request-id'), /^[0-9a-f-]{36}$/)
    const raw = await fetch(`${c.base}/app.js`, { headers: { 'accept-encoding': 'gzip' } })
    t.equal(raw.headers.get('content-encoding'), 'gzip')
    t.match(await raw.text(), /X-XSRF-TOKEN/, 'fetch gunzips it')
    const page = await rawGet(`${c.base}/app.js`, { 'accept-encoding': 'gzip' })
    t.match(gunzipSync(page.body).toString('utf8'), /X-XSRF-TOKEN/, 'the bytes on the wire are gzip')
    t.equal((await c.fetch('/style.css')).headers.get('content-type'), 'text/css; charset=utf-8')
  })

  t.test('/ping, /api/open, /health, /metrics, /bench', async (t) => {
    const ping = await c.fetch('/ping')
    t.equal(ping.status, 200)
    t.equal(await ping.text(), 'pong')
    const open = await c.fetch('/api/open')
    t.equal(open.status, 200)
    t.same(await open.json(), { message: 'open to everyone' })
    const health = await c.fetch('/health')
    t.equal(health.status, 200)
    t.same(await health.json(), [{ name: 'dev-oauth2-server', status: 'ok' }, { name: 'local-oauth2-server', status: 'ok' }])
    const metrics = await c.fetch('/metrics', { headers: { 'x-forwarded-for': '8.8.8.8' } })
    t.equal(metrics.status, 200, 'loopback peer, forwarded header ignored')
    t.type((await metrics.json()).memstats, 'object')
    const bench = await c.fetch('/bench')
    t.equal(bench.status, 200)
    const report = await bench.json()
    t.same(Object.keys(report), ['1min', '5min', '15min'])
    t.ok(report['1min'].requests > 0, 'requests were counted')
  })

  t.test('each request is logged once with method, path, status and request id', async (t) => {
    await c.fetch('/api/open?token=secret-value', { headers: { 'x-request-id': 'rid-log-1' } })
    const line = (await io.waitFor(/rid-log-1/)).input!
    t.match(line, /^GET - \/api\/open\?token=\S+ - 127\.0\.0\.1 - 200 /)
    t.notMatch(line, /secret-value/, 'the token in the query is masked')
    await c.fetch('/api/open', { headers: { 'x-request-id': 'rid-log-2', 'x-real-ip': '8.8.8.8' } })
    t.match((await io.waitFor(/rid-log-2/)).input, /^GET - \/api\/open - 8\.8\.8\.8 - 200 /, 'realIp: the address a proxy reported')
  })

  t.test('the request log never prints code, state, token or passwd values', async (t) => {
    const secrets = ['CODE-VALUE-1', 'STATE-VALUE-2', 'TOKEN-VALUE-3', 'PASSWD-VALUE-4']
    await c.fetch('/auth/dev/callback?code=CODE-VALUE-1&state=STATE-VALUE-2', { headers: { 'x-request-id': 'rid-secret-1' } })
    await c.fetch('/auth/email/login?token=TOKEN-VALUE-3', { headers: { 'x-request-id': 'rid-secret-2' } })
    await c.fetch('/auth/local/login?user=alice&passwd=PASSWD-VALUE-4', { headers: { 'x-request-id': 'rid-secret-3' } })
    for (const rid of ['rid-secret-1', 'rid-secret-2', 'rid-secret-3']) await io.waitFor(new RegExp(rid))
    // A whole dev OAuth2 login: its real code and state pass through the log too.
    const browser = new Browser()
    const page = await browser.navigate(`${demo.url}/auth/dev/login`)
    const nav = await browser.submitForm(page.url, page.body, { user: 'dora' })
    t.equal(nav.res.status, 200, 'signed in through dev')
    const callback = new URL(nav.hops.find((h) => h.url.includes('/auth/dev/callback'))!.url)
    const code = callback.searchParams.get('code')!
    const state = callback.searchParams.get('state')!
    t.ok(code.length > 8 && state.length > 8, 'a real code and state')
    await io.waitFor(/\/auth\/dev\/callback\?code=\*\*\*&state=\*\*\* - \S+ - 200 /)
    const log = [...io.outLines, ...io.errLines].join('\n')
    for (const value of [...secrets, code, state]) t.notOk(log.includes(value), `${value.slice(0, 12)}… not in the log`)
    t.match(log, /\/auth\/dev\/callback\?code=\*\*\*&state=\*\*\*/, 'the names stay, the values are masked')
  })

  t.test('API hooks: 401 signed out; roles and admin after direct login; basic auth admin', async (t) => {
    for (const path of ['/api/private', '/api/admin', '/api/editor']) t.equal((await c.fetch(path)).status, 401, path)
    const alice = client(c.base)
    const login = await alice.fetch('/auth/local/login', { method: 'POST', json: { user: 'alice', passwd: 'alice-secret', 'cf-turnstile-response': await demoCaptchaToken(c.base) } })
    t.equal(login.status, 200)
    t.match(await login.json(), { name: 'alice', role: 'editor' })
    const xsrf = { 'x-xsrf-token': alice.jar.get('XSRF-TOKEN')! }
    t.equal((await alice.fetch('/api/private', { headers: xsrf })).status, 200)
    t.equal((await alice.fetch('/api/editor', { headers: xsrf })).status, 200)
    t.equal((await alice.fetch('/api/admin', { headers: xsrf })).status, 403)
    t.equal((await alice.fetch('/api/private')).status, 401, 'no XSRF header, no access')
    const wrong = await c.fetch('/auth/local/login', { method: 'POST', json: { user: 'alice', passwd: 'nope', 'cf-turnstile-response': await demoCaptchaToken(c.base) } })
    t.equal(wrong.status, 403)
    const basic = { authorization: `Basic ${Buffer.from('admin:basic-pw').toString('base64')}` }
    t.equal((await c.fetch('/api/admin', { headers: basic })).status, 200, 'ADMIN_PASSWD enables basic auth')
  })

  t.test('email: the printed message carries a one-time token that signs in', async (t) => {
    const e = client(c.base)
    const sent = await e.fetch('/auth/email/login?user=erin&address=erin@example.com')
    t.equal(sent.status, 200)
    const [, token] = await io.waitFor(/^email to erin@example\.com: .*token=([\w-]+\.[\w-]+\.[\w-]+)/)
    const ok = await e.fetch(`/auth/email/login?token=${token}`)
    t.equal(ok.status, 200)
    t.match(await ok.json(), { name: 'erin', id: /^email_/ })
    t.equal((await e.fetch(`/auth/email/login?token=${token}`)).status, 401, 'second use refused')
  })

  t.test('e-mail code: the printed code signs in once; guesses are capped', async (t) => {
    const e = client(c.base)
    t.equal((await e.fetch('/auth/emailcode/login?user=erin&address=erin.code@example.com')).status, 200)
    const [, code] = await io.waitFor(/^email to erin\.code@example\.com: .*code: ([0-9]{6})/)
    const wrong = code === '000000' ? '000001' : '000000'
    t.equal((await e.fetch('/auth/emailcode/login', { method: 'POST', json: { address: 'erin.code@example.com', code: wrong } })).status, 403)
    const ok = await e.fetch('/auth/emailcode/login', { method: 'POST', json: { address: 'erin.code@example.com', code } })
    t.equal(ok.status, 200)
    t.match(await ok.json(), { name: 'erin', id: /^emailcode_/ })
    t.equal((await e.fetch('/auth/emailcode/login', { method: 'POST', json: { address: 'erin.code@example.com', code } })).status, 403, 'second use refused')
  })

  t.test('a failed provider login sends a browser back to the page; API clients get JSON', async (t) => {
    // fetch() may not send Sec-Fetch-Mode itself: a raw request stands for the browser's navigation.
    const nav = await rawGet(`${c.base}/auth/dev/callback?error=access_denied`, { 'sec-fetch-mode': 'navigate', accept: 'text/html' })
    t.equal(nav.status, 303)
    t.match(nav.headers.location, /^\/\?error=access%20denied/)
    const old = await rawGet(`${c.base}/auth/custom/callback?error=access_denied`, { accept: 'text/html,application/xhtml+xml' })
    t.equal(old.status, 303, 'Accept: text/html counts as a page load without Sec-Fetch-Mode')
    const user = await rawGet(`${c.base}/auth/user`, { 'sec-fetch-mode': 'navigate', accept: 'text/html' })
    t.equal(user.status, 401, '/auth/user opened by hand still shows its JSON')
    t.match(JSON.parse(user.body.toString()), { error: 'unauthorized', code: 'GATEHOUSE_UNAUTHORIZED' })
    const api = await c.fetch('/auth/dev/callback?error=access_denied')
    t.equal(api.status, 403)
    t.match(await api.json(), { error: 'access denied' })
  })
})

/** GET over node:http: exact headers on the wire and the raw (undecoded) body. */
async function rawGet (url: string, headers: Record<string, string>): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return await new Promise((resolve, reject) => {
    get(url, { headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }))
    }).on('error', reject)
  })
}

t.test('close() stops everything the demo started: its port, the dev and local OAuth2 servers', async (t) => {
  const { demo, stop } = await startDemo()
  const ports = [demo.port, Number(new URL(demo.devUrl).port), Number(new URL(demo.customUrl).port)]
  for (const port of ports) t.ok(await isListening(port), `${port} listening while running`)
  await stop()
  for (const port of ports) t.notOk(await isListening(port), `${port} released after close`)
  await demo.close() // a second Ctrl-C path: closing twice is harmless
})

t.test('with SMTP_HOST/SMTP_PORT the confirmation is mailed, not printed', async (t) => {
  const sink = new MailSink()
  await sink.start()
  t.teardown(() => sink.stop())
  const { demo, io, stop } = await startDemo({ SMTP_HOST: '127.0.0.1', SMTP_PORT: String(sink.port), SMTP_FROM: 'demo@gatehouse.test' })
  t.teardown(stop)
  const c = client(`http://127.0.0.1:${demo.port}`)
  const mailed = sink.next()
  t.equal((await c.fetch('/auth/email/login?user=sam&address=sam@example.com')).status, 200)
  const mail = await mailed
  t.same(mail.to, ['sam@example.com'])
  t.equal(mail.from, 'demo@gatehouse.test')
  const token = /token=([\w-]+\.[\w-]+\.[\w-]+)/.exec(mail.body)?.[1]
  t.ok(token, 'the mail carries the token link')
  t.notOk(io.outLines.some((l) => l.startsWith('email to')), 'nothing printed')
  const ok = await c.fetch(`/auth/email/login?token=${token!}`)
  t.equal(ok.status, 200)
  t.match(await ok.json(), { name: 'sam' })
})

t.test('an OIDC issuer that cannot be discovered leaves oidc off with a warning; the demo still starts', async (t) => {
  const dead = await freePort()
  const { demo, io, stop } = await startDemo({ OIDC_ISSUER: `http://127.0.0.1:${dead}`, OIDC_CLIENT_ID: 'id', OIDC_CLIENT_SECRET: 'secret' })
  t.teardown(stop)
  t.notOk(demo.providers.includes('oidc'))
  t.match(io.errLines.join('\n'), /demo: warning: provider oidc is off: .*discovery/)
  t.equal((await fetch(`http://127.0.0.1:${demo.port}/ping`)).status, 200)
})

t.test('built-ins and Apple come on from their variables; a login goes to the provider (not followed)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-apple-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const keyFile = join(dir, 'AuthKey_K1.p8')
  writeFileSync(keyFile, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }))
  const { demo, stop } = await startDemo({
    GITHUB_CID: 'gh-id', GITHUB_CSEC: 'gh-secret', DISCORD_CID: 'dc-id', DISCORD_CSEC: 'dc-secret',
    APPLE_CID: 'com.example.web', APPLE_TEAM_ID: 'TEAM1', APPLE_KEY_ID: 'K1', APPLE_KEY_FILE: keyFile
  })
  t.teardown(stop)
  t.same(demo.providers, ['local', 'dev', 'email', 'emailcode', 'custom', 'github', 'discord', 'apple', 'passkey', 'totp', ...SAML])
  const c = client(`http://127.0.0.1:${demo.port}`)
  const res = await c.fetch('/auth/github/login?from=' + encodeURIComponent(`${demo.url}/`))
  t.equal(res.status, 302)
  const to = new URL(res.headers.get('location')!)
  t.equal(to.origin + to.pathname, 'https://github.com/login/oauth/authorize')
  t.equal(to.searchParams.get('client_id'), 'gh-id')
  t.equal(to.searchParams.get('redirect_uri'), `${demo.url}/auth/github/callback`)
})

t.test('an Apple key that cannot be loaded is a one-line start-up error', async (t) => {
  const io = new CapturedIO()
  const ports = { PORT: String(await freePort()), CUSTOM_AUTH_PORT: String(await freePort()) }
  const env = { ...ports, DEV_AUTH_PORT: '0', AVATAR_STORE: 'memory://', APPLE_CID: 'a', APPLE_TEAM_ID: 'b', APPLE_KEY_ID: 'c', APPLE_KEY_FILE: '/nonexistent/key.p8' }
  t.equal(await runDemo(env, io), undefined)
  t.equal(io.errLines.length, 1)
  t.match(io.errLines[0], /^demo: .*option "apple.keyLoader" could not load the private key/)
  for (const [name, port] of Object.entries(ports)) t.notOk(await isListening(Number(port)), `${name} released: the local OAuth2 server started before the failure is stopped`)
})
