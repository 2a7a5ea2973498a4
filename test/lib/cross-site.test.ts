/**
 * Cross-site requests to login, confirm and logout routes are refused (403 `GATEHOUSE_CROSS_SITE`, nothing
 * set, nothing consumed); same-origin, typed and non-browser requests pass; configured origins and same-site
 * pages pass when allowed; OAuth2 callbacks keep working cross-site; a confirmation link opened from another site
 * gets a page whose same-origin button signs in.
 */
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { authPlugin } from '../../auth.js'
import { oauth2Provider, telegramProvider, verifyProvider } from '../../providers/index.js'
import { startLocalOAuth2Server } from '../../servers/index.js'
import { client, listen, type Client } from '../helpers/client.js'
import { BOT_TOKEN, BotApiStandIn } from '../helpers/bot-api-standin.js'

const SECRET = () => 'cross-site-test-secret-0123456789abcdef'
const CROSS = { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }
const REFUSED = { error: 'forbidden', details: 'cross-site request refused: start from this site\'s own pages', code: 'GATEHOUSE_CROSS_SITE' }

const api = new BotApiStandIn()
await api.start()
t.teardown(() => api.stop())
const provider = await startLocalOAuth2Server({ url: 'http://127.0.0.1:0' })
t.teardown(provider.close)

interface Started { app: FastifyInstance; base: string; mails: string[] }

async function start (opts: Record<string, unknown> = {}): Promise<Started> {
  const mails: string[] = []
  const { app, base } = await listen(async (app) => {
    await app.register(authPlugin, {
      secret: SECRET,
      url: 'https://auth.example.com',
      cookies: { secure: false },
      allowedRedirectHosts: ['shop.example.com'],
      ...opts,
      providers: [{ kind: 'direct', name: 'local', checker: (u: string, p: string) => u === 'alice' && p === 'alice-secret' }]
    })
    await app.register(verifyProvider, { name: 'email', template: '{{.Token}}', sender: (_a: string, text: string) => { mails.push(text) } })
    await app.register(telegramProvider, { token: BOT_TOKEN, apiUrl: api.url, polling: false })
    await app.register(oauth2Provider, { name: 'custom', ...provider.providerOptions })
  })
  t.teardown(() => app.close())
  return { app, base, mails }
}

async function signedIn (base: string): Promise<Client> {
  const c = client(base)
  t.equal((await c.fetch('/auth/local/login', { method: 'POST', json: { user: 'alice', passwd: 'alice-secret' } })).status, 200)
  return c
}

async function user (c: Client): Promise<number> {
  return (await c.fetch('/auth/user', { headers: { 'x-xsrf-token': c.jar.get('XSRF-TOKEN') ?? '' } })).status
}

const main = await start()

t.test('every login, confirm and logout route refuses a cross-site request, setting and consuming nothing', async (t) => {
  const { base, mails } = main
  await client(base).fetch('/auth/email/login?user=u&address=u@example.com')
  const routes: Array<[string, RequestInit & { json?: unknown }]> = [
    ['/auth/local/login', { method: 'POST', json: { user: 'alice', passwd: 'alice-secret' } }],
    ['/auth/local/login?user=alice&passwd=alice-secret', {}],
    ['/auth/email/login?user=u&address=x@example.com', {}],
    [`/auth/email/login?token=${mails[0]!}`, { method: 'POST' }],
    ['/auth/telegram/login', {}],
    ['/auth/custom/login', {}],
    ['/auth/logout', {}],
    ['/auth/logout', { method: 'POST' }],
    ['/auth/local/logout', {}],
    ['/auth/custom/logout', { method: 'POST' }]
  ]
  for (const [path, init] of routes) {
    const r = await client(base).fetch(path, { ...init, headers: CROSS })
    t.equal(r.status, 403, `${init.method ?? 'GET'} ${path}`)
    t.same(await r.json(), REFUSED)
    t.same(r.headers.getSetCookie(), [], 'no cookie set')
  }
  t.equal(mails.length, 1, 'no message was sent')
  const confirmed = await client(base).fetch(`/auth/email/login?token=${mails[0]!}`)
  t.equal(confirmed.status, 200, 'the confirmation token was not consumed')
})

t.test('a cross-site navigation or form cannot end a session (GET and POST logout)', async (t) => {
  const c = await signedIn(main.base)
  for (const method of ['GET', 'POST']) {
    const r = await c.fetch('/auth/logout', { method, headers: CROSS })
    t.equal(r.status, 403, method)
    t.equal(await user(c), 200, 'still signed in')
  }
  const own = await c.fetch('/auth/logout', { method: 'POST', headers: { 'sec-fetch-site': 'same-origin' } })
  t.equal(own.status, 200, 'the site\'s own page logs out with POST')
  t.equal(await user(c), 401)
})

t.test('which requests pass', async (t) => {
  const { base } = main
  const login = async (headers: Record<string, string>): Promise<number> =>
    (await client(base).fetch('/auth/local/login', { method: 'POST', json: { user: 'alice', passwd: 'alice-secret' }, headers })).status
  t.equal(await login({}), 200, 'no Sec-Fetch-Site, no Origin: not a browser\'s cross-site request')
  t.equal(await login({ 'sec-fetch-site': 'same-origin' }), 200)
  t.equal(await login({ 'sec-fetch-site': 'none' }), 200, 'typed URL or bookmark')
  t.equal(await login({ 'sec-fetch-site': 'same-site', origin: 'https://blog.example.com' }), 403, 'a sibling subdomain: refused unless allowed')
  t.equal(await login({ 'sec-fetch-site': 'cross-site', origin: 'https://shop.example.com' }), 200, 'a host of allowedRedirectHosts is trusted')
  t.equal(await login({ origin: 'https://auth.example.com' }), 200, 'older browser, own origin')
  t.equal(await login({ origin: 'https://evil.example' }), 403, 'older browser, foreign origin')
  t.equal(await login({ origin: 'null' }), 403, 'an opaque origin')
  t.equal(await login({ 'sec-fetch-site': 'cross-site' }), 403, 'cross-site without Origin (a GET navigation)')

  const widened = await start({ crossSite: { trustedOrigins: ['https://app.partner.example'], allowSameSite: true } })
  const wlogin = async (headers: Record<string, string>): Promise<number> =>
    (await client(widened.base).fetch('/auth/local/login', { method: 'POST', json: { user: 'alice', passwd: 'alice-secret' }, headers })).status
  t.equal(await wlogin({ 'sec-fetch-site': 'cross-site', origin: 'https://app.partner.example' }), 200, 'a trusted origin')
  t.equal(await wlogin({ 'sec-fetch-site': 'same-site', origin: 'https://blog.example.com' }), 200, 'same-site when allowed')
  t.equal(await wlogin({ 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }), 403)

  const off = await start({ crossSite: false })
  t.equal((await client(off.base).fetch('/auth/local/login', { method: 'POST', json: { user: 'alice', passwd: 'alice-secret' }, headers: CROSS })).status, 200, 'crossSite: false turns the check off')
})

t.test('a confirmation link opened from another site: a page whose button signs in', async (t) => {
  const { base, mails } = main
  const c = client(base)
  await c.fetch('/auth/email/login?user=ann&address=ann@example.com&session=1')
  const token = mails.at(-1)!
  const page = await c.fetch(`/auth/email/login?token=${token}&sess=1`, { headers: { 'sec-fetch-site': 'cross-site' } })
  t.equal(page.status, 200)
  t.match(page.headers.get('content-type'), /^text\/html/)
  t.match(page.headers.get('content-security-policy'), /frame-ancestors 'none'/)
  t.equal(page.headers.get('x-frame-options'), 'DENY')
  t.equal(page.headers.get('cache-control'), 'no-store')
  t.same(page.headers.getSetCookie(), [], 'no session from the link itself')
  const html = await page.text()
  t.match(html, /<form method="post" action="\/auth\/email\/login">/)
  t.match(html, `<input type="hidden" name="token" value="${token}">`)
  t.match(html, '<input type="hidden" name="sess" value="1">')
  const form = { token, sess: '1' }
  const foreign = await c.fetch('/auth/email/login', { method: 'POST', form, headers: CROSS })
  t.equal(foreign.status, 403, 'another site cannot post the form itself')
  const done = await c.fetch('/auth/email/login', { method: 'POST', form, headers: { 'sec-fetch-site': 'same-origin', origin: 'https://auth.example.com' } })
  t.equal(done.status, 200, 'the user\'s click on the page signs in')
  t.equal((await done.json()).name, 'ann')
  t.notOk(c.jar.cookies.get('JWT')!.attrs['max-age'], 'session-only, as the link asked')
  const again = await c.fetch('/auth/email/login', { method: 'POST', form, headers: { 'sec-fetch-site': 'same-origin' } })
  t.equal(again.status, 401, 'once')
  t.match(await again.json(), { code: 'GATEHOUSE_ALREADY_USED' })
})

t.test('OAuth2 callbacks are not guarded: the provider sends the browser back cross-site', async (t) => {
  const c = client(main.base)
  const start = await c.fetch('/auth/custom/login', { headers: { 'sec-fetch-site': 'same-origin' } })
  t.equal(start.status, 302)
  const authorize = await fetch(start.headers.get('location')!, { redirect: 'manual' })
  const back = new URL(authorize.headers.get('location')!)
  const cb = await c.fetch(`/auth/custom/callback${back.search}`, { headers: { 'sec-fetch-site': 'cross-site' } })
  t.equal(cb.status, 200, 'signed in')
  t.equal((await cb.json()).name, 'dev_user')
})

t.test('bad crossSite options fail registration naming them', async (t) => {
  const cases: Array<[unknown, string]> = [
    ['off', 'crossSite'],
    [{ trustedOrigins: 'https://a.example' }, 'crossSite.trustedOrigins'],
    [{ trustedOrigins: ['not an origin'] }, 'crossSite.trustedOrigins'],
    [{ trustedOrigins: ['https://a.example/path'] }, 'crossSite.trustedOrigins'],
    [{ trustedOrigins: ['ftp://a.example'] }, 'crossSite.trustedOrigins'],
    [{ allowSameSite: 'yes' }, 'crossSite.allowSameSite'],
    [{ other: 1 }, 'crossSite.other']
  ]
  for (const [crossSite, option] of cases) {
    const err = await start({ crossSite }).then(() => undefined, (e: unknown) => e)
    t.match(err, { code: 'GATEHOUSE_OPTION', option }, JSON.stringify(crossSite))
  }
})
