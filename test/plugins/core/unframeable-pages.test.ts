/**
 * Every HTML page the package serves refuses framing (issue 43, item 4; SPEC §6.14): `X-Frame-Options: DENY` and
 * CSP `frame-ancestors 'none'`. The pages are listed here one by one (the device page and each of its answers, the
 * confirmation of a sign-in started from another site, the confirmation link opened from another site, the local
 * and dev OAuth2 servers' login page and its error page, the profiler's index), and the list is held complete by
 * reading the sources: a file that sends a page names it here, and no page is sent around the shared headers.
 */
import t from 'tap'
import Fastify from 'fastify'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { clientsApp } from '../../helpers/clients-app.js'
import { verifyProvider } from '../../../providers/index.js'
import { startDevServer, startLocalOAuth2Server } from '../../../servers/index.js'
import { profilerPlugin } from '../../../plugins/toolkit/profiler.js'

const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'

interface Answer { status: number; headers: Headers | Record<string, unknown>; body: string }
const header = (a: Answer, name: string): string => String(a.headers instanceof Headers ? a.headers.get(name) : a.headers[name])
const fromInject = (r: { statusCode: number; headers: Record<string, unknown>; body: string }): Answer => ({ status: r.statusCode, headers: r.headers, body: r.body })
const fromFetch = async (r: Response): Promise<Answer> => ({ status: r.status, headers: r.headers, body: await r.text() })

/** The sources that send pages, by what each serves: every one is exercised below. */
const PAGE_SOURCES: Record<string, string> = {
  'plugins/core/clients/device-sign-in.ts': 'the device page (GET, and the answers of its POST)',
  'plugins/core/clients/native-sign-in.ts': 'the confirmation of a sign-in started from another site',
  'lib/login/cross-site.ts': 'the page of a confirmation link opened from another site (continuePage)',
  'servers/authorize.ts': 'the login page of the local and dev OAuth2 servers',
  'plugins/toolkit/profiler.ts': 'the profiler\'s index'
}

const checked = new Set<string>()
function unframeable (t: Tap.Test, what: string, a: Answer, status = 200): void {
  checked.add(what)
  t.equal(a.status, status, `${what}: ${status}`)
  t.match(header(a, 'content-type'), /^text\/html/, `${what}: a page`)
  t.equal(header(a, 'x-frame-options'), 'DENY', `${what}: X-Frame-Options DENY`)
  t.match(header(a, 'content-security-policy'), /(^|;)\s*frame-ancestors 'none'/, `${what}: frame-ancestors 'none'`)
}

t.test('the pages of the auth core and its providers', async (t) => {
  const s = await clientsApp({}, { setup: (app) => {
    void app.register(verifyProvider, { name: 'email', template: 'Sign in: {{.Token}}', sender: () => {} })
  } })
  t.teardown(s.close)
  const login = await s.app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'ann', passwd: 'x' } })
  const jar = Object.fromEntries(login.cookies.map((c) => [c.name, c.value]))
  const cookie = `JWT=${jar.JWT!}; XSRF-TOKEN=${jar['XSRF-TOKEN']!}`
  const xsrf = jar['XSRF-TOKEN']!
  const newCode = async (): Promise<string> => (await s.app.inject({ method: 'POST', url: '/auth/device/code', headers: FORM, payload: 'client_id=cli' })).json().user_code
  const decide = async (userCode: string, action: string) => fromInject(await s.app.inject({
    method: 'POST', url: '/auth/device', headers: { ...FORM, cookie, origin: s.base, 'sec-fetch-site': 'same-origin' }, payload: new URLSearchParams({ user_code: userCode, action, xsrf }).toString()
  }))
  const get = async (url: string, headers: Record<string, string> = {}) => fromInject(await s.app.inject({ url, headers: { cookie, ...headers } }))

  const devicePage = await get('/auth/device')
  unframeable(t, 'device page', devicePage)
  // Not no-referrer: under it a browser posts the page's own form with `Origin: null`, which the form's
  // same-origin check refuses (test/e2e/browser/device-sign-in.test.ts clicks it in Chromium).
  t.equal(header(devicePage, 'referrer-policy'), 'same-origin', 'the page\'s own form keeps its Origin')
  const code = await newCode()
  unframeable(t, 'device page naming the client', await get(`/auth/device?user_code=${code}`))
  unframeable(t, 'device page, a wrong code', await get('/auth/device?user_code=BBBB-BBBB'))
  unframeable(t, 'device approved', await decide(code, 'approve'))
  unframeable(t, 'device denied', await decide(await newCode(), 'deny'))
  unframeable(t, 'device decision, a wrong code', await decide('CCCC-CCCC', 'approve'), 400)
  const authorize = `/auth/authorize?response_type=code&client_id=mobile&redirect_uri=com.example.app:/callback&code_challenge=${CHALLENGE}&code_challenge_method=S256`
  unframeable(t, 'authorize confirmation', await get(authorize, { 'sec-fetch-site': 'cross-site' }))
  unframeable(t, 'confirmation link opened from another site', await get('/auth/email/login?token=anything', { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' }))

  // Not pages, but answers of the same routes: never framed either (the auth scope's rule).
  for (const url of ['/auth/no-such-route', '/auth/user', '/auth/list']) {
    const r = await s.app.inject({ url })
    t.equal(r.headers['x-frame-options'], 'DENY', `${url}: DENY`)
    t.match(String(r.headers['content-security-policy']), /frame-ancestors 'none'/)
  }
})

t.test('the login page of the local and dev OAuth2 servers, and its error page', async (t) => {
  const local = await startLocalOAuth2Server({ url: 'http://127.0.0.1:0', withLoginPage: true, redirectUris: ['http://127.0.0.1:1/cb'] })
  t.teardown(local.close)
  const dev = await startDevServer({ port: 0, redirectUris: ['http://127.0.0.1:1/cb'] })
  t.teardown(dev.close)
  for (const [name, server, cid] of [['local', local, local.providerOptions.cid], ['dev', dev, 'dev']] as const) {
    const page = await fetch(`${server.url}/login/oauth/authorize?response_type=code&client_id=${cid}&redirect_uri=http://127.0.0.1:1/cb&code_challenge=${CHALLENGE}&code_challenge_method=S256`)
    const cookie = page.headers.get('set-cookie')!.split(';')[0]!
    const answer = await fromFetch(page)
    unframeable(t, `${name} server login page`, answer)
    const request = /name="request" value="([^"]+)"/.exec(answer.body)![1]!
    const error = await fetch(`${server.url}/login/oauth/authorize`, { method: 'POST', headers: { ...FORM, cookie }, body: new URLSearchParams({ request, user: '' }).toString() })
    unframeable(t, `${name} server login page with an error`, await fromFetch(error), 400)
    const json = await fetch(`${server.url}/login/oauth/nothing`)
    t.equal(json.headers.get('x-frame-options'), 'DENY', `${name} server: every answer DENY`)
  }
})

t.test('the profiler\'s index', async (t) => {
  const app = Fastify()
  await app.register(profilerPlugin, { prefix: '/debug' })
  t.teardown(() => app.close())
  unframeable(t, 'profiler index', fromInject(await app.inject('/debug/pprof/')))
})

t.test('the list is complete: every source that sends a page is listed, and no page goes around the shared headers', async (t) => {
  const root = fileURLToPath(new URL('../../..', import.meta.url))
  const sources = ['lib', 'hooks', 'plugins', 'providers', 'servers', 'stores']
    .flatMap((dir) => readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' }).map((f) => `${dir}/${f}`))
    .filter((f) => f.endsWith('.ts') && f !== 'lib/html.ts')
  const sending = sources.filter((f) => /\bsendPage\(|\bPAGE_HEADERS\b/.test(readFileSync(join(root, f), 'utf8')))
  t.same(sending.sort(), Object.keys(PAGE_SOURCES).sort(), 'the sources that send pages are the listed ones')
  const around = sources.filter((f) => /\.type\(\s*['"`]text\/html|['"]content-type['"]\s*:\s*['"]text\/html/i.test(readFileSync(join(root, f), 'utf8')))
  t.same(around, [], 'no page is sent with a content type of its own')
  t.equal(checked.size, 13, 'every page above was checked')
})
