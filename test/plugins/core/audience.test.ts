import t from 'tap'
import { authPlugin } from '../../../auth.js'
import { injectApp } from '../../helpers/app.js'

// '' is the default audience (a login without aud): every app needs its secret, checked at startup.
const secrets: Record<string, string> = {
  '': 'secret-of-the-default-audience-0123456789',
  site1: 'secret-of-site-1-0123456789abcdef',
  site2: 'secret-of-site-2-0123456789abcdef',
  site3: 'secret-of-site-3-0123456789abcdef'
}

t.test('audiences allow-list: creation for another audience rejected, hooks check aud', async (t) => {
  const { app, client } = await injectApp(async (app) => {
    await app.register(authPlugin, {
      secret: { get: (aud) => secrets[aud] ?? '' },
      url: 'http://127.0.0.1',
      audiences: ['site1', 'site2'],
      providers: [{ kind: 'direct', name: 'local', checker: () => true }]
    })
    app.get('/private', { preHandler: app.auth.authenticate }, async (req) => ({ name: req.user!.name }))
  })
  t.teardown(() => app.close())

  const ok = client()
  let r = await ok.fetch('/auth/local/login', { method: 'POST', json: { user: 'a', passwd: 'b', aud: 'site1' } })
  t.equal(r.status, 200)
  r = await ok.fetch('/private', { headers: { 'x-xsrf-token': ok.jar.get('XSRF-TOKEN')! } })
  t.equal(r.status, 200)

  for (const aud of ['site3', undefined]) {
    const c = client()
    r = await c.fetch('/auth/local/login', { method: 'POST', json: { user: 'a', passwd: 'b', ...(aud !== undefined ? { aud } : {}) } })
    t.equal(r.status, 403, `login for aud ${String(aud)} rejected`)
    t.equal((await r.json()).error, 'forbidden')
    t.equal(c.jar.get('JWT'), undefined)
  }
  await t.rejects(app.auth.tokens.create({ aud: 'site3', user: { name: 'x', id: 'x' } }), { statusCode: 403 })

  // A token for site3 minted with site3's own secret (e.g. by another service) is refused by the hook.
  const { app: other } = await injectApp(async (o) => {
    await o.register(authPlugin, { secret: (aud) => secrets[aud] ?? '', url: 'http://127.0.0.1' })
  })
  t.teardown(() => other.close())
  const { token } = await other.auth.tokens.create({ aud: 'site3', user: { name: 'x', id: 'x' } })
  r = await client().fetch('/private', { headers: { 'x-jwt': token } })
  t.equal(r.status, 401, 'aud outside the list refused by the hook')
})

t.test('per-audience secrets isolate sites', async (t) => {
  const { app, client } = await injectApp(async (app) => {
    await app.register(authPlugin, {
      secret: async (aud) => secrets[aud] ?? '',
      url: 'http://127.0.0.1',
      providers: [{ kind: 'direct', name: 'local', checker: () => true }]
    })
    app.get('/private', { preHandler: app.auth.authenticate }, async (req) => ({ name: req.user!.name }))
  })
  t.teardown(() => app.close())

  const c = client()
  await c.fetch('/auth/local/login', { method: 'POST', json: { user: 'a', passwd: 'b', aud: 'site1' } })
  const token = c.jar.get('JWT')!
  t.equal((await client().fetch('/private', { headers: { 'x-jwt': token } })).status, 200, 'valid under its own secret')

  // Re-label the token's aud to site2: the signature was made with site1's secret, so it fails under site2's.
  const [h, p, s] = token.split('.')
  const payload = JSON.parse(Buffer.from(p!, 'base64url').toString())
  payload.aud = ['site2']
  const relabeled = `${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${s}`
  t.equal((await client().fetch('/private', { headers: { 'x-jwt': relabeled } })).status, 401, 'token of site1 is not valid for site2')

  // An audience without a secret cannot log in nor be verified.
  const r = await client().fetch('/auth/local/login', { method: 'POST', json: { user: 'a', passwd: 'b', aud: 'unknown-site' } })
  t.equal(r.status, 401)
  t.equal((await r.json()).error, 'unauthorized')
})
