/**
 * The package's sign-in page (issue 49, item 2; `login.page: true`, or left out without a `GET /login` of the app):
 * the providers it offers (OAuth2 ones as links, password ones as forms, the captcha's field when it guards them),
 * `from` kept when the redirect policy follows it, a refused sign-in shown on the page (never JSON), the page's
 * headers (unframeable, no script), its accessibility basics (lang, one h1, a label per field) and its theme.
 */
import t from 'tap'
import Fastify from 'fastify'
import { authPlugin, OptionsError, type AuthOptions } from '../../../index.js'
import { clientsApp, CLIENTS_SECRET } from '../../helpers/clients-app.js'

const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const github = { kind: 'oauth2', name: 'github', cid: 'gh-client', csecret: 'gh-secret' } as const
const passwords: Record<string, string> = { ann: 'ann-password' }
const local = { kind: 'direct', name: 'local', checker: (user: string, passwd: string) => passwords[user] === passwd } as const

const s = await clientsApp({ login: { page: true, captcha: { field: 'answer', providers: ['staff'], verify: (c) => c.token === '42' } }, providers: [github, local, { kind: 'direct', name: 'staff', checker: () => true }] })
t.teardown(s.close)

t.test('the page: providers as links and forms, from kept, its headers, accessible', async (t) => {
  const r = await s.app.inject({ url: '/auth/sign-in?from=%2Fauth%2Fdevice%3Fuser_code%3DBCDF-GHJK' })
  t.equal(r.statusCode, 200)
  t.equal(r.headers['content-type'], 'text/html; charset=utf-8')
  t.equal(r.headers['x-frame-options'], 'DENY')
  t.match(r.headers['content-security-policy'], /default-src 'none'.*frame-ancestors 'none'/)
  // Its sign-in is answered by redirects to `from` (here on the app's loopback origin), and from /authorize on to a
  // registered app's redirect URI (com.example.app:/callback, http://127.0.0.1/callback on any port): those only.
  t.match(r.headers['content-security-policy'], /(^|; )form-action 'self' http:\/\/127\.0\.0\.1:\* com\.example\.app:;/)
  t.notMatch(r.body, /<script/i, 'no script')
  t.match(r.body, /<html lang="en">/)
  t.equal(r.body.match(/<h1>/g)?.length, 1, 'one h1')
  t.match(r.body, /<h1>Sign in<\/h1>/)
  const to = encodeURIComponent(`${s.base}/auth/device?user_code=BCDF-GHJK`)
  t.match(r.body, `<a class="button" href="${s.base}/auth/github/login?from=${to}" data-provider="github">Continue with GitHub</a>`)
  t.match(r.body, `<form method="post" action="${s.base}/auth/local/login?from=${to}&amp;page=sign-in" id="form-local"><h2>With your Local password</h2>`)
  for (const id of ['user-local', 'passwd-local', 'user-staff', 'passwd-staff', 'captcha-staff']) {
    t.match(r.body, new RegExp(`<label for="${id}">[^<]+</label><input id="${id}"`), `${id} has its label`)
  }
  t.match(r.body, '<input id="captcha-staff" name="answer"', 'the captcha\'s field on the form of the provider it guards')
  t.notMatch(r.body, 'captcha-local', 'and only there')
  t.match(r.body, 'autocomplete="current-password"')
})

t.test('from: a link the redirect policy would not follow is dropped for the app\'s address; quotes are escaped', async (t) => {
  const evil = await s.app.inject({ url: '/auth/sign-in?from=https%3A%2F%2Fevil.example%2F' })
  t.notMatch(evil.body, /evil\.example/)
  t.match(evil.body, `from=${encodeURIComponent(`${s.base}/`)}`)
  const quoted = await s.app.inject({ url: `/auth/sign-in?from=${encodeURIComponent('/a"><script>x</script>')}` })
  t.notMatch(quoted.body, /<script>/)
})

t.test('a refused sign-in comes back to the page with the reason; a right one goes on to from', async (t) => {
  const action = `/auth/local/login?from=${encodeURIComponent('/somewhere')}&page=sign-in`
  const post = async (url: string, fields: Record<string, string>) => await s.app.inject({ method: 'POST', url, headers: { ...FORM, origin: s.base, 'sec-fetch-site': 'same-origin' }, payload: new URLSearchParams(fields).toString() })
  const wrong = await post(action, { user: 'ann', passwd: 'nope' })
  t.equal(wrong.statusCode, 303)
  t.equal(wrong.headers.location, `${s.base}/auth/sign-in?error=GATEHOUSE_CREDENTIALS&from=%2Fsomewhere`)
  const shown = await s.app.inject({ url: wrong.headers.location!.slice(s.base.length) })
  t.match(shown.body, '<p id="error" class="message error" role="alert">Incorrect user name or password.</p>')
  t.equal(wrong.cookies.filter((c) => c.name === 'JWT' && c.value !== '').length, 0, 'no session')

  const right = await post(action, { user: 'ann', passwd: 'ann-password' })
  t.equal(right.statusCode, 303)
  t.equal(right.headers.location, `${s.base}/somewhere`)
  t.ok(right.cookies.some((c) => c.name === 'JWT' && c.value !== ''), 'signed in')

  const noCaptcha = await post(`/auth/staff/login?page=sign-in`, { user: 'bo', passwd: 'x' })
  t.match(noCaptcha.headers.location, /\?error=GATEHOUSE_CAPTCHA$/)
  t.match((await s.app.inject({ url: noCaptcha.headers.location!.slice(s.base.length) })).body, 'The captcha was not solved: try again.')
  t.equal((await post(`/auth/staff/login?page=sign-in&from=%2Fok`, { user: 'bo', passwd: 'x', answer: '42' })).headers.location, `${s.base}/ok`)
  const forged = await s.app.inject({ url: '/auth/sign-in?error=%3Cb%3Eyou+were+hacked%3C%2Fb%3E' })
  t.match(forged.body, 'The sign-in did not work: try again.', 'an unknown code shows the generic text, never text from the URL')
  t.notMatch(forged.body, /hacked/)

  const json = await post('/auth/local/login', { user: 'ann', passwd: 'nope' })
  t.equal(json.statusCode, 403, 'a form not from the page answers JSON as ever')
  t.equal(json.json().code, 'GATEHOUSE_CREDENTIALS')
})

t.test('a device or native sign-in is sent to the page', async (t) => {
  const r = await s.app.inject({ url: '/auth/device' })
  t.equal(r.statusCode, 302)
  t.equal(r.headers.location, `${s.base}/auth/sign-in?from=%2Fauth%2Fdevice`)
})

t.test('login.page left out: the app\'s GET /login when it has one, else the package\'s page, said in the log', async (t) => {
  const lines: string[] = []
  const none = await clientsApp({ logger: { logf: (f: string, ...a: unknown[]) => { lines.push([f, ...a].join(' ')) } } })
  t.teardown(none.close)
  t.match((await none.app.inject({ url: '/auth/device' })).headers.location, `${none.base}/auth/sign-in?from=`)
  t.equal((await none.app.inject({ url: '/auth/sign-in' })).statusCode, 200)
  t.ok(lines.some((l) => l.includes('no GET /login route') && l.includes('/auth/sign-in')), 'said once at startup')

  const own = await clientsApp({}, { setup: (app) => { app.get('/login', async () => 'my page') } })
  t.teardown(own.close)
  t.equal((await own.app.inject({ url: '/auth/device' })).headers.location, `${own.base}/login?from=%2Fauth%2Fdevice`)

  const path = await clientsApp({ login: { page: '/welcome' } })
  t.teardown(path.close)
  t.equal((await path.app.inject({ url: '/auth/device' })).headers.location, `${path.base}/welcome?from=%2Fauth%2Fdevice`, 'a page given is used as it is')
  t.equal((await path.app.inject({ url: '/auth/sign-in' })).statusCode, 404, 'and the package serves none')
})

t.test('no page without a use for it: no clients, no session page, login.page left out', async (t) => {
  const app = Fastify()
  await app.register(authPlugin, { secret: CLIENTS_SECRET, url: 'http://127.0.0.1' })
  t.teardown(() => app.close())
  t.equal((await app.inject({ url: '/auth/sign-in' })).statusCode, 404)
})

t.test('the theme: CSS custom properties, checked', async (t) => {
  const app = Fastify()
  await app.register(authPlugin, { secret: CLIENTS_SECRET, url: 'http://127.0.0.1', login: { page: { theme: { accent: '#0a7d33', font: 'Georgia, serif' } } } })
  t.teardown(() => app.close())
  const r = await app.inject({ url: '/auth/sign-in' })
  t.match(r.body, '--gatehouse-accent:#0a7d33')
  t.match(r.body, '--gatehouse-font:Georgia, serif')
  t.match(r.body, '--gatehouse-background:#ffffff', 'the others keep their defaults')
  for (const [theme, option] of [[{ accent: 'red;}body{display:none' }, 'login.page.theme.accent'], [{ accent: '</style><script>' }, 'login.page.theme.accent'], [{ colour: 'red' }, 'login.page.theme.colour'], [{ font: '' }, 'login.page.theme.font']] as const) {
    const bad = Fastify()
    const err = await bad.register(authPlugin, { secret: CLIENTS_SECRET, url: 'http://127.0.0.1', login: { page: { theme } } } as AuthOptions).ready().then(() => undefined, (e: unknown) => e)
    t.type(err, OptionsError)
    t.equal((err as OptionsError).option, option)
    await bad.close()
  }
})
