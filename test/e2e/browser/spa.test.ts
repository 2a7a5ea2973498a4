/**
 * docs/guide/spa.md in headless Chromium (issue 49, item 3), its two pages run as written there (only the API's
 * address replaced). A Chromium of its own maps `*.test` to 127.0.0.1 (`--host-resolver-rules`: nothing leaves the
 * machine), so that sibling subdomains exist on loopback:
 *
 * - the cookie session: the API on `http://api.example.test:<a>` with `cookies.domain: 'example.test'`, the page on
 *   the sibling `http://app.example.test:<b>`; it signs in and calls the API with the XSRF value it can read, while
 *   the session cookie stays out of its reach;
 * - tokens in the page: the API on `http://localhost:<c>` with a `spa` client and CORS for Bearer without
 *   credentials, the page on `http://127.0.0.1:<d>` (another site); it signs in through `/authorize`, the package's
 *   sign-in page and the confirmation, calls the API with its Bearer token, and refreshes it once the access token
 *   has expired (the server's clock is a fake one, moved);
 * - a page on a third origin (`http://third.test:<e>`) reads nothing from either API.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import Fastify, { type FastifyInstance } from 'fastify'
import FakeTimers from '@sinonjs/fake-timers'
import { chromium, type Browser, type Page } from 'playwright-core'
import { CHROMIUM, chromiumMissing } from './browser.js'
import { codeBlocks, root } from '../../docs/pages.js'
import { authPlugin, type AuditEvent } from '../../../index.js'
import { corsPlugin } from '../../../toolkit.js'
import { freePort } from '../../helpers/redis-server.js'

const missing = chromiumMissing()
if (missing !== undefined) {
  t.comment(`browser tests skipped: ${missing}`)
  t.test('the SPA guide in Chromium', { skip: missing }, async () => {})
} else {
  const doc = readFileSync(`${root}/docs/guide/spa.md`, 'utf8')
  const [cookiePage, tokenPage] = codeBlocks(doc).filter((b) => b.lang === 'js').map((b) => b.code)
  const SECRET = 'spa-guide-tests-secret-0123456789abcdef-0123'
  const passwords: Record<string, string> = { ann: 'ann-password' }
  const checkPassword = async (user: string, passwd: string): Promise<boolean> => passwords[user] === passwd

  /** Starts `app` on its port (on loopback). */
  async function listen (app: FastifyInstance, port: number): Promise<void> {
    await app.listen({ port, host: '127.0.0.1' })
    t.teardown(() => app.close())
  }

  /** A page whose script is `code` with the API's address replaced, and `glue` after it. */
  function pageApp (code: string, api: string, glue = ''): FastifyInstance {
    const app = Fastify({ forceCloseConnections: true })
    const script = code.replace("const API = 'https://api.example.com'", `const API = ${JSON.stringify(api)}`)
    app.get('/*', async (_req, reply) => await reply.type('text/html').send(`<!doctype html><title>page</title><button id="sign-in">Sign in</button><pre id="out"></pre>
<script>${script}
${glue}</script>`))
    return app
  }
  /** Runs `expression` in the page; its value, or the error's name and message. */
  const run = async (page: Page, expression: string): Promise<unknown> => await page.evaluate(`(async () => { try { return await (${expression}) } catch (e) { return 'failed: ' + e.name + ': ' + e.message } })()`)

  // Ports first, so that each server knows the others' origins.
  const [a, b, c, d, e] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort()]
  const apps = { cookieApi: `http://api.example.test:${a}`, tokenApi: `http://localhost:${c}` }
  const appOrigin = `http://app.example.test:${b}`
  const spaOrigin = `http://127.0.0.1:${d}`
  const third = `http://third.test:${e}`
  const cookieApi = Fastify({ forceCloseConnections: true })
  const tokenApi = Fastify({ forceCloseConnections: true })
  await listen(pageApp(cookiePage!, apps.cookieApi), b)
  await listen(pageApp(tokenPage!, apps.tokenApi, `document.querySelector('#sign-in').onclick = () => { signIn() }
if (location.pathname === '/callback') finishSignIn().then(() => api('/api/me')).then(async (r) => { out.textContent = 'signed in as ' + (await r.json()).name }, (e) => { out.textContent = 'failed: ' + e.message })`), d)
  await listen(Fastify({ forceCloseConnections: true }).get('/', async (_req, reply) => await reply.type('text/html').send('<!doctype html><title>third</title>')), e)

  // The cookie session, configured as the guide's first example (its origins here).
  await cookieApi.register(corsPlugin, { origins: [appOrigin], credentials: true, allowedHeaders: ['Content-Type', 'X-XSRF-TOKEN'] })
  await cookieApi.register(authPlugin, {
    secret: SECRET,
    url: apps.cookieApi,
    cookies: { domain: 'example.test' },
    login: { crossSite: { trustedOrigins: [appOrigin] } },
    providers: [{ kind: 'direct', name: 'local', checker: async (user, passwd) => await checkPassword(user, passwd) }]
  })
  cookieApi.get('/api/me', { onRequest: cookieApi.auth.authenticate }, async (request) => ({ name: request.user!.name }))
  // Tokens in the page, as the guide's second example.
  const events: AuditEvent[] = []
  await tokenApi.register(corsPlugin, { origins: [spaOrigin] })
  await tokenApi.register(authPlugin, {
    secret: SECRET,
    url: apps.tokenApi,
    login: { page: true },
    clients: [{ id: 'web', kind: 'spa', name: 'Example web app', redirectUris: ['http://127.0.0.1/callback'], accessToken: { maxAge: '5m' }, refreshToken: { idleTimeout: '1d', maxAge: '7d' } }],
    providers: [{ kind: 'direct', name: 'local', checker: async (user, passwd) => await checkPassword(user, passwd) }],
    onEvent: (e) => { events.push(e) }
  })
  tokenApi.get('/api/me', { onRequest: tokenApi.auth.authenticate }, async (request) => ({ name: request.user!.name }))
  await listen(cookieApi, a)
  await listen(tokenApi, c)

  const browser: Browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--host-resolver-rules=MAP *.test 127.0.0.1']
  })
  t.teardown(() => browser.close())
  const context = await browser.newContext()
  context.setDefaultTimeout(10_000)
  const page = await context.newPage()

  t.test('a cookie session on a sibling subdomain: the page signs in and calls the API; the session cookie stays out of reach', async (t) => {
    await page.goto(`${appOrigin}/`)
    t.equal(await run(page, 'whoAmI()'), null, 'not signed in yet')
    t.equal(await run(page, "signIn('ann', 'wrong')"), false)
    t.equal(await run(page, "signIn('ann', 'ann-password')"), true)
    t.equal(await run(page, 'whoAmI()'), 'ann', 'the API answers with the XSRF value the page read')
    const visible = String(await page.evaluate('document.cookie'))
    t.match(visible, /(^|; )XSRF-TOKEN=/, 'the XSRF value is readable on the sibling (cookies.domain)')
    t.notMatch(visible, /JWT=/, 'the session cookie is not (HttpOnly)')
    const cookies = await context.cookies(apps.cookieApi)
    t.match(cookies.find((c) => c.name === 'JWT'), { domain: '.example.test', httpOnly: true, sameSite: 'Lax' })
    t.equal(await run(page, `fetch('${apps.cookieApi}/api/me', { credentials: 'include' }).then((r) => r.status)`), 401, 'without the XSRF header: refused')
  })

  t.test('tokens in the page: sign in through /authorize, call with the Bearer token, refresh after it expired', async (t) => {
    const clock = FakeTimers.install({ now: Date.now(), toFake: ['Date'] })
    t.teardown(() => clock.uninstall())
    await page.goto(`${spaOrigin}/`)
    await Promise.all([page.waitForURL((u) => u.pathname === '/auth/sign-in'), page.click('#sign-in')])
    await page.getByLabel('User name').fill('ann')
    await page.getByLabel('Password').fill('ann-password')
    await Promise.all([page.waitForSelector('#ask'), page.getByRole('button', { name: 'Sign in' }).click()])
    t.equal(await page.textContent('#ask'), 'Example web app asks to be signed in as ann.', 'the sign-in came from another site: confirmed once')
    await Promise.all([page.waitForURL((u) => u.origin === spaOrigin), page.click('#approve')])
    t.equal(await page.waitForFunction(() => (globalThis as unknown as { out: { textContent: string } }).out.textContent !== '').then(async () => await page.textContent('#out')), 'signed in as ann', 'the code traded, the API called with the Bearer token')
    t.equal(new URL(page.url()).pathname, '/', 'the code left the address bar')
    t.ok(events.some((e) => e.type === 'token.issued' && e.clientId === 'web' && e.reason === 'authorization_code'))

    clock.tick(6 * 60_000)
    t.equal(await run(page, "api('/api/me').then((r) => r.json()).then((b) => b.name)"), 'ann', 'after 6 minutes: a 401, one refresh, the call again')
    t.equal(events.filter((e) => e.type === 'token.refreshed' && e.clientId === 'web').length, 1, 'refreshed once, rotating')
  })

  t.test('a page on a third origin reads nothing from either API', async (t) => {
    // What the token page held: a real access and refresh token, which another origin must not be able to use.
    await page.goto(`${spaOrigin}/`)
    const held = await tokenApi.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'ann', passwd: 'ann-password' } })
    const pair = { access_token: String(held.cookies.find((c) => c.name === 'JWT')?.value), refresh_token: 'any-refresh-token' }
    await page.goto(`${third}/`)
    t.match(await run(page, `fetch('${apps.tokenApi}/api/me', { headers: { Authorization: 'Bearer ${pair.access_token}' } })`), /^failed: TypeError: Failed to fetch/, 'a Bearer call: the preflight gets no permission')
    t.match(await run(page, `fetch('${apps.tokenApi}/auth/token', { method: 'POST', body: new URLSearchParams({ client_id: 'web', grant_type: 'refresh_token', refresh_token: '${pair.refresh_token}' }) })`), /^failed: TypeError: Failed to fetch/, 'the token endpoint\'s answer is not readable')
    t.match(await run(page, `fetch('${apps.cookieApi}/api/me', { credentials: 'include' })`), /^failed: TypeError: Failed to fetch/, 'the cookie API: no CORS for this origin')
  })
}
