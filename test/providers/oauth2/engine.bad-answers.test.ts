/**
 * Issue 36's bad provider answers not covered by engine.test.ts, over real HTTP against the local stand-in: a token
 * endpoint that answers 200 with nothing but an OAuth2 error object, token answers whose fields have the wrong
 * types, and user documents whose fields have the wrong types or that are not objects at all. Each is a clear
 * 400/502 JSON answer with its code and no session; none is a 500. (Huge and hostile bodies: engine.test.ts and
 * test/e2e/sockets/oauth2-hostile-peers.test.ts.)
 */
import t, { type Test } from 'tap'
import { oauth2Provider } from '../../../providers/index.js'
import { startStandin, type StandinProfile } from '../../helpers/oauth2-standin.js'
import { APP_URL, currentUser, startApp } from '../../helpers/oauth2-app.js'

const USER = { id: 42, login: 'mona', name: 'Mona Lisa', avatar_url: 'https://avatars.example/42' }
const profile: StandinProfile = { clientId: 'gh-cid', clientSecret: 'gh-secret', tokenAuth: 'post', pkce: true, userinfo: USER }
const gh = await startStandin(profile)
t.teardown(gh.close)
const testApp = await startApp(async (app) => {
  await app.register(oauth2Provider, { name: 'github', cid: 'gh-cid', csecret: 'gh-secret', authURL: `${gh.url}/authorize`, tokenURL: `${gh.url}/token`, infoURL: `${gh.url}/userinfo` })
}, { rateLimit: { login: { max: 10_000 } } })
t.teardown(testApp.close)

/** A whole login with the stand-in answering as set; the final answer's status and body, and that no session came of it. */
async function login (t: Test, expectSession = false): Promise<{ status: number; body: Record<string, unknown> }> {
  const browser = testApp.browser()
  const nav = await browser.navigate(`${APP_URL}/auth/github/login`)
  const body = JSON.parse(nav.body) as Record<string, unknown>
  if (!expectSession) {
    t.equal(browser.cookieFor(`${APP_URL}/`, 'JWT'), undefined, 'no session cookie')
    t.equal((await currentUser(browser)).status, 401, 'not signed in')
  }
  return { status: nav.res.status, body }
}

t.afterEach(() => {
  delete profile.tokenExtra
  profile.userinfo = USER
})

t.test('the token endpoint answers 200 with an error object', async (t) => {
  // No token fields at all, as RFC 6749 §5.2 shapes an error (a provider sending it with 200 instead of 400).
  const only = { access_token: undefined, token_type: undefined, expires_in: undefined }
  for (const [error, status, answer, code] of [
    ['invalid_grant', 400, 'authorization code rejected', 'GATEHOUSE_BAD_REQUEST'],
    ['invalid_client', 502, 'token endpoint refused the exchange', 'GATEHOUSE_UPSTREAM'],
    ['server_error', 502, 'token endpoint refused the exchange', 'GATEHOUSE_UPSTREAM'],
    ['temporarily_unavailable', 502, 'token endpoint refused the exchange', 'GATEHOUSE_UPSTREAM']
  ] as const) {
    profile.tokenExtra = { ...only, error, error_description: 'told with a 200' }
    const r = await login(t)
    t.equal(r.status, status, error)
    t.same(r.body, { error: answer, details: error, code }, error)
  }
  // An error object beside a usable-looking token is still an error: the token is not used.
  profile.tokenExtra = { error: 'access_denied' }
  const both = await login(t)
  t.equal(both.status, 502)
  t.same(both.body, { error: 'token endpoint refused the exchange', details: 'access_denied', code: 'GATEHOUSE_UPSTREAM' })
  // A non-string error is not mistaken for a registered code.
  profile.tokenExtra = { ...only, error: { nested: 'object' } }
  const odd = await login(t)
  t.equal(odd.status, 502)
  t.equal(odd.body.code, 'GATEHOUSE_UPSTREAM')
})

t.test('token answer fields of the wrong type', async (t) => {
  for (const [what, extra, details] of [
    ['access_token a number', { access_token: 12345 }, 'no access_token'],
    ['access_token an array', { access_token: ['a', 'b'] }, 'no access_token'],
    ['access_token an object', { access_token: { value: 'x' } }, 'no access_token'],
    ['access_token null', { access_token: null }, 'no access_token'],
    ['access_token empty', { access_token: '' }, 'no access_token'],
    ['token_type a number', { token_type: 1 }, 'no token_type'],
    ['token_type an array', { token_type: ['bearer'] }, 'no token_type']
  ] as const) {
    profile.tokenExtra = extra
    const r = await login(t)
    t.equal(r.status, 502, what)
    t.same(r.body, { error: 'token endpoint answered garbage', details, code: 'GATEHOUSE_UPSTREAM' }, what)
  }
  // Fields the login does not use may be odd without harm: the sign-in goes on.
  profile.tokenExtra = { expires_in: 'soon', scope: 7, refresh_token: { x: 1 } }
  const r = await login(t, true)
  t.equal(r.status, 200, 'unused fields of the wrong type are ignored')
  t.equal(r.body.name, 'Mona Lisa')
})

t.test('user documents with fields of the wrong type, or not objects at all', async (t) => {
  for (const [what, doc] of [
    ['id an object', { ...USER, id: { value: 42 } }],
    ['id an array', { ...USER, id: [42] }],
    ['id a boolean', { ...USER, id: true }],
    ['id null', { ...USER, id: null }],
    ['id empty', { ...USER, id: '' }],
    ['id a fraction', { ...USER, id: 4.2 }]
  ] as const) {
    profile.userinfo = doc
    const r = await login(t)
    t.equal(r.status, 502, what)
    t.same(r.body, { error: 'userinfo malformed', details: 'field "id" is not a user id', code: 'GATEHOUSE_UPSTREAM' }, what)
  }
  for (const [what, doc] of [['an array', [USER]], ['null', null], ['a string', 'mona'], ['a number', 42]] as const) {
    profile.userinfo = doc
    const r = await login(t)
    t.equal(r.status, 502, what)
    t.match(r.body, { error: 'userinfo malformed', code: 'GATEHOUSE_UPSTREAM' }, what)
  }
  // Display fields of the wrong type do not break the sign-in, nor reach the user as such.
  profile.userinfo = { id: 42, login: 7, name: { first: 'Mona' }, avatar_url: ['https://avatars.example/42'] }
  const r = await login(t, true)
  t.equal(r.status, 200)
  t.type(r.body.name, 'string', 'the name is text')
  t.notOk(typeof r.body.picture === 'object', 'no picture of the wrong type')
})
