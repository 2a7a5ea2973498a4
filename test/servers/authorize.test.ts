/**
 * The local OAuth2 server sends codes only to redirect URIs registered exactly (RFC 9700 §4.1.3): by default
 * the callback of the provider registered with its `providerOptions`, otherwise the `redirectUris` given. An
 * authorization request for any other URI — another host, a longer path, a changed query, another scheme or
 * port, an implicit-grant request — is answered to the browser (400 JSON) and redirected nowhere.
 */
import t, { type Test } from 'tap'
import { authPlugin } from '../../auth.js'
import { oauth2Provider } from '../../providers/index.js'
import { funcLogger } from '../../lib/logging/logger.js'
import { startLocalOAuth2Server } from '../../servers/index.js'
import { listen } from '../helpers/client.js'

const EVIL = 'https://evil.example/steal'

/** An authorization request for `redirectUri` (auto-login server: a good one is a 302 with a code at once). */
async function authorize (base: string, cid: string, redirectUri: string, responseType = 'code'): Promise<Response> {
  const q = new URLSearchParams({ response_type: responseType, client_id: cid, redirect_uri: redirectUri, state: 'st' })
  return await fetch(`${base}/login/oauth/authorize?${q.toString()}`, { redirect: 'manual' })
}

async function refusedHere (t: Test, res: Response, what: string): Promise<void> {
  t.equal(res.status, 400, `${what}: 400`)
  t.equal(res.headers.get('location'), null, `${what}: redirected nowhere`)
  const body = await res.json() as Record<string, unknown>
  t.match(body, { error: 'invalid_request', details: 'redirect_uri is not registered for this client' }, what)
}

t.test('without redirectUris and before any provider registered: every redirect_uri is refused', async (t) => {
  const local = await startLocalOAuth2Server({ url: 'http://127.0.0.1:0' })
  t.teardown(local.close)
  const { cid } = local.providerOptions
  await refusedHere(t, await authorize(local.url, cid, EVIL), 'code to another host')
  await refusedHere(t, await authorize(local.url, cid, EVIL, 'token'), 'implicit grant to another host')
  await refusedHere(t, await authorize(local.url, cid, 'http://127.0.0.1:1/auth/custom/callback'), 'a plausible callback nobody registered')
  const missing = await fetch(`${local.url}/login/oauth/authorize?response_type=code&client_id=${cid}`, { redirect: 'manual' })
  t.equal(missing.status, 400, 'no redirect_uri and none registered: nothing to default to')
  t.equal(missing.headers.get('location'), null)
})

t.test('the provider registered with providerOptions: its callback works, nothing else does', async (t) => {
  const local = await startLocalOAuth2Server({ url: 'http://127.0.0.1:0', autoLoginUser: 'ann' })
  t.teardown(local.close)
  const { app, base } = await listen(async (app) => {
    await app.register(authPlugin, { secret: () => 'redirect-uri-test-secret-0123456789', url: 'http://127.0.0.1' })
    await app.register(oauth2Provider, { name: 'custom', ...local.providerOptions })
  })
  t.teardown(() => app.close())
  const callback = 'http://127.0.0.1/auth/custom/callback'
  const { cid } = local.providerOptions

  // The real login: our login route sends the browser to the server with our callback; the code comes back.
  const login = await fetch(`${base}/auth/custom/login`, { redirect: 'manual' })
  const to = new URL(login.headers.get('location')!)
  t.equal(to.searchParams.get('redirect_uri'), callback)
  const granted = await fetch(to, { redirect: 'manual' })
  t.equal(granted.status, 302)
  const back = new URL(granted.headers.get('location')!)
  t.equal(back.origin + back.pathname, callback, 'the code goes to our callback')
  t.ok(back.searchParams.get('code'))

  for (const [uri, what] of [
    [EVIL, 'another host'],
    [`${callback}/x`, 'a longer path'],
    [`${callback}?next=${encodeURIComponent(EVIL)}`, 'an added query'],
    ['https://127.0.0.1/auth/custom/callback', 'another scheme'],
    ['http://127.0.0.1:8080/auth/custom/callback', 'another port'],
    ['http://127.0.0.1/auth/custom/callback/', 'a trailing slash'],
    ['http://127.0.0.1/AUTH/custom/callback', 'another case']
  ] as const) await refusedHere(t, await authorize(local.url, cid, uri), what)
  await refusedHere(t, await authorize(local.url, cid, EVIL, 'token'), 'implicit grant to another host')
})

t.test('given redirectUris are final: a provider with another callback is warned about, not let in', async (t) => {
  const lines: string[] = []
  const given = 'http://127.0.0.1:1/cb'
  const local = await startLocalOAuth2Server({ url: 'http://127.0.0.1:0', redirectUris: [given], logger: funcLogger((l) => lines.push(l)) })
  t.teardown(local.close)
  local.providerOptions.onRedirectUri(EVIL)
  t.ok(lines.some((l) => l.includes(`${EVIL} is not among the redirectUris given`)), 'warned')
  await refusedHere(t, await authorize(local.url, local.providerOptions.cid, EVIL), 'the other callback')
  t.equal((await authorize(local.url, local.providerOptions.cid, given)).status, 302, 'the given one works')
})

t.test('an empty redirectUris list is a configuration error, not "any"', async (t) => {
  await t.rejects(startLocalOAuth2Server({ url: 'http://127.0.0.1:0', redirectUris: [] }), { name: 'OptionsError', code: 'GATEHOUSE_OPTION', option: 'startLocalOAuth2Server.redirectUris' })
})
