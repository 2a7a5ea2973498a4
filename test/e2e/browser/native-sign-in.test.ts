/**
 * Native app sign-in in Chromium: openid-client builds the authorization request (PKCE S256), the system browser
 * (headless Chromium) signs in on the app's page and is redirected to the private-use scheme
 * `com.example.app:/callback`; the redirect is captured from the browser's own response, and openid-client
 * exchanges the code; the same code again is refused.
 */
import t from 'tap'
import * as oidc from 'openid-client'
import { chromiumMissing, launch, type TestBrowser } from './browser.js'
import { addSignInPage, clientsApp } from '../../helpers/clients-app.js'

const missing = chromiumMissing()
if (missing !== undefined) {
  t.comment(`browser tests skipped: ${missing}`)
  t.test('native sign-in in Chromium', { skip: missing }, async () => {})
} else {
  const s = await clientsApp({ loginPage: '/sign-in' }, { listen: true, setup: addSignInPage })
  const browser: TestBrowser = await launch(import.meta.url)
  t.teardown(async () => { await browser.close(); await s.close() })

  t.test('the code reaches the private-use scheme in Chromium, and openid-client exchanges it once', async (t) => {
    const config = await s.discover()
    const verifier = oidc.randomPKCECodeVerifier()
    const state = oidc.randomState()
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: 'com.example.app:/callback', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state })
    const { page } = browser
    const captured = new Promise<string>((resolve) => {
      page.on('response', (r) => {
        const location = r.headers().location
        if (r.status() === 302 && location?.startsWith('com.example.app:') === true) resolve(location)
      })
    })
    await page.goto(url.href)
    t.match(new URL(page.url()).pathname, '/sign-in', 'no session: the app\'s sign-in page')
    await page.fill('#user', 'ann')
    await page.fill('#passwd', 'x')
    await page.click('#go').catch(() => {})
    const location = await captured
    t.match(location, /^com\.example\.app:\/callback\?code=[\w-]{43}&state=/)
    const tokens = await oidc.authorizationCodeGrant(config, new URL(location), { pkceCodeVerifier: verifier, expectedState: state })
    const me = await fetch(`${s.base}/private`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    t.same(await me.json(), { name: 'ann' })
    const again = await oidc.authorizationCodeGrant(config, new URL(location), { pkceCodeVerifier: verifier, expectedState: state }).then(() => undefined, (e: unknown) => e)
    t.equal((again as oidc.ResponseBodyError).error, 'invalid_grant', 'code replay refused')
  })
}
