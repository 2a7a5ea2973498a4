/**
 * An ID token without `exp` is refused (OIDC Core §2: `exp` is required), with a control: the same provider's
 * token with `exp` signs in. Without the check a token would be good forever.
 */
import t from 'tap'
import { oauth2Provider } from '../../../providers/index.js'
import { APP_URL, startApp } from '../../helpers/oauth2-app.js'
import { startStandin } from '../../helpers/oauth2-standin.js'

const s = await startStandin({ clientId: 'e-cid', clientSecret: 'e-secret', tokenAuth: 'post', pkce: true, oidc: true, idClaims: { sub: 'e1' }, userinfo: { sub: 'e1', name: 'E' } })
t.teardown(s.close)
const app = await startApp(async (app) => {
  await app.register(oauth2Provider, { name: 'google', cid: 'e-cid', csecret: 'e-secret', authURL: `${s.url}/authorize`, tokenURL: `${s.url}/token`, infoURL: `${s.url}/userinfo`, jwksURL: `${s.url}/jwks`, issuer: s.url })
})
t.teardown(app.close)

t.test('an ID token without exp is refused; with exp it signs in', async (t) => {
  const ok = await app.browser().navigate(`${APP_URL}/auth/google/login`)
  t.equal(ok.res.status, 200, 'control: the same token with exp')
  s.faults = { idToken: 'no-exp' }
  t.teardown(() => { s.faults = {} })
  const browser = app.browser()
  const nav = await browser.navigate(`${APP_URL}/auth/google/login`)
  t.equal(nav.res.status, 401)
  t.match(JSON.parse(nav.body), { error: 'id token rejected', code: 'GATEHOUSE_UNAUTHORIZED', details: /exp/ })
  t.equal(browser.cookieFor(`${APP_URL}/`, 'JWT'), undefined, 'no session')
})
