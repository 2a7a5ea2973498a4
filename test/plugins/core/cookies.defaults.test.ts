/**
 * Cookie attributes by default on an https `url` (nothing about SameSite or Secure configured): both session
 * cookies SameSite=Lax and Secure, the JWT one HttpOnly. (The http defaults are checked in direct-login.test.ts.)
 */
import t from 'tap'
import { authPlugin } from '../../../auth.js'
import { listen, parseSetCookie } from '../../helpers/client.js'

const { app, base } = await listen(async (app) => {
  await app.register(authPlugin, {
    secret: () => 'cookie-defaults-secret-0123456789abcdef',
    url: 'https://auth.example.com',
    providers: [{ kind: 'direct', name: 'local', checker: (u: string, p: string) => u === 'alice' && p === 'alice-secret' }]
  })
})
t.teardown(() => app.close())

t.test('https url, no cookie options: SameSite=Lax and Secure on both cookies', async (t) => {
  const r = await fetch(`${base}/auth/local/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user: 'alice', passwd: 'alice-secret' }) })
  t.equal(r.status, 200)
  const cookies = r.headers.getSetCookie().map(parseSetCookie)
  // Matched by the end of the name: on https the names may carry a __Host- prefix.
  const jwt = cookies.find((c) => c.name.endsWith('JWT'))
  const xsrf = cookies.find((c) => c.name.endsWith('XSRF-TOKEN'))
  t.ok(jwt !== undefined && xsrf !== undefined, 'both cookies set')
  for (const c of [jwt!, xsrf!]) {
    t.equal(c.attrs.samesite, 'Lax', `${c.name}: SameSite=Lax by default`)
    t.equal(c.attrs.secure, true, `${c.name}: Secure on https`)
  }
  t.equal(jwt!.attrs.httponly, true)
  t.notOk(xsrf!.attrs.httponly, 'the XSRF cookie stays readable by scripts')
})
