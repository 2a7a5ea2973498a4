/**
 * Native app sign-in in Chromium: openid-client builds the authorization request (PKCE S256), the system browser
 * (headless Chromium) signs in on the app's page and is redirected to the private-use scheme
 * `com.example.app:/callback`; the redirect is captured from the browser's own response, and openid-client
 * exchanges the code; the same code again is refused. A sign-in started from another site's link in a signed-out
 * browser asks the user on the confirmation page once signed in, and hands out no code (issue 43, item 3).
 */
import t from 'tap'
import Fastify from 'fastify'
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

  t.test('a sign-in started from another site\'s link: the signed-out victim signs in, then is asked, and no code goes out', async (t) => {
    await browser.context.clearCookies()
    const config = await s.discover()
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: 'com.example.app:/callback', code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256', state: oidc.randomState() })
    // The attacker's page on another site (`localhost`, where the app is 127.0.0.1).
    const evil = Fastify({ forceCloseConnections: true })
    t.teardown(() => evil.close())
    evil.get('/', async (_req, reply) => await reply.type('text/html').send(`<!doctype html><a id="go" href="${url.href}">Open the app</a>`))
    await evil.listen({ port: 0, host: '127.0.0.1' })
    // A page of its own: the first test's page ended on an external-scheme redirect.
    const page = await browser.context.newPage()
    t.teardown(async () => { await page.close() })
    const codes: string[] = []
    const onResponse = (r: { status: () => number, headers: () => Record<string, string> }): void => {
      if (r.headers().location?.startsWith('com.example.app:') === true) codes.push(r.headers().location!)
    }
    page.on('response', onResponse)
    await page.goto(`http://localhost:${(evil.server.address() as { port: number }).port}/`)
    await Promise.all([page.waitForURL(/\/sign-in\?from=/, { waitUntil: 'commit' }), page.click('#go')])
    await page.waitForSelector('#user')
    await page.fill('#user', 'victim')
    await page.fill('#passwd', 'x')
    await page.click('#go')
    await page.waitForSelector('#ask')
    t.match(await page.textContent('#ask'), /Demo phone app asks to be signed in as victim/, 'the confirmation page names the client')
    t.same(codes, [], 'no code was handed out')
  })
}
