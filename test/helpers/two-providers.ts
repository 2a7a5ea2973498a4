/**
 * The app of the hostile-provider tests: a plain OAuth2 provider (`github`, on a stand-in with userinfo) and an
 * OpenID Connect one (`google`, on a stand-in with ID tokens and a JWKS), each call to them with a deadline of
 * `timeoutMs`; every log line of the package lands in `lines`. Everything is closed at the end of `t`.
 */
import type { Test } from 'tap'
import { funcLogger } from '../../lib/logging/logger.js'
import { oauth2Provider } from '../../providers/index.js'
import { startStandin, type Standin } from './oauth2-standin.js'
import { startApp, type TestApp } from './oauth2-app.js'

export interface TwoProviders { gh: Standin; goo: Standin; app: TestApp; lines: string[] }

export async function startTwoProviders (t: Test, timeoutMs: number): Promise<TwoProviders> {
  const gh = await startStandin({ clientId: 'gh-cid', clientSecret: 'gh-secret', tokenAuth: 'post', pkce: true, userinfo: { id: 42, login: 'mona', name: 'Mona' } })
  t.teardown(gh.close)
  const goo = await startStandin({
    clientId: 'g-cid', clientSecret: 'g-secret', tokenAuth: 'post', pkce: true, oidc: true, idClaims: { sub: 'g-7' }, userinfo: { sub: 'g-7', name: 'Gee' }
  })
  t.teardown(goo.close)
  const lines: string[] = []
  const app = await startApp(async (app) => {
    await app.register(oauth2Provider, { name: 'github', cid: 'gh-cid', csecret: 'gh-secret', authURL: `${gh.url}/authorize`, tokenURL: `${gh.url}/token`, infoURL: `${gh.url}/userinfo`, timeout: timeoutMs })
    await app.register(oauth2Provider, {
      name: 'google', cid: 'g-cid', csecret: 'g-secret', authURL: `${goo.url}/authorize`, tokenURL: `${goo.url}/token`, infoURL: `${goo.url}/userinfo`,
      jwksURL: `${goo.url}/jwks`, issuer: goo.url, timeout: timeoutMs
    })
  }, { logger: funcLogger((l) => lines.push(l)) })
  t.teardown(app.close)
  return { gh, goo, app, lines }
}
