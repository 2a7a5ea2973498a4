// "Sign in a device" on the demo page: the link to the device page, and "Be the demo CLI", which does what a CLI
// does (RFC 8628): asks for a code as `demo-cli`, shows it, and polls the token endpoint at the interval it was
// given until the person approves or denies the code on the device page (opened in another tab).
// "Be the demo CLI, with DPoP" does the same as `demo-cli-dpop` (RFC 9449): it makes a key pair in the browser
// (WebCrypto, the private key not extractable), signs a proof for every request with it, gets tokens bound to that
// key, calls the API with one, and shows the same token refused when it is sent as a plain Bearer token.
import { api, currentUser, reason, showMessage } from './app.js'

const $ = (sel) => document.querySelector(sel)
const AUTH = '/auth'
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'

/** A form POST, as the OAuth 2 endpoints take them (never JSON). */
const form = (fields, headers = {}) => ({ method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields) })
const sleep = (seconds) => new Promise((resolve) => setTimeout(resolve, seconds * 1000))

/** Counts the demo CLI's runs: a newer "Be the demo CLI" stops an older run's polling. */
let runs = 0

document.addEventListener('gatehouse:user', (ev) => { $('#device-sign-in').hidden = !ev.detail })
// app.js read the user before this module ran (it is imported first): show the card for that user too.
$('#device-sign-in').hidden = !currentUser
$('#device-curl').textContent = `curl -d client_id=demo-cli ${location.origin}${AUTH}/device/code`

$('#device-try').addEventListener('click', () => runCli('demo-cli', null))
$('#device-try-dpop').addEventListener('click', async () => {
  if (!globalThis.crypto?.subtle) { showMessage('DPoP needs WebCrypto: open the demo on https or on localhost.'); return }
  runCli('demo-cli-dpop', await dpopClient())
})

/**
 * The demo CLI as `clientId`: a device code, shown; then the token endpoint polled until the person decides. With
 * `dpop` (a DPoP client), every poll carries a proof and the pair it gets is bound to the page's key.
 */
async function runCli (clientId, dpop) {
  const started = await api(`${AUTH}/device/code`, form({ client_id: clientId }))
  if (started.status !== 200) { showMessage(`The demo CLI could not start: ${reason(started)}`); return }
  const run = ++runs
  const { device_code: deviceCode, user_code: userCode, verification_uri_complete: complete, expires_in: expiresIn } = started.body
  $('#device-code').textContent = userCode
  $('#device-complete').href = complete
  $('#device-shown').hidden = false
  const state = $('#device-state')
  state.textContent = 'Waiting for your answer…'
  let interval = started.body.interval
  const ends = Date.now() + expiresIn * 1000
  const poll = { grant_type: DEVICE_GRANT, client_id: clientId, device_code: deviceCode }
  while (run === runs && Date.now() < ends) {
    await sleep(interval)
    if (run !== runs) return
    const polled = dpop === null ? await api(`${AUTH}/token`, form(poll)) : await dpop.tokenRequest(poll)
    if (polled.status === 200) {
      // A real CLI keeps the pair (the refresh token, and with DPoP its key, in the system keychain); the page only
      // says it got one.
      state.textContent = dpop === null
        ? `Signed in: the demo CLI got an access token (${polled.body.expires_in} s) and a refresh token.`
        : await dpop.showBound(polled.body)
      document.dispatchEvent(new CustomEvent('gatehouse:user', { detail: currentUser }))
      return
    }
    const error = polled.body?.error
    if (error === 'slow_down') interval += 5
    else if (error !== 'authorization_pending') { state.textContent = `Not signed in: ${error ?? `status ${polled.status}`}.`; return }
  }
  if (run === runs) state.textContent = 'Not signed in: the code expired.'
}

const b64u = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
const b64uJson = (value) => b64u(new TextEncoder().encode(JSON.stringify(value)))
const sha256 = (text) => crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))

/**
 * A DPoP client of this page: an ES256 key pair whose private half never leaves the browser, proofs signed with
 * it (RFC 9449 §4.2), and the server's nonce kept from every answer (a `use_dpop_nonce` refusal is retried once
 * with it, as openid-client does). `htu` is the server's public address, read from its RFC 8414 metadata.
 */
async function dpopClient () {
  const { privateKey, publicKey } = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign', 'verify'])
  const { crv, kty, x, y } = await crypto.subtle.exportKey('jwk', publicKey)
  const jwk = { crv, kty, x, y }
  // RFC 7638: the thumbprint the server binds the tokens to (`cnf.jkt`).
  const jkt = b64u(await sha256(JSON.stringify(jwk)))
  const metadata = await api(`/.well-known/oauth-authorization-server${AUTH}`)
  const tokenEndpoint = metadata.body.token_endpoint
  const base = metadata.body.issuer.slice(0, -AUTH.length)
  let nonce

  async function proof (htm, htu, accessToken) {
    const payload = { jti: b64u(crypto.getRandomValues(new Uint8Array(16))), htm, htu, iat: Math.floor(Date.now() / 1000) }
    if (nonce) payload.nonce = nonce
    if (accessToken) payload.ath = b64u(await sha256(accessToken))
    const input = `${b64uJson({ typ: 'dpop+jwt', alg: 'ES256', jwk })}.${b64uJson(payload)}`
    // WebCrypto's ECDSA signature is r and s side by side: what ES256 in a JWS is.
    const signature = await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, privateKey, new TextEncoder().encode(input))
    return `${input}.${b64u(signature)}`
  }

  /** A request with a fresh proof (sent again once with the nonce a `use_dpop_nonce` answer told). */
  async function send (path, htm, htu, init, accessToken) {
    for (let attempt = 0; ; attempt++) {
      const headers = { ...init.headers, DPoP: await proof(htm, htu, accessToken), ...(accessToken ? { Authorization: `DPoP ${accessToken}` } : {}) }
      const res = await fetch(path, { ...init, method: htm, headers, credentials: 'omit' })
      nonce = res.headers.get('DPoP-Nonce') ?? nonce
      const body = await res.json().catch(() => null)
      const challenge = res.headers.get('WWW-Authenticate') ?? ''
      if (attempt === 0 && (body?.error === 'use_dpop_nonce' || challenge.includes('use_dpop_nonce'))) continue
      return { status: res.status, body, challenge }
    }
  }

  return {
    tokenRequest: (fields) => send(`${AUTH}/token`, 'POST', tokenEndpoint, form(fields)),
    /** What the page tells of a DPoP-bound pair: the key, an API call with a proof, and the token refused as Bearer. */
    async showBound (pair) {
      const token = pair.access_token
      const called = await send('/api/private', 'GET', `${base}/api/private`, {}, token)
      const stolen = await fetch('/api/private', { headers: { Authorization: `Bearer ${token}` }, credentials: 'omit' })
      return `Signed in with DPoP: the demo CLI got a ${pair.token_type}-bound access token (${pair.expires_in} s) and refresh token, ` +
        `bound to key ${jkt.slice(0, 8)}…; /api/private with a proof answered ${called.status} (${called.body?.message ?? reason(called)}), ` +
        `the same token as Bearer ${stolen.status} (${stolen.headers.get('WWW-Authenticate')?.split(',')[0] ?? 'no challenge'}).`
    }
  }
}
