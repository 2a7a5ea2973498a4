import t from 'tap'
import { authPlugin } from '../../../auth.js'
import { injectApp } from '../../helpers/app.js'
import { coreOf } from '../../../plugins/core/signin/internals.js'

const { app, client } = await injectApp(async (app) => {
  await app.register(authPlugin, {
    secret: () => 'redirect-secret-1-0123456789abcdef',
    url: 'http://app.example.test:8080',
    allowedRedirectHosts: ['partner.example.test'],
    // GET logins (opt-in since issue 23): these cases read as go-pkgz/auth's query links.
    providers: [{ kind: 'direct', name: 'local', checker: () => true, allowGet: true }]
  })
})
t.teardown(() => app.close())

t.test('from redirects only to the url origin or allowed hosts', async (t) => {
  const allowed: Array<[string, string]> = [
    ['/dashboard?x=1', 'http://app.example.test:8080/dashboard?x=1'],
    ['http://app.example.test:8080/a', 'http://app.example.test:8080/a'],
    ['https://partner.example.test/back', 'https://partner.example.test/back']
  ]
  for (const [from, to] of allowed) {
    const c = client()
    const r = await c.fetch(`/auth/local/login?user=u&passwd=p&from=${encodeURIComponent(from)}`)
    t.equal(r.status, 303, `${from} followed`)
    t.equal(r.headers.get('location'), to)
    t.ok(c.jar.get('JWT'), 'session set')
  }
  const refused = ['https://evil.example', '//evil.example', '/\\evil.example', '\\\\evil.example', 'javascript:alert(1)',
    'http://app.example.test:9999/', 'https://app.example.test:8080/', 'http://user@app.example.test:8080@evil.example/',
    'http://partner.example.test.evil.example/', 'data:text/html,x',
    // User credentials in a link to an allowed place: a phishing look (`https://bank@evil`), never followed.
    'http://user:pw@app.example.test:8080/account', 'https://someone@partner.example.test/back']
  for (const from of refused) {
    const c = client()
    const r = await c.fetch(`/auth/local/login?user=u&passwd=p&from=${encodeURIComponent(from)}`)
    t.equal(r.status, 200, `${from} not followed`)
    t.equal(r.headers.get('location'), null)
    t.equal((await r.json()).name, 'u', 'JSON user instead')
  }
})

t.test('a from with control characters is a bad request: no redirect and no session', async (t) => {
  for (const from of ['/\t/evil.example', '/\n/evil.example', '/ok\u0000']) {
    const c = client()
    const r = await c.fetch(`/auth/local/login?user=u&passwd=p&from=${encodeURIComponent(from)}`)
    t.equal(r.status, 400, `${JSON.stringify(from)} refused`)
    t.equal(r.headers.get('location'), null)
    t.equal(c.jar.get('JWT'), undefined, 'no session')
  }
  // The redirect policy itself refuses them too, for providers that take `from` elsewhere.
  t.equal(coreOf(app).safeRedirect('/\t/evil.example'), undefined)
})
