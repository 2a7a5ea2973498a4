/**
 * The demo's clients over real HTTP: `demo-cli` (device), `demo-cli-dpop` (device, `dpop: 'required'`) and
 * `demo-mobile` (native, `gatehouse-demo:/callback`) are registered and discoverable by a standard client, the device
 * endpoint answers the device clients and refuses the others, openid-client with its DPoP handle signs in as
 * `demo-cli-dpop` and calls the demo's API with the bound token, the device page sends a browser without a session to
 * the demo page with `from`, and the page has the "Sign in a device" card and its script.
 */
import t from 'tap'
import * as oidc from 'openid-client'
import { client } from '../helpers/client.js'
import { demoCaptchaToken, startDemo, type StartedDemo } from '../helpers/demo.js'

const started: StartedDemo = await startDemo({ AUTH_SECRET: 'demo-clients-secret-0123456789abcdef-0123' })
t.teardown(started.stop)
const { url } = started.demo
const http = client(`http://127.0.0.1:${started.demo.port}`)
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

t.test('the RFC 8414 metadata lists the device endpoint; openid-client discovers the demo', async (t) => {
  const r = await http.fetch('/.well-known/oauth-authorization-server/auth')
  t.equal(r.status, 200)
  const metadata = await r.json()
  t.match(metadata, {
    issuer: `${url}/auth`,
    authorization_endpoint: `${url}/auth/authorize`,
    token_endpoint: `${url}/auth/token`,
    device_authorization_endpoint: `${url}/auth/device/code`,
    revocation_endpoint: `${url}/auth/revoke`,
    code_challenge_methods_supported: ['S256']
  })
  t.same([...metadata.grant_types_supported].sort(), ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'])
  const config = await oidc.discovery(new URL(`${url}/auth`), 'demo-cli', undefined, oidc.None(), { algorithm: 'oauth2', execute: [oidc.allowInsecureRequests] })
  const da = await oidc.initiateDeviceAuthorization(config, {})
  t.match(da, { user_code: /^[A-Z]{4}-[A-Z]{4}$/, verification_uri: `${url}/auth/device`, interval: 5, expires_in: 600 }, 'a device sign-in of demo-cli')
  t.equal(da.verification_uri_complete, `${url}/auth/device?user_code=${da.user_code}`)
})

t.test('demo-cli-dpop with openid-client\'s DPoP handle: the device grant, a bound pair, the API with a proof, refresh; nothing without a key', async (t) => {
  const config = await oidc.discovery(new URL(`${url}/auth`), 'demo-cli-dpop', undefined, oidc.None(), { algorithm: 'oauth2', execute: [oidc.allowInsecureRequests] })
  t.ok(config.serverMetadata().dpop_signing_alg_values_supported?.includes('ES256'), 'the metadata names the proof algorithms')
  const dpop = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'))
  const da = await oidc.initiateDeviceAuthorization(config, {})
  const alice = client(`http://127.0.0.1:${started.demo.port}`)
  const login = await alice.fetch('/auth/local/login', { method: 'POST', json: { user: 'alice', passwd: 'alice-secret', 'cf-turnstile-response': await demoCaptchaToken(alice.base) } })
  t.equal(login.status, 200)
  const approved = await alice.fetch('/auth/device', { method: 'POST', headers: { origin: new URL(url).origin, 'sec-fetch-site': 'same-origin' }, form: { user_code: da.user_code, action: 'approve', xsrf: alice.jar.get('XSRF-TOKEN')! } })
  t.equal(approved.status, 200, 'alice approves the code on the device page')
  const bare = await oidc.pollDeviceAuthorizationGrant(config, { ...da, interval: 0 }).then(() => undefined, (e: unknown) => e)
  t.equal((bare as oidc.ResponseBodyError).error, 'invalid_dpop_proof', 'demo-cli-dpop gets nothing without a proof (dpop: required)')
  // Approved before the first poll: no need to wait the 5 s interval the demo asks for.
  const tokens = await oidc.pollDeviceAuthorizationGrant(config, { ...da, interval: 0 }, undefined, { DPoP: dpop })
  t.equal(tokens.token_type, 'dpop')
  const me = await oidc.fetchProtectedResource(config, tokens.access_token, new URL(`${url}/api/private`), 'GET', null, undefined, { DPoP: dpop })
  t.match(await me.json(), { message: 'hello alice' }, 'the demo\'s API answers the bound token with its proof')
  const asBearer = await fetch(`${url}/api/private`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
  t.equal(asBearer.status, 401, 'and refuses it as a Bearer token')
  t.match(asBearer.headers.get('www-authenticate'), /^DPoP error="invalid_token"/)
  const next = await oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP: dpop })
  t.equal(next.token_type, 'dpop', 'the refresh keeps the binding')
})

t.test('POST /auth/device/code: demo-cli starts, the phone app and strangers are refused', async (t) => {
  const ok = await http.fetch('/auth/device/code', { method: 'POST', headers: FORM, body: 'client_id=demo-cli' })
  t.equal(ok.status, 200)
  t.equal(ok.headers.get('cache-control'), 'no-store')
  t.match(await ok.json(), { device_code: /^[\w-]{43}$/, user_code: /^[A-Z]{4}-[A-Z]{4}$/ })
  for (const [id, status, error] of [['demo-mobile', 400, 'unauthorized_client'], ['someone', 401, 'invalid_client']] as const) {
    const r = await http.fetch('/auth/device/code', { method: 'POST', headers: FORM, body: `client_id=${id}` })
    t.equal(r.status, status, `client_id=${id}`)
    t.equal((await r.json()).error, error)
  }
  const json = await http.fetch('/auth/device/code', { method: 'POST', json: { client_id: 'demo-cli' } })
  t.equal(json.status, 400, 'a JSON body is refused (the endpoint takes a form)')
})

t.test('demo-mobile comes back to gatehouse-demo:/callback only; a browser without a session goes to the page first', async (t) => {
  const challenge = await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier())
  const authorize = (redirect: string): string => `/auth/authorize?response_type=code&client_id=demo-mobile&redirect_uri=${encodeURIComponent(redirect)}&code_challenge=${challenge}&code_challenge_method=S256&state=s1`
  const stranger = await http.fetch(authorize('evil-app:/callback'))
  t.equal(stranger.status, 400, 'a redirect URI the phone app did not register: refused, not redirected')
  t.equal(stranger.headers.get('location'), null)
  const own = await http.fetch(authorize('gatehouse-demo:/callback'))
  t.equal(own.status, 302)
  const to = new URL(own.headers.get('location')!)
  t.equal(`${to.origin}${to.pathname}`, `${url}/`, 'the demo page is the sign-in page (loginPage)')
  t.match(to.searchParams.get('from'), /^\/auth\/authorize\?response_type=code&client_id=demo-mobile/)
  const device = await http.fetch('/auth/device?user_code=BCDF-GHJK')
  t.equal(device.status, 302)
  t.equal(device.headers.get('location'), `${url}/?from=${encodeURIComponent('/auth/device?user_code=BCDF-GHJK')}`)
})

t.test('the page: the "Sign in a device" card linking the device page, and its script', async (t) => {
  const page = await (await http.fetch('/')).text()
  t.match(page, /<section id="device-sign-in" class="card" hidden>\s*<h2>Sign in a device<\/h2>/)
  t.match(page, /<a id="device-enter" href="\/auth\/device">Enter a device code<\/a>/)
  t.match(page, /<script src="\/device\.js" type="module"><\/script>/)
  const script = await http.fetch('/device.js')
  t.equal(script.status, 200)
  t.match(script.headers.get('content-type'), /^text\/javascript/)
  t.match(await script.text(), /urn:ietf:params:oauth:grant-type:device_code/)
})
