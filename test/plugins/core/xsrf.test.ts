/**
 * Page navigations and the XSRF rule (issue 23 item 10): with `xsrf.navigation`, a browser's same-origin (or
 * typed) GET/HEAD navigation is accepted with the session cookie alone; anything else still needs the header. A
 * cookie session ignored for want of the header is logged at debug level with the request's id.
 */
import t from 'tap'
import { Writable } from 'node:stream'
import Fastify, { type FastifyInstance } from 'fastify'
import { authPlugin } from '../../../auth.js'
import { OptionsError } from '../../../lib/errors.js'
import { signIn, type SignedIn } from '../../../testing.js'
import { coreOf } from '../../../plugins/core/signin/internals.js'

const SECRET = 'xsrf-nav-secret-0123456789abcdef-0123456789'
const NAVIGATE = { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', 'sec-fetch-user': '?1' }

interface PageApp { app: FastifyInstance; user: SignedIn; logs: Array<Record<string, unknown>> }

async function pageApp (navigation: boolean | undefined): Promise<PageApp> {
  const logs: Array<Record<string, unknown>> = []
  const stream = new Writable({ write (chunk: Buffer, _enc, done) { logs.push(JSON.parse(chunk.toString())); done() } })
  const app = Fastify({ logger: { level: 'debug', stream } })
  await app.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1', rateLimit: false, ...(navigation === undefined ? {} : { xsrf: { navigation } }) })
  app.get('/page', { onRequest: app.auth.trace }, async (request) => ({ user: request.user?.name ?? null }))
  app.get('/account', { onRequest: app.auth.authenticate }, async (request) => ({ user: app.auth.mustGetUser(request).name }))
  app.post('/account', { onRequest: app.auth.authenticate }, async () => ({ changed: true }))
  const user = await signIn(app, { id: 'u1', name: 'ann' })
  return { app, user, logs }
}

/** A request with the session cookies only (what a page navigation sends), plus `headers`. */
const visit = async (p: PageApp, url: string, headers: Record<string, string>, method: 'GET' | 'HEAD' | 'POST' = 'GET') =>
  await p.app.inject({ method, url, cookies: { ...p.user.cookies }, headers })

t.test('xsrf.navigation: same-origin and typed navigations see the user', async (t) => {
  const p = await pageApp(true)
  t.teardown(() => p.app.close())
  t.same((await visit(p, '/page', { ...NAVIGATE, 'sec-fetch-site': 'same-origin' })).json(), { user: 'ann' }, 'a link of the site')
  t.same((await visit(p, '/page', { ...NAVIGATE, 'sec-fetch-site': 'none' })).json(), { user: 'ann' }, 'typed or bookmarked')
  t.equal((await visit(p, '/account', { ...NAVIGATE, 'sec-fetch-site': 'same-origin' })).statusCode, 200, 'authenticate accepts it')
  t.equal((await visit(p, '/account', { ...NAVIGATE, 'sec-fetch-site': 'same-origin' }, 'HEAD')).statusCode, 200, 'HEAD too')
})

t.test('xsrf.navigation: everything else still needs the header', async (t) => {
  const p = await pageApp(true)
  t.teardown(() => p.app.close())
  for (const site of ['cross-site', 'same-site']) {
    t.same((await visit(p, '/page', { ...NAVIGATE, 'sec-fetch-site': site })).json(), { user: null }, `${site} navigation: a guest`)
    t.equal((await visit(p, '/account', { ...NAVIGATE, 'sec-fetch-site': site })).statusCode, 401, `${site} navigation: 401`)
  }
  const post = await visit(p, '/account', { ...NAVIGATE, 'sec-fetch-site': 'same-origin' }, 'POST')
  t.equal(post.statusCode, 401, 'a POST navigation (a form) without the header: refused')
  t.equal(post.json().code, 'GATEHOUSE_XSRF')
  t.equal((await visit(p, '/account', {})).statusCode, 401, 'no Fetch Metadata (an old browser, a script elsewhere): refused')
  t.equal((await visit(p, '/account', { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' })).statusCode, 401, 'a same-origin fetch() must send the header')
  t.equal((await visit(p, '/account', { 'sec-fetch-site': 'same-origin' })).statusCode, 401, 'no Sec-Fetch-Mode: refused')
  const planted = await p.app.inject({ url: '/account', cookies: { ...p.user.cookies, 'XSRF-TOKEN': 'another-value-of-22ch' }, headers: { ...NAVIGATE, 'sec-fetch-site': 'same-origin' } })
  t.equal(planted.statusCode, 401, 'the XSRF cookie must still be the session\'s')
  t.equal((await visit(p, '/account', { ...p.user.headers, 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors' })).statusCode, 200, 'the header still works')
})

t.test('by default a navigation is a guest, and the ignored cookie session is logged at debug with the request id', async (t) => {
  const p = await pageApp(undefined)
  t.teardown(() => p.app.close())
  t.same((await visit(p, '/page', { ...NAVIGATE, 'sec-fetch-site': 'same-origin' })).json(), { user: null })
  const line = p.logs.find((l) => typeof l.msg === 'string' && l.msg.includes('cookie session ignored: no XSRF header'))
  t.ok(line, 'a debug line')
  t.equal(line?.level, 20, 'at debug level')
  t.ok(typeof line?.reqId === 'string' && line.reqId !== '', 'through request.log (carries reqId)')
  t.match(line?.msg, /xsrf\.navigation/, 'it names the option')
  t.equal((await visit(p, '/page', p.user.headers)).json().user, 'ann', 'with the header: the user')
})

t.test('xsrf.navigation must be a boolean', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  const err = await app.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1', xsrf: { navigation: 'yes' as unknown as boolean } }).then(() => null, (e: unknown) => e)
  t.type(err, OptionsError)
  t.equal((err as OptionsError).option, 'xsrf.navigation')
})

t.test('the XSRF cookie as the Cookie header carries it: any order, names and values trimmed, the first one wins, %-encoded read decoded; cached session or not', async (t) => {
  const p = await pageApp(undefined)
  t.teardown(() => p.app.close())
  const jwt = p.user.cookies.JWT!
  const x = p.user.cookies['XSRF-TOKEN']!
  const encoded = `%${x.charCodeAt(0).toString(16).toUpperCase()}${x.slice(1)}`
  const cases: Array<[string, number]> = [
    [`XSRF-TOKEN=${x}; JWT=${jwt}`, 200],
    [`JWT=${jwt};  XSRF-TOKEN =  ${x}\t`, 200],
    [`JWT=${jwt}; XSRF-TOKEN=${encoded}`, 200],
    [`JWT=${jwt}; XSRF-TOKEN=${x}; XSRF-TOKEN=wrong`, 200],
    [`JWT=${jwt}; XSRF-TOKEN=wrong; XSRF-TOKEN=${x}`, 401],
    [`JWT=${jwt}; XSRF-TOKEN=${x.slice(0, -1)}`, 401],
    [`JWT=${jwt}; XSRF-TOKEN=${x}x`, 401],
    [`JWT=${jwt}; XSRF-TOKEN=`, 401],
    [`JWT=${jwt}; other=${x}`, 401],
    [`JWT=${jwt}`, 401]
  ]
  for (const cached of [true, false]) {
    for (const [cookie, status] of cases) {
      if (!cached) coreOf(p.app).tokens.cache.clear()
      const r = await p.app.inject({ url: '/account', headers: { cookie, 'x-xsrf-token': x } })
      t.equal(r.statusCode, status, `${cached ? 'cached' : 'first seen'}: ${cookie.replace(jwt, '<jwt>')}`)
      if (status === 401) t.equal(r.json().code, 'GATEHOUSE_XSRF')
    }
  }
})
