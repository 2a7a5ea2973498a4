/**
 * Built-in providers through their full login, table-driven: each case starts a local stand-in speaking that
 * provider's documented protocol (its client authentication, PKCE, quirks) and serving its documented user
 * document; one app registers every case's provider against its stand-in. `loginCase` then runs the browser
 * through login → stand-in authorize → callback → session and checks what the provider's documentation implies.
 */
import type { Test } from 'tap'
import { userId } from '../../lib/user.js'
import { oauth2Provider, type BuiltinProviderName } from '../../providers/index.js'
import { startStandin, type Standin, type StandinProfile } from './oauth2-standin.js'
import { APP_URL, currentUser, startApp, type TestApp } from './oauth2-app.js'

export interface BuiltinCase {
  name: BuiltinProviderName
  /** The stand-in: the protocol and payloads as the provider documents them. */
  profile: Omit<StandinProfile, 'clientId' | 'clientSecret'>
  /**
   * Registration options besides name, cid and csecret, from the stand-in's URL. Default: the endpoints
   * overridden to the stand-in's (with its JWKS and issuer for an OpenID Connect provider).
   */
  options?: (url: string) => Record<string, unknown>
  /** Path below the stand-in's URL of the ID tokens' issuer (a realm, an application). Default none. */
  issuerPath?: string
  /** The scope sent (null: none). */
  scope: string | null
  /** Authorization-request parameters the provider requires. */
  authParams?: Record<string, string>
  /** The user: the provider's stable id (hashed into ours), the name and the picture link handed over. */
  expect: { rawId: string; name: string; picture: string | undefined }
}

/** A case's running stand-in and the profile it serves (its `userinfo` may be replaced by a test). */
export interface RunningCase { standin: Standin; profile: StandinProfile }

/** Starts every case's stand-in and one app with every case's provider; torn down with `t`. */
export async function startCases (t: Test, cases: BuiltinCase[]): Promise<{ app: TestApp; running: Map<string, RunningCase> }> {
  const running = new Map<string, RunningCase>()
  for (const c of cases) {
    const profile: StandinProfile = { ...c.profile, clientId: `${c.name}-cid`, clientSecret: `${c.name}-secret` }
    const standin = await startStandin(profile)
    if (c.issuerPath !== undefined) standin.issuer = standin.url + c.issuerPath
    running.set(c.name, { standin, profile })
    t.teardown(standin.close)
  }
  const app = await startApp(async (app) => {
    for (const c of cases) {
      const s = running.get(c.name)!.standin
      await app.register(oauth2Provider, { name: c.name, cid: `${c.name}-cid`, csecret: `${c.name}-secret`, ...(c.options ?? defaultOptions(c))(s.url) } as never)
    }
    // Every login of a file comes from one address within a minute: above the default login limit, which is
    // tested on its own (test/lib/throttle, test/e2e/redis/lockout.test.ts).
  }, { rateLimit: { login: { max: 10_000 } } })
  t.teardown(app.close)
  return { app, running }
}

function defaultOptions (c: BuiltinCase): (url: string) => Record<string, unknown> {
  return (url) => ({
    authURL: `${url}/authorize`,
    tokenURL: `${url}/token`,
    infoURL: `${url}/userinfo`,
    ...(c.profile.oidc === true ? { jwksURL: `${url}/jwks`, issuer: url } : {})
  })
}

/** One full login through `c`'s stand-in; resolves the session's user id. */
export async function loginCase (t: Test, testApp: TestApp, run: RunningCase, c: BuiltinCase): Promise<string> {
  const s = run.standin
  const browser = testApp.browser()
  const infoCalls = s.infoAuth.length
  const nav = await browser.navigate(`${APP_URL}/auth/${c.name}/login?site=site-${c.name}`)
  t.equal(nav.res.status, 200, `login ends in the user JSON (${nav.body})`)
  t.same(nav.hops.map((h) => h.status), [302, 302, 200], 'app login → provider authorize → app callback')

  const authz = s.authorizeRequests.at(-1)!
  t.equal(authz.get(c.profile.clientIdParam ?? 'client_id'), `${c.name}-cid`, 'client id under the documented parameter name')
  t.equal(authz.get('redirect_uri'), `${APP_URL}/auth/${c.name}/callback`, 'exact callback URL')
  t.equal(authz.get('scope'), c.scope, 'minimal scopes')
  for (const [k, v] of Object.entries(c.authParams ?? {})) t.equal(authz.get(k), v, `authorization parameter ${k}`)
  t.equal(authz.get('code_challenge_method'), c.profile.pkce ? 'S256' : null, c.profile.pkce ? 'PKCE S256 sent' : 'no PKCE where undocumented')
  t.equal(authz.has('nonce'), c.profile.oidc === true, 'nonce only for OpenID Connect providers')
  t.equal(s.tokenRequests.at(-1)!.basic, c.profile.tokenAuth === 'basic', `client authenticates by ${c.profile.tokenAuth}`)
  if (c.profile.userinfo === undefined) {
    t.equal(s.infoAuth.length, infoCalls, 'no userinfo call: the user came with the token or the ID token')
  } else if (c.profile.infoTokenIn === 'form') {
    t.equal(s.infoAuth.at(-1), '', 'the access token travels in the userinfo form, not a header')
  } else {
    t.match(s.infoAuth.at(-1), new RegExp(`^${c.profile.infoAuthScheme ?? 'Bearer'} `), 'userinfo auth scheme')
  }

  const id = userId(c.name, c.expect.rawId)
  const user = JSON.parse(nav.body) as Record<string, unknown>
  t.equal(user.id, id, 'the user id is the hash of the provider\'s documented stable id')
  t.equal(user.name, c.expect.name, 'mapped name')
  t.notOk(nav.body.includes(c.expect.rawId), 'the provider\'s own id is never exposed')
  t.equal(testApp.avatars.at(-1), c.expect.picture, 'picture link handed to the avatar proxy')

  const me = await currentUser(browser)
  t.equal(me.status, 200, 'session cookie works')
  t.equal(me.body.id, id)
  t.notOk(browser.cookieFor(`${APP_URL}/auth/${c.name}/callback`, `gatehouse-oauth2-${c.name}`), 'handshake cookie cleared')
  return String(me.body.id)
}
