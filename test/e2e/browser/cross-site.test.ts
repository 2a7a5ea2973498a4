/**
 * Login and logout CSRF in a real browser (headless Chromium). The site runs on http://127.0.0.1:<A>; the
 * attacker's page on http://localhost:<B> (another site) and on http://127.0.0.1:<C> (the same site, another
 * origin) submits a form that signs the visitor in as the attacker's account, or navigates to the logout route.
 * The browser's own Sec-Fetch-Site and Origin headers decide: refused cross-site and same-site, accepted from the
 * site's own page. A control run with `crossSite: false` shows the same page does sign the victim in without
 * the check.
 */
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { authPlugin } from '../../../auth.js'
import { chromiumMissing, launch, type TestBrowser } from './browser.js'

const missing = chromiumMissing()
if (missing !== undefined) {
  t.comment(`browser tests skipped: ${missing}`)
  t.test('cross-site login and logout in Chromium', { skip: missing }, async () => {})
} else {
  const browser: TestBrowser = await launch(import.meta.url)
  t.teardown(() => browser.close())
  const { page, shot } = browser
  const USERS: Record<string, string> = { victim: 'victim-pw', attacker: 'attacker-pw' }

  /** A page with a form posting the attacker's credentials to `action`, submitted by script as soon as it loads. */
  const loginForm = (action: string): string => `<!doctype html><title>win a prize</title>
    <form method="post" action="${action}"><input name="user" value="attacker"><input name="passwd" value="attacker-pw"></form>
    <script>document.forms[0].submit()</script>`

  async function listenOn (app: FastifyInstance, host: string): Promise<string> {
    await app.listen({ port: 0, host: '127.0.0.1' })
    return `http://${host}:${(app.server.address() as { port: number }).port}`
  }

  /** The site: direct login, and a page of its own with the same form. */
  async function site (crossSite?: false): Promise<string> {
    const app = Fastify({ forceCloseConnections: true })
    t.teardown(() => app.close())
    let origin = ''
    app.get('/own-page', async (_req, reply) => reply.type('text/html').send(loginForm(`${origin}/auth/local/login`)))
    app.get('/', async (_req, reply) => reply.type('text/html').send('<!doctype html><title>site</title><p>the site</p>'))
    // The public URL is known once the port is: register after listen would be too late, so reserve it first.
    const probe = Fastify()
    origin = await listenOn(probe, '127.0.0.1')
    await probe.close()
    await app.register(authPlugin, {
      secret: () => 'browser-cross-site-secret-0123456789',
      url: origin,
      ...(crossSite === undefined ? {} : { crossSite }),
      providers: [{ kind: 'direct', name: 'local', checker: (u: string, p: string) => USERS[u] === p }]
    })
    await app.listen({ port: Number(new URL(origin).port), host: '127.0.0.1' })
    return origin
  }

  /** The attacker's server on another host name (`localhost`: another site) or on 127.0.0.1 (same site). */
  async function attacker (host: string, html: (target: string) => string, target: string): Promise<string> {
    const app = Fastify({ forceCloseConnections: true })
    t.teardown(() => app.close())
    app.get('/', async (_req, reply) => reply.type('text/html').send(html(target)))
    return await listenOn(app, host)
  }

  /** The user name in the site's session cookie, or undefined without one. */
  async function sessionUser (siteUrl: string): Promise<string | undefined> {
    const jwt = (await browser.context.cookies(siteUrl)).find((c) => c.name === 'JWT')
    if (jwt === undefined) return undefined
    return JSON.parse(Buffer.from(jwt.value.split('.')[1]!, 'base64url').toString()).user?.name
  }

  async function submitFrom (from: string, siteUrl: string): Promise<{ status: number; body: string }> {
    const answered = page.waitForResponse((r) => r.url() === `${siteUrl}/auth/local/login`)
    await page.goto(from)
    const res = await answered
    return { status: res.status(), body: await res.text() }
  }

  t.beforeEach(async () => { await browser.context.clearCookies() })

  const target = await site()

  t.test('a form on another site does not sign the visitor in', async (t) => {
    const evil = await attacker('localhost', (to) => loginForm(`${to}/auth/local/login`), target)
    const res = await submitFrom(evil, target)
    await shot('cross-site-form-refused')
    t.equal(res.status, 403)
    t.match(JSON.parse(res.body), { code: 'GATEHOUSE_CROSS_SITE' })
    t.equal(await sessionUser(target), undefined, 'no session cookie')
  })

  t.test('a form on the same site but another origin (another port) is refused too', async (t) => {
    const sibling = await attacker('127.0.0.1', (to) => loginForm(`${to}/auth/local/login`), target)
    const res = await submitFrom(sibling, target)
    t.equal(res.status, 403)
    t.equal(await sessionUser(target), undefined)
  })

  t.test('the same form on the site\'s own page signs in', async (t) => {
    const res = await submitFrom(`${target}/own-page`, target)
    await shot('same-origin-form-accepted')
    t.equal(res.status, 200, res.body)
    t.equal(await sessionUser(target), 'attacker', 'signed in by the site\'s own form')
  })

  t.test('a cross-site navigation to the logout route does not end the session', async (t) => {
    const own = await submitFrom(`${target}/own-page`, target)
    t.equal(own.status, 200)
    const evil = await attacker('localhost', (to) => `<!doctype html><script>location.href = ${JSON.stringify(`${to}/auth/logout`)}</script>`, target)
    const answered = page.waitForResponse((r) => r.url() === `${target}/auth/logout`)
    await page.goto(evil)
    const res = await answered
    t.equal(res.status(), 403)
    t.equal(await sessionUser(target), 'attacker', 'the session cookie is still there')
    const typed = await page.goto(`${target}/auth/logout`)
    t.equal(typed?.status(), 200, 'a typed logout URL works')
    t.equal(await sessionUser(target), undefined)
  })

  t.test('control: with crossSite: false the same attack signs the victim in', async (t) => {
    const open = await site(false)
    const evil = await attacker('localhost', (to) => loginForm(`${to}/auth/local/login`), open)
    const res = await submitFrom(evil, open)
    t.equal(res.status, 200)
    t.equal(await sessionUser(open), 'attacker', 'which is what the check prevents')
  })
}
