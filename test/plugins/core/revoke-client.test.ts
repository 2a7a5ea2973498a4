/**
 * `/revoke` ends only what was issued to the client revoking (RFC 7009 §2.1; issue 43, item 6): another client's
 * access or refresh token, a cookie session's token or one the app created itself is left alone, and the answer is
 * the 200 of an unknown token, so that it tells nothing.
 */
import t from 'tap'
import { clientsApp, type ClientsApp } from '../../helpers/clients-app.js'

const form = { 'content-type': 'application/x-www-form-urlencoded' }
const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })

let s: ClientsApp
t.before(async () => { s = await clientsApp() })
t.teardown(() => s.close())

async function revoke (clientId: string, token: string, hint?: string): Promise<number> {
  const payload = `client_id=${clientId}&token=${encodeURIComponent(token)}${hint === undefined ? '' : `&token_type_hint=${hint}`}`
  const r = await s.app.inject({ method: 'POST', url: '/auth/revoke', payload, headers: form })
  t.equal(r.headers['cache-control'], 'no-store')
  return r.statusCode
}

const signedIn = async (headers: Record<string, string>): Promise<number> => (await s.app.inject({ url: '/private', headers })).statusCode

t.test('another client\'s access and refresh tokens, and a token of no client, are answered 200 and left alone', async (t) => {
  const mobile = await s.pair('ann', 'mobile')
  for (const hint of [undefined, 'access_token', 'refresh_token']) {
    t.equal(await revoke('cli', mobile.access_token, hint), 200, `cli revoking mobile's access token (hint ${hint ?? 'none'}): 200`)
    t.equal(await signedIn(bearer(mobile.access_token)), 200, '…and the token still signs in')
  }
  t.equal(await revoke('cli', mobile.refresh_token), 200)
  const refreshed = await s.app.inject({ method: 'POST', url: '/auth/token', headers: form, payload: `grant_type=refresh_token&client_id=mobile&refresh_token=${mobile.refresh_token}` })
  t.equal(refreshed.statusCode, 200, 'mobile\'s refresh token still refreshes')

  const login = await s.app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'bob', passwd: 'x' } })
  const cookie = String(login.headers['set-cookie']).match(/JWT=([^;]+)/)![1]!
  const created = (await s.app.auth.tokens.create({ user: { id: 'u-carl', name: 'carl' } })).token
  for (const [what, token] of [['a cookie session\'s token', cookie], ['a token the app created', created]] as const) {
    t.equal(await revoke('mobile', token, 'access_token'), 200, `${what}: 200`)
    t.equal(await signedIn(bearer(token)), 200, `${what}: still signs in`)
  }
})

t.test('the client a token was issued to revokes it', async (t) => {
  const mobile = await s.pair('dan', 'mobile')
  t.equal(await revoke('mobile', mobile.access_token, 'access_token'), 200)
  t.equal(await signedIn(bearer(mobile.access_token)), 401, 'its family ended')
  const cli = await s.pair('dan', 'cli')
  t.equal(await revoke('cli', cli.access_token), 200)
  t.equal(await signedIn(bearer(cli.access_token)), 401)
})
