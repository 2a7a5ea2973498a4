/**
 * A registered client's family at the routes that change factors (issue 33's rules, issue 34's clients): a Bearer
 * access token is a header token, so it never adds or removes an authenticator app or a passkey, never gets recovery
 * codes and never ends the user's other sessions (403), fresh as its sign-in may be and with the password in the
 * body; and step-up belongs to the session that did it: a code typed in the browser opens nothing for the family,
 * and the family's own confirmation opens nothing for the browser.
 */
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { pkceChallenge } from '../../../lib/pkce.js'
import { accountApp, addApp, call, fakeClock, PASSWORDS, signIn, signInWithCode } from '../../helpers/account-app.js'
import type { Client } from '../../helpers/client.js'
import { oathtool } from '../../helpers/totp-app.js'

const REDIRECT = 'com.example.app:/callback'
const CLIENTS = { clients: [{ id: 'mobile', kind: 'native' as const, name: 'Phone', redirectUris: [REDIRECT] }] }

const cookieOf = (c: Client): string => [...c.jar.cookies].map(([name, cookie]) => `${name}=${cookie.value}`).join('; ')

/** A family of the browser's user, signed in through `/authorize` and the code grant, as a native app would be. */
async function familyOf (app: FastifyInstance, c: Client): Promise<{ access_token: string; refresh_token: string }> {
  const verifier = 'v'.repeat(43)
  const q = new URLSearchParams({ response_type: 'code', client_id: 'mobile', redirect_uri: REDIRECT, code_challenge: pkceChallenge(verifier), code_challenge_method: 'S256', state: 's' })
  const r = await app.inject({ url: `/auth/authorize?${q.toString()}`, headers: { cookie: cookieOf(c), 'sec-fetch-site': 'none' } })
  const code = new URL(r.headers.location as string).searchParams.get('code')
  if (code === null) throw new Error(`authorize answered ${r.statusCode} ${r.headers.location as string}`)
  const token = await app.inject({ method: 'POST', url: '/auth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ grant_type: 'authorization_code', client_id: 'mobile', code, redirect_uri: REDIRECT, code_verifier: verifier }).toString() })
  if (token.statusCode !== 200) throw new Error(`token answered ${token.statusCode} ${token.body}`)
  return token.json()
}

const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })
async function withBearer (app: FastifyInstance, token: string, method: 'GET' | 'POST' | 'DELETE', url: string, body: Record<string, unknown> = {}) {
  return await app.inject({ method, url, headers: bearer(token), ...(method === 'GET' ? {} : { payload: body }) })
}

/** Alice signed in in a browser with an authenticator app, and a family of hers; the clock 30 s on (a new step). */
async function aliceWithFamily (t: Test) {
  const clock = fakeClock(t)
  const acct = await accountApp(t, CLIENTS)
  const owner = acct.client()
  await signIn(owner, 'alice')
  const { secret } = await addApp(owner)
  const family = await familyOf(acct.app, owner)
  clock.tick(30_000)
  return { clock, acct, app: acct.app, owner, secret, family }
}

t.test('a family\'s Bearer token changes no factor and ends no other session: 403 at each route', async (t) => {
  const { clock, acct, app, owner, secret, family } = await aliceWithFamily(t)
  const password = PASSWORDS.alice
  const routes: Array<[string, 'POST' | 'DELETE', string, Record<string, unknown>]> = [
    ['add an authenticator app', 'POST', '/auth/totp/enrol', { password }],
    ['confirm an enrolment', 'POST', '/auth/totp/enrol/confirm', { code: oathtool(secret) }],
    ['new recovery codes', 'POST', '/auth/totp/recovery-codes', { password, code: oathtool(secret) }],
    ['remove the authenticator app', 'DELETE', '/auth/totp/', { password, code: oathtool(secret) }],
    ['passkey registration options', 'POST', '/auth/passkey/register/options', { password }],
    ['register a passkey', 'POST', '/auth/passkey/register', { password }],
    ['end every other session', 'DELETE', '/auth/sessions', { password }]
  ]
  for (const [name, method, url, body] of routes) {
    const r = await withBearer(app, family.access_token, method, url, body)
    t.equal(r.statusCode, 403, `${name}: 403`)
    t.match(r.json(), { code: 'GATEHOUSE_FORBIDDEN', details: /never with a token in a header or URL/ }, name)
  }
  const browserSession = (await app.auth.tokens.parse(owner.jar.get('JWT')!)).jti
  const other = await withBearer(app, family.access_token, 'DELETE', `/auth/sessions/${browserSession}`, { password })
  t.equal(other.statusCode, 403, 'ending the browser\'s session by id: 403')
  t.same(await (await call(owner, 'GET', '/auth/totp/status')).json(), { enabled: true, pending: false, recoveryCodesLeft: 10 }, 'nothing changed')
  t.equal((await call(owner, 'GET', '/auth/sessions')).status, 200, 'the browser\'s session lives')
  const own = await withBearer(app, family.access_token, 'GET', '/auth/sessions')
  t.equal(own.statusCode, 200, 'the family still reads the list (reading changes nothing)')
})

t.test('step-up is per session: the browser\'s code opens nothing for the family, and the family\'s nothing for the browser', async (t) => {
  const { clock, acct, app, owner, secret, family } = await aliceWithFamily(t)
  t.equal((await call(owner, 'POST', '/auth/totp/verify', { code: oathtool(secret) })).status, 200, 'the browser steps up')
  t.equal((await call(owner, 'POST', '/change-password')).status, 200, 'the browser passes recent()')
  const familyTry = await withBearer(app, family.access_token, 'POST', '/change-password')
  t.equal(familyTry.statusCode, 401, 'the family does not')
  t.match(familyTry.json(), { code: 'GATEHOUSE_STEP_UP' })

  // A second browser of the user, and the family steps up by itself.
  const laptop = acct.client()
  clock.tick(30_000)
  await signInWithCode(laptop, 'alice', secret)
  clock.tick(5 * 60_000 + 1_000)
  t.equal((await call(laptop, 'POST', '/change-password')).status, 401, 'the laptop\'s sign-in with a code has run out as a step-up')
  t.equal((await withBearer(app, family.access_token, 'POST', '/auth/totp/verify', { code: oathtool(secret) })).statusCode, 200, 'the family types a code of its own')
  t.equal((await withBearer(app, family.access_token, 'POST', '/change-password')).statusCode, 200, 'and passes recent()')
  const laptopTry = await call(laptop, 'POST', '/change-password')
  t.equal(laptopTry.status, 401, 'the other browser still does not')

  // The step-up is the family's session: a refreshed access token (same family) keeps it; ending the family ends it.
  const next = await app.inject({ method: 'POST', url: '/auth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ grant_type: 'refresh_token', client_id: 'mobile', refresh_token: family.refresh_token }).toString() })
  t.equal(next.statusCode, 200)
  t.equal((await withBearer(app, next.json().access_token, 'POST', '/change-password')).statusCode, 200, 'kept across a refresh of the family')
  clock.tick(5 * 60_000 + 1_000)
  t.equal((await withBearer(app, next.json().access_token, 'POST', '/change-password')).statusCode, 401, 'and runs out like any step-up')
})

