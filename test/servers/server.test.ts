/**
 * The authorization-code flow against the real dev and local OAuth2 servers, by hand over loopback:
 * authorize → login form → redirect with code and state → token exchange with PKCE → userinfo → picture.
 */
import t from 'tap'
import { createHash, randomBytes } from 'node:crypto'
import { createServer } from 'node:net'
import sharp from 'sharp'
import {
  DEV_CLIENT, escapeHtml, startDevServer, startLocalOAuth2Server, type RunningOAuth2Server
} from '../../servers/index.js'
import { funcLogger } from '../../lib/logging/logger.js'
import { client, type Client } from '../helpers/client.js'

const CALLBACK = 'http://127.0.0.1:1/auth/dev/callback'

function pkce (): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

/** The PKCE pair of the requests that do not bring their own (the servers require PKCE). */
const PKCE = pkce()

function authorizePath (cid: string, extra: Record<string, string> = {}): string {
  const q = new URLSearchParams({ response_type: 'code', client_id: cid, redirect_uri: CALLBACK, state: 'st-1', scope: 'user', code_challenge: PKCE.challenge, code_challenge_method: 'S256', ...extra })
  return `/login/oauth/authorize?${q.toString()}`
}

/** The hidden `request` field of a rendered login form. */
function formRequestId (html: string): string {
  const m = /name="request" value="([^"]+)"/.exec(html)
  if (m === null) throw new Error('login form has no request field')
  return m[1]!
}

/** Signs in through the login page and returns the redirect the browser is sent to. */
async function signIn (c: Client, cid: string, user: string, extra: Record<string, string> = {}): Promise<URL> {
  const page = await c.fetch(authorizePath(cid, extra))
  if (page.status !== 200) throw new Error(`login page answered ${page.status}`)
  const res = await c.fetch('/login/oauth/authorize', { method: 'POST', form: { request: formRequestId(await page.text()), user } })
  if (res.status !== 303) throw new Error(`login submit answered ${res.status}`)
  return new URL(res.headers.get('location')!)
}

async function exchange (base: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  return await fetch(`${base}/login/oauth/access_token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', ...headers },
    body: new URLSearchParams({ code_verifier: PKCE.verifier, ...form }).toString()
  })
}

function basic (cid: string, csecret: string): string {
  return 'Basic ' + Buffer.from(`${encodeURIComponent(cid)}:${encodeURIComponent(csecret)}`).toString('base64')
}

const logLines: string[] = []
const dev = await startDevServer({
  port: 0,
  redirectUris: [CALLBACK, `${CALLBACK}?x=1`],
  emailFn: (name) => (name === 'nomail' ? undefined : `${name}@example.test`),
  logger: funcLogger((l) => logLines.push(l))
})
t.teardown(dev.close)

t.test('dev server: full code flow with PKCE, state, nonce, userinfo and picture', async (t) => {
  t.match(dev.url, /^http:\/\/127\.0\.0\.1:\d+$/)
  t.not(dev.url, 'http://127.0.0.1:8084', 'port 0 gives a free port, reported in url')
  const c = client(dev.url)
  const { verifier, challenge } = pkce()
  const page = await c.fetch(authorizePath(DEV_CLIENT.cid, { code_challenge: challenge, code_challenge_method: 'S256', nonce: 'n-42' }))
  t.equal(page.status, 200)
  t.match(page.headers.get('content-type'), /^text\/html/)
  t.equal(page.headers.get('x-frame-options'), 'DENY')
  t.match(page.headers.get('content-security-policy'), /frame-ancestors 'none'/)
  t.equal(page.headers.get('cache-control'), 'no-store')
  const browserCookie = [...c.jar.cookies.values()].find((ck) => ck.name.startsWith('gh_oauth2_browser_'))
  t.ok(browserCookie, 'login form binds the browser with a cookie')
  t.ok(browserCookie?.attrs.httponly)
  t.equal(browserCookie?.attrs.samesite, 'Lax')
  const html = await page.text()
  t.match(html, /<form method="post" action="\/login\/oauth\/authorize">/)
  t.match(html, /name="user"/)

  const res = await c.fetch('/login/oauth/authorize', { method: 'POST', form: { request: formRequestId(html), user: 'alice' } })
  t.equal(res.status, 303)
  const back = new URL(res.headers.get('location')!)
  t.equal(back.origin + back.pathname, CALLBACK)
  t.equal(back.searchParams.get('state'), 'st-1')
  const code = back.searchParams.get('code')!
  t.match(code, /^[A-Za-z0-9_-]{43}$/)

  const tok = await exchange(dev.url, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, code_verifier: verifier }, { authorization: basic(DEV_CLIENT.cid, DEV_CLIENT.csecret) })
  t.equal(tok.status, 200)
  t.equal(tok.headers.get('cache-control'), 'no-store')
  t.equal(tok.headers.get('pragma'), 'no-cache')
  const body = await tok.json() as Record<string, unknown>
  t.equal(body.token_type, 'Bearer')
  t.equal(body.expires_in, 3600)
  t.equal(body.scope, 'user')
  t.equal(body.nonce, 'n-42', 'nonce passed through')
  t.match(body.access_token, /^[A-Za-z0-9_-]{43}$/)

  const me = await fetch(`${dev.url}/user`, { headers: { authorization: `Bearer ${String(body.access_token)}` } })
  t.equal(me.status, 200)
  const info = await me.json() as Record<string, string>
  const pictureName = createHash('sha1').update('alice').digest('hex')
  t.same(info, { id: 'alice', name: 'alice', picture: `${dev.url}/picture/${pictureName}.png`, email: 'alice@example.test' })

  const pic = await fetch(info.picture!)
  t.equal(pic.status, 200)
  t.equal(pic.headers.get('content-type'), 'image/png')
  t.match(pic.headers.get('cache-control'), /max-age/, 'pictures may be cached')
  const bytes = Buffer.from(await pic.arrayBuffer())
  const meta = await sharp(bytes).metadata()
  t.equal(meta.format, 'png')
  t.equal(meta.width, 32)
  const again = Buffer.from(await (await fetch(info.picture!)).arrayBuffer())
  t.ok(again.equals(bytes), 'the picture is deterministic')
  const other = Buffer.from(await (await fetch(`${dev.url}/picture/${createHash('sha1').update('bob').digest('hex')}.png`)).arrayBuffer())
  t.notOk(other.equals(bytes), 'another user gets another picture')
  t.notOk(logLines.some((l) => l.includes(code) || l.includes(String(body.access_token))), 'no code or token in the logs')
  t.ok(logLines.some((l) => l.includes('user alice signed in')))
})

t.test('dev server: client_secret_post works, the user name is trimmed and email omitted when emailFn gives none', async (t) => {
  const back = await signIn(client(dev.url), DEV_CLIENT.cid, '  nomail  ', { scope: '' })
  const tok = await exchange(dev.url, {
    grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: CALLBACK,
    client_id: DEV_CLIENT.cid, client_secret: DEV_CLIENT.csecret
  })
  t.equal(tok.status, 200)
  const { access_token: at, scope } = await tok.json() as { access_token: string; scope: string }
  t.equal(scope, '')
  const info = await (await fetch(`${dev.url}/userinfo`, { headers: { authorization: `bearer ${at}` } })).json()
  t.same(info, { id: 'nomail', name: 'nomail', picture: `${dev.url}/picture/${createHash('sha1').update('nomail').digest('hex')}.png` })
})

t.test('dev server: JSON token request and the /authorize and /token aliases', async (t) => {
  const c = client(dev.url)
  const page = await c.fetch(authorizePath(DEV_CLIENT.cid).replace('/login/oauth/authorize', '/authorize'))
  t.equal(page.status, 200)
  const res = await c.fetch('/authorize', { method: 'POST', form: { request: formRequestId(await page.text()), user: 'Zoë <b>' } })
  const code = new URL(res.headers.get('location')!).searchParams.get('code')!
  const tok = await fetch(`${dev.url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: DEV_CLIENT.cid, client_secret: DEV_CLIENT.csecret, code_verifier: PKCE.verifier })
  })
  t.equal(tok.status, 200)
  const { access_token: at } = await tok.json() as { access_token: string }
  const info = await (await fetch(`${dev.url}/user`, { headers: { authorization: `Bearer ${at}` } })).json() as { name: string }
  t.equal(info.name, 'Zoë <b>', 'user names are data, kept as typed')
})

t.test('dev server: the deny button sends access_denied with the state', async (t) => {
  const c = client(dev.url)
  const page = await c.fetch(authorizePath(DEV_CLIENT.cid))
  const res = await c.fetch('/login/oauth/authorize', { method: 'POST', form: { request: formRequestId(await page.text()), deny: '1' } })
  t.equal(res.status, 303)
  const back = new URL(res.headers.get('location')!)
  t.equal(back.searchParams.get('error'), 'access_denied')
  t.equal(back.searchParams.get('state'), 'st-1')
  t.equal(back.searchParams.get('code'), null)
})

t.test('dev server: an existing query of the redirect_uri is kept', async (t) => {
  const c = client(dev.url)
  const page = await c.fetch(authorizePath(DEV_CLIENT.cid, { redirect_uri: `${CALLBACK}?x=1` }))
  const res = await c.fetch('/login/oauth/authorize', { method: 'POST', form: { request: formRequestId(await page.text()), user: 'bob' } })
  const back = new URL(res.headers.get('location')!)
  t.equal(back.searchParams.get('x'), '1')
  t.ok(back.searchParams.get('code'))
})

t.test('local server: yields provider options whose mapUser reads the userinfo; flow without a login page', async (t) => {
  const local = await startLocalOAuth2Server({ url: 'http://localhost:0', emailFn: async (n) => `${n}@corp.test` })
  t.teardown(local.close)
  // What the OAuth2 engine does with these options: register the provider's callback, the one URI accepted.
  local.providerOptions.onRedirectUri(CALLBACK)
  t.match(local.url, /^http:\/\/localhost:\d+$/)
  const p = local.providerOptions
  t.match(p.cid, /^local-[0-9a-f]{12}$/)
  t.match(p.csecret, /^[A-Za-z0-9_-]{43}$/)
  t.same(p.endpoint, { authURL: `${local.url}/login/oauth/authorize`, tokenURL: `${local.url}/login/oauth/access_token` })
  t.equal(p.infoURL, `${local.url}/user`)
  t.same(p.scopes, ['user'])

  const { verifier, challenge } = pkce()
  const auth = new URL(p.endpoint.authURL)
  auth.search = new URLSearchParams({ response_type: 'code', client_id: p.cid, redirect_uri: CALLBACK, state: 's', code_challenge: challenge, code_challenge_method: 'S256' }).toString()
  const res = await fetch(auth, { redirect: 'manual' })
  t.equal(res.status, 302, 'withLoginPage defaults to false: signed in at once')
  t.equal(res.headers.getSetCookie().length, 0, 'no browser cookie without a form')
  const back = new URL(res.headers.get('location')!)
  t.equal(back.searchParams.get('state'), 's')
  const tok = await exchange(local.url, { grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: CALLBACK, code_verifier: verifier }, { authorization: basic(p.cid, p.csecret) })
  t.equal(tok.status, 200)
  const { access_token: at } = await tok.json() as { access_token: string }
  const raw = await (await fetch(p.infoURL, { headers: { authorization: `Bearer ${at}` } })).text()
  const data = JSON.parse(raw) as unknown
  t.same(p.mapUser(data, raw), { id: 'dev_user', name: 'dev_user', picture: `${local.url}/picture/${createHash('sha1').update('dev_user').digest('hex')}.png`, email: 'dev_user@corp.test' })
  t.throws(() => p.mapUser({ name: 'x' }), /string id and name/)
  t.throws(() => p.mapUser(null), /string id and name/)
})

t.test('local server: given client, auto-login user and registered redirect URI', async (t) => {
  const local = await startLocalOAuth2Server({
    url: 'http://127.0.0.1:0', client: { cid: 'app', csecret: 's3cret' }, autoLoginUser: 'robot', redirectUris: [CALLBACK]
  })
  t.teardown(local.close)
  t.same([local.providerOptions.cid, local.providerOptions.csecret], ['app', 's3cret'], 'the given client in the provider options')
  // With one registered URI the request may omit it (RFC 6749 §4.1.1) and the token request too.
  const res = await fetch(`${local.url}/login/oauth/authorize?response_type=code&client_id=app&code_challenge=${PKCE.challenge}&code_challenge_method=S256`, { redirect: 'manual' })
  t.equal(res.status, 302)
  const back = new URL(res.headers.get('location')!)
  t.equal(back.origin + back.pathname, CALLBACK)
  t.equal(back.searchParams.get('state'), null, 'no state given, none returned')
  const tok = await exchange(local.url, { grant_type: 'authorization_code', code: back.searchParams.get('code')!, client_id: 'app', client_secret: 's3cret' })
  t.equal(tok.status, 200)
  const { access_token: at } = await tok.json() as { access_token: string }
  const data = await (await fetch(`${local.url}/user`, { headers: { authorization: `Bearer ${at}` } })).json()
  t.equal(local.providerOptions.mapUser(data).id, 'robot')
})

t.test('local server: a custom loginPageHandler renders the page; its form posts back and signs in', async (t) => {
  const seen: string[] = []
  const local = await startLocalOAuth2Server({
    url: 'http://127.0.0.1:0',
    withLoginPage: true,
    redirectUris: [CALLBACK],
    loginPageHandler: (_req, reply, page) => {
      seen.push(page.clientId)
      const hidden = Object.entries(page.hidden).map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`).join('')
      if (page.error !== undefined) return `<p id="err">${escapeHtml(page.error)}</p><form>${hidden}</form>`
      return reply.code(200).type('text/html; charset=utf-8').send(`<h1>Corp SSO</h1><form method="post" action="${page.action}">${hidden}<input name="${page.userField}"></form>`)
    }
  })
  t.teardown(local.close)
  const { cid } = local.providerOptions
  const c = client(local.url)
  const page = await c.fetch(authorizePath(cid))
  t.equal(page.status, 200)
  const html = await page.text()
  t.match(html, /<h1>Corp SSO<\/h1>/)
  t.same(seen, [cid])
  const request = formRequestId(html)
  const empty = await c.fetch('/login/oauth/authorize', { method: 'POST', form: { request, user: ' ' } })
  t.equal(empty.status, 400, 'returned HTML of a refused submit is sent with 400')
  t.match(await empty.text(), /<p id="err">enter a user name<\/p>/)
  const res = await c.fetch('/login/oauth/authorize', { method: 'POST', form: { request, user: 'carol' } })
  t.equal(res.status, 303)
  t.ok(new URL(res.headers.get('location')!).searchParams.get('code'))
})

t.test('login page escapes everything it renders', async (t) => {
  const c = client(dev.url)
  const page = await c.fetch(authorizePath(DEV_CLIENT.cid, { scope: 'a<script>alert(1)</script>' }))
  const html = await page.text()
  t.notMatch(html, /<script>/)
  t.match(html, /a&lt;script&gt;alert\(1\)&lt;\/script&gt;/)
  const long = await c.fetch('/login/oauth/authorize', { method: 'POST', form: { request: formRequestId(html), user: 'x'.repeat(65) } })
  t.equal(long.status, 400)
  t.match(await long.text(), /at most 64 characters/)
  t.equal(escapeHtml(`<a href="x" title='y'>&</a>`), '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;')
})

t.test('close() frees the port and is safe to call twice', async (t) => {
  const s: RunningOAuth2Server = await startDevServer({ port: 0 })
  const port = Number(new URL(s.url).port)
  t.equal((await fetch(`${s.url}/`)).status, 200)
  await s.close()
  await s.close()
  await t.rejects(fetch(`${s.url}/`), 'nothing answers any more')
  // The port can be bound again at once.
  const probe = createServer()
  await new Promise<void>((resolve, reject) => { probe.once('error', reject); probe.listen(port, '127.0.0.1', resolve) })
  await new Promise<void>((resolve) => probe.close(() => resolve()))
  t.pass(`port ${port} is free again`)
})

t.test('GET / describes the endpoints', async (t) => {
  const r = await fetch(`${dev.url}/`)
  t.same(await r.json(), { issuer: dev.url, authURL: `${dev.url}/login/oauth/authorize`, tokenURL: `${dev.url}/login/oauth/access_token`, infoURL: `${dev.url}/user` })
})
