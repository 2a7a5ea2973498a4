import t from 'tap'
import { authPlugin } from '../../auth.js'
import { client, listen } from '../helpers/client.js'

const users: Record<string, string> = { alice: 'alice-secret', bob: 'bob-secret' }

const { app, base } = await listen(async (app) => {
  await app.register(authPlugin, {
    secret: () => 'test-secret-0123456789-0123456789abcdef',
    url: 'http://127.0.0.1',
    providers: [{ kind: 'direct', name: 'local', checker: (u, p) => users[u] === p, allowGet: true }]
  })
  app.auth.addDirectProvider('other', (u, p) => u === 'zed' && p === 'zed-pw')
  app.get('/private', { preHandler: app.auth.authenticate }, async (req) => ({ name: req.user!.name }))
})
t.teardown(() => app.close())

t.test('/list names every provider in registration order', async (t) => {
  const r = await client(base).fetch('/auth/list')
  t.equal(r.status, 200)
  t.same(await r.json(), ['local', 'other'])
  t.equal(r.headers.get('cache-control'), 'no-store')
})

t.test('POST form login sets JWT and XSRF cookies and returns the user', async (t) => {
  const c = client(base)
  const r = await c.fetch('/auth/local/login', { method: 'POST', form: { user: 'alice', passwd: 'alice-secret' } })
  t.equal(r.status, 200)
  t.equal(r.headers.get('cache-control'), 'no-store')
  const body = await r.json()
  t.equal(body.name, 'alice')
  t.match(body.id, /^local_[0-9a-f]{40}$/)
  const jwt = c.jar.cookies.get('JWT')!
  const xsrf = c.jar.cookies.get('XSRF-TOKEN')!
  t.ok(jwt.attrs.httponly, 'JWT cookie is HttpOnly')
  t.equal(jwt.attrs.samesite, 'Lax')
  t.notOk(jwt.attrs.secure, 'not Secure on an http url')
  t.equal(jwt.attrs['max-age'], String(31 * 86400))
  t.notOk(xsrf.attrs.httponly, 'XSRF cookie readable by scripts')
  t.equal(xsrf.attrs['max-age'], String(31 * 86400))
})

t.test('POST JSON login and GET query login (allowGet) both work', async (t) => {
  const c1 = client(base)
  const r1 = await c1.fetch('/auth/other/login', { method: 'POST', json: { user: 'zed', passwd: 'zed-pw', aud: 'site1' } })
  t.equal(r1.status, 200)
  t.equal((await r1.json()).name, 'zed')
  const c2 = client(base)
  const r2 = await c2.fetch('/auth/local/login?user=bob&passwd=bob-secret')
  t.equal(r2.status, 200)
  t.ok(c2.jar.get('JWT'))
  const c3 = client(base)
  const r3 = await c3.fetch('/auth/other/login?user=zed&passwd=zed-pw')
  t.equal(r3.status, 405, 'without allowGet a GET login is refused')
  t.equal(c3.jar.get('JWT'), undefined)
})

t.test('session=1 makes both cookies session-only', async (t) => {
  const c = client(base)
  const r = await c.fetch('/auth/local/login?session=1', { method: 'POST', form: { user: 'alice', passwd: 'alice-secret' } })
  t.equal(r.status, 200)
  for (const name of ['JWT', 'XSRF-TOKEN']) {
    const ck = c.jar.cookies.get(name)!
    t.notOk(ck.attrs['max-age'], `${name} has no Max-Age`)
    t.notOk(ck.attrs.expires, `${name} has no Expires`)
  }
  // and the session still works
  const u = await c.fetch('/auth/user', { headers: { 'x-xsrf-token': c.jar.get('XSRF-TOKEN')! } })
  t.equal(u.status, 200)
})

t.test('/user and /status signed in and out; logout clears the session', async (t) => {
  const c = client(base)
  let r = await c.fetch('/auth/user')
  t.equal(r.status, 401)
  t.same(await r.json(), { error: 'unauthorized', details: 'not logged in', code: 'GATEHOUSE_UNAUTHORIZED' })
  r = await c.fetch('/auth/status')
  t.same(await r.json(), { status: 'not logged in' })

  await c.fetch('/auth/local/login', { method: 'POST', form: { user: 'alice', passwd: 'alice-secret' } })
  const xsrf = { 'x-xsrf-token': c.jar.get('XSRF-TOKEN')! }
  r = await c.fetch('/auth/user', { headers: xsrf })
  t.equal(r.status, 200)
  t.equal((await r.json()).name, 'alice')
  r = await c.fetch('/auth/status', { headers: xsrf })
  t.same(await r.json(), { status: 'logged in', user: 'alice' })
  r = await c.fetch('/private', { headers: xsrf })
  t.same(await r.json(), { name: 'alice' })

  r = await c.fetch('/auth/logout')
  t.equal(r.status, 200)
  t.equal(c.jar.get('JWT'), undefined, 'JWT cookie cleared')
  t.equal(c.jar.get('XSRF-TOKEN'), undefined, 'XSRF cookie cleared')
  r = await c.fetch('/auth/status', { headers: xsrf })
  t.same(await r.json(), { status: 'not logged in' })
})

t.test('provider logout clears the session too', async (t) => {
  const c = client(base)
  await c.fetch('/auth/local/login', { method: 'POST', form: { user: 'alice', passwd: 'alice-secret' } })
  const r = await c.fetch('/auth/local/logout')
  t.equal(r.status, 200)
  t.equal(c.jar.get('JWT'), undefined)
})

t.test('bad inputs: 4xx JSON, no cookie set', async (t) => {
  const cases: Array<[string, RequestInit & { json?: unknown; form?: Record<string, string> }, number]> = [
    ['/auth/local/login', { method: 'POST', form: { user: 'alice', passwd: 'wrong' } }, 403],
    ['/auth/local/login', { method: 'POST', form: { user: 'alice' } }, 400],
    ['/auth/local/login', { method: 'POST', form: { passwd: 'x' } }, 400],
    ['/auth/local/login', { method: 'POST', json: { user: 'alice', passwd: 42 } }, 400],
    ['/auth/local/login', { method: 'POST', json: ['alice'] }, 400],
    ['/auth/local/login', { method: 'POST', body: '{"user":', headers: { 'content-type': 'application/json' } }, 400],
    ['/auth/local/login', { method: 'POST', body: 'x', headers: { 'content-type': 'text/plain' } }, 415],
    ['/auth/local/login', { method: 'POST', body: '<x/>', headers: { 'content-type': 'application/xml' } }, 415],
    ['/auth/local/login', { method: 'POST', json: { user: 'a'.repeat(300), passwd: 'x' } }, 400],
    ['/auth/local/login', { method: 'POST', json: { user: 'alice', passwd: 'x'.repeat(70 * 1024) } }, 413],
    ['/auth/local/login', { method: 'POST', json: { user: 'alice\n[ERROR] forged', passwd: 'alice-secret' } }, 400],
    ['/auth/local/login', { method: 'POST', json: { user: '   ', passwd: 'alice-secret' } }, 400],
    ['/auth/local/login', { method: 'POST', json: { user: 'alice', passwd: 'alice-secret', from: ['/a', '/b'] } }, 400],
    ['/auth/local/login?user=alice', {}, 400],
    ['/auth/local/login?user=alice&passwd=alice-secret&aud=a&aud=b', {}, 400],
    ['/auth/nobody/login', {}, 404],
    ['/auth/local/callback', {}, 404],
    ['/auth/no/such/route', {}, 404]
  ]
  for (const [path, init, status] of cases) {
    const c = client(base)
    const r = await c.fetch(path, init)
    t.equal(r.status, status, `${init.method ?? 'GET'} ${path} → ${status}`)
    t.match(r.headers.get('content-type'), /application\/json/)
    const body = await r.json()
    t.type(body.error, 'string', 'error field present')
    t.equal(c.jar.get('JWT'), undefined, 'no session cookie')
  }
})

t.test('a field that is not a string says so; a body of a media type the route does not read is one 415', async (t) => {
  const login = (body: string, type: string) => client(base).fetch('/auth/local/login', { method: 'POST', body, headers: { 'content-type': type } })
  const bad = (details: string) => ({ error: 'bad request', details, code: 'GATEHOUSE_BAD_REQUEST' })
  for (const [body, details] of [
    ['{"user":123,"passwd":"alice-secret"}', 'user must be a string'],
    ['{"user":{"name":"alice"},"passwd":"alice-secret"}', 'user must be a string'],
    ['{"user":"alice","passwd":5}', 'passwd must be a string'],
    ['{"user":"alice","passwd":"alice-secret","aud":true}', 'aud must be a string'],
    ['{"user":["alice","bob"],"passwd":"alice-secret"}', 'user must be given once']
  ]) {
    const r = await login(body!, 'application/json')
    t.equal(r.status, 400, body)
    t.same(await r.json(), bad(details!), details)
  }
  const form = await login('user=alice&user=bob&passwd=x', 'application/x-www-form-urlencoded')
  t.same(await form.json(), bad('user must be given once'), 'a repeated form field')
  const unsupported = { error: 'unsupported media type', details: 'send application/json or application/x-www-form-urlencoded', code: 'GATEHOUSE_UNSUPPORTED_MEDIA_TYPE' }
  for (const [type, body] of [['application/xml', '<login><user>alice</user></login>'], ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="user"\r\n\r\nalice\r\n--x--'], ['text/plain', 'user=alice&passwd=alice-secret'], ['text/plain; charset=utf-8', '{"user":"alice"}']]) {
    const c = client(base)
    const r = await c.fetch('/auth/local/login', { method: 'POST', body, headers: { 'content-type': type! } })
    t.equal(r.status, 415, type)
    t.same(await r.json(), unsupported, `${type}: the same label and code`)
    t.equal(c.jar.get('JWT'), undefined, 'no session')
  }
})

t.test('a throwing checker is a 503 JSON, not a crash', async (t) => {
  const { app: app2, base: base2 } = await listen(async (a) => {
    await a.register(authPlugin, { secret: () => 's3cret-s3cret-0123456789abcdef-0123456789abcdef', url: 'http://127.0.0.1' })
    a.auth.addDirectProvider('boom', () => { throw new Error('db down') })
  })
  t.teardown(() => app2.close())
  const r = await client(base2).fetch('/auth/boom/login', { method: 'POST', json: { user: 'a', passwd: 'b' } })
  t.equal(r.status, 503)
  t.same(await r.json(), { error: 'unavailable', details: 'credential check failed', code: 'GATEHOUSE_UNAVAILABLE' })
})

t.test('the checker gets the password exactly as sent: long, any characters, no trimming or case change (ASVS 6.2.8, 6.2.9)', async (t) => {
  const seen: string[] = []
  const { app: own, base: ownBase } = await listen(async (app) => {
    await app.register(authPlugin, {
      secret: () => 'test-secret-0123456789-0123456789abcdef',
      url: 'http://127.0.0.1',
      providers: [{ kind: 'direct', name: 'local', checker: (_u, p) => { seen.push(p); return true } }]
    })
  })
  t.teardown(() => own.close())
  const passwords = [
    '  Spaces Around, MiXeD case  ',
    'ｆｕｌｌwidth, é and e\u0301, 🔑, tab\there',
    'x'.repeat(63) + 'Y' + ' '.repeat(36) + 'end', // 103 characters
    'p'.repeat(4096)
  ]
  for (const passwd of passwords) {
    const r = await client(ownBase).fetch('/auth/local/login', { method: 'POST', json: { user: 'alice', passwd } })
    t.equal(r.status, 200, `${passwd.length} characters sign in`)
  }
  t.same(seen, passwords, 'each password reached the checker unchanged')
  const form = await client(ownBase).fetch('/auth/local/login', { method: 'POST', form: { user: 'alice', passwd: passwords[0]! } })
  t.equal(form.status, 200)
  t.equal(seen.at(-1), passwords[0], 'a form body too')
})

t.test('every sign-in issues a new session: a new 128-bit random id, the cookie held before replaced (ASVS 7.2.3, 7.2.4)', async (t) => {
  const payloadOf = (jwt: string): { jti: string } => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8'))
  const c = client(base)
  const ids: string[] = []
  for (let i = 0; i < 3; i++) {
    const r = await c.fetch('/auth/local/login', { method: 'POST', form: { user: 'alice', passwd: 'alice-secret' } })
    t.equal(r.status, 200)
    ids.push(payloadOf(c.jar.cookies.get('JWT')!.value).jti)
  }
  for (const id of ids) t.match(id, /^[A-Za-z0-9_-]{22}$/, 'a session id is 16 random bytes, base64url')
  t.equal(new Set(ids).size, 3, 'a sign-in from a browser holding a session gets a new one')
})
