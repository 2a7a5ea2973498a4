/**
 * The demo's generic OpenID Connect provider (`oidc`, switched on by OIDC_ISSUER/OIDC_CLIENT_ID/
 * OIDC_CLIENT_SECRET) in headless Chromium, against a real OpenID Provider: the `oidc-provider` package on
 * 127.0.0.1 with PKCE required and its development login and consent pages.
 */
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { exportJWK, generateKeyPair } from 'jose'
import { chromiumMissing, launch, waitImage, waitText, type TestBrowser } from './browser.js'
import { freePort, startDemo, type StartedDemo } from '../../helpers/demo.js'

interface OidcServer { callback(): (req: IncomingMessage, res: ServerResponse) => void }
type OidcServerClass = new (issuer: string, config: Record<string, unknown>) => OidcServer

const missing = chromiumMissing()
if (missing !== undefined) {
  t.comment(`browser tests skipped: ${missing}`)
  t.test('OIDC login in Chromium', { skip: missing }, async () => {})
} else {
  // The provider must know the demo's callback before the demo starts (it discovers the provider at start).
  const port = await freePort()
  const demoUrl = `http://localhost:${port}`
  const client = { id: 'gatehouse-demo', secret: randomBytes(24).toString('base64url') }
  const issuer = await startOpenIdProvider(`${demoUrl}/auth/oidc/callback`, client)
  t.teardown(issuer.close)
  const started: StartedDemo = await startDemo({
    PORT: String(port), AUTH_SECRET: 'browser-oidc-secret-0123456789abcdef', OIDC_ISSUER: issuer.url, OIDC_CLIENT_ID: client.id, OIDC_CLIENT_SECRET: client.secret
  })
  const browser: TestBrowser = await launch(import.meta.url)
  t.teardown(async () => { await browser.close(); await started.stop() })
  t.comment(`screenshots: ${browser.dir}`)
  const { page, shot } = browser

  t.test('sign in through the OpenID Provider login and consent pages', async (t) => {
    t.ok(started.demo.providers.includes('oidc'), 'oidc is on')
    await page.goto(`${demoUrl}/`)
    await waitText(page, '#status', /not signed in/)
    await page.click('#oauth-buttons a[data-provider="oidc"]')
    await page.waitForURL((u) => u.href.startsWith(issuer.url))
    await page.fill('input[name=login]', 'olivia')
    await page.fill('input[name=password]', 'any')
    await shot('oidc-login-page')
    await page.click('button[type=submit]')
    // Login and consent share one interaction URL: the consent page is the one without the login field.
    await page.waitForSelector('input[name=login]', { state: 'detached' })
    await page.waitForSelector('button[type=submit]')
    await shot('oidc-consent-page')
    await page.click('button[type=submit]')
    await page.waitForURL(`${demoUrl}/`)
    t.match(await waitText(page, '#status', /signed in as/), 'signed in as Olivia Oidc')
    t.match(await page.textContent('#user-id'), /^oidc_[0-9a-f]{40}$/)
    t.ok((await waitImage(page, '#avatar')).width > 0, 'identicon avatar rendered (the provider gives no picture)')
    await shot('oidc-signed-in')
  })
}

/** oidc-provider on 127.0.0.1 with one confidential client; accounts get the name "<Login> Oidc". */
async function startOpenIdProvider (redirectUri: string, client: { id: string; secret: string }): Promise<{ url: string; close(): Promise<void> }> {
  // The package ships no type declarations; only its constructor and callback() are used.
  const { default: Provider } = await import('oidc-provider' as string) as { default: OidcServerClass }
  const http = createServer()
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(http.address() as { port: number }).port}`
  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  const op = new Provider(url, {
    clients: [{ client_id: client.id, client_secret: client.secret, redirect_uris: [redirectUri], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' }],
    pkce: { required: () => true },
    claims: { openid: ['sub'], profile: ['name'] },
    findAccount: async (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: async () => ({ sub: id, name: `${id.charAt(0).toUpperCase()}${id.slice(1)} Oidc` })
    }),
    cookies: { keys: [randomBytes(32).toString('hex')] },
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] },
    features: { devInteractions: { enabled: true } },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 }
  })
  http.on('request', op.callback())
  return {
    url,
    close: () => new Promise<void>((resolve) => { http.closeAllConnections(); http.close(() => resolve()) })
  }
}
