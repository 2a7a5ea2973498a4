/**
 * PKCE S256 (lib/pkce.ts) against RFC 7636 Appendix B, the RFC's own example: through `pkceChallenge` (what the
 * OAuth2 engine sends and the local authorization server checks), through the engine's authorization redirect
 * (its challenge is that of the verifier its handshake keeps), and over HTTP at the dev authorization server of
 * servers/, which must take the RFC's verifier for the RFC's challenge and nothing else.
 */
import t from 'tap'
import { pkceChallenge } from '../../lib/pkce.js'
import { oauth2Provider } from '../../providers/index.js'
import { DEV_CLIENT, startDevServer } from '../../servers/index.js'
import { client } from '../helpers/client.js'
import { APP_URL, startApp } from '../helpers/oauth2-app.js'
import { startStandin } from '../helpers/oauth2-standin.js'

// RFC 7636 Appendix B: the 32 random octets, the code verifier (their base64url), and the S256 code challenge.
const RFC7636_B_OCTETS = [116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186, 22, 212, 37, 77, 105, 214, 191, 240, 91, 88, 5, 88, 83, 132, 141, 121]
const RFC7636_B_VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'
const RFC7636_B_CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'

t.test('RFC 7636 Appendix B: the S256 challenge of the example verifier', async (t) => {
  t.equal(Buffer.from(RFC7636_B_OCTETS).toString('base64url'), RFC7636_B_VERIFIER, 'the verifier is the base64url of the octets (as randomToken makes one)')
  t.equal(pkceChallenge(RFC7636_B_VERIFIER), RFC7636_B_CHALLENGE)
  t.not(pkceChallenge(RFC7636_B_VERIFIER.slice(0, -1) + 'Y'), RFC7636_B_CHALLENGE, 'one character changed: another challenge')
})

t.test('the engine sends the S256 challenge of the verifier its handshake keeps', async (t) => {
  const standin = await startStandin({ clientId: 'p-cid', clientSecret: 'p-secret', tokenAuth: 'post', pkce: true, userinfo: { id: 1, login: 'p' } })
  t.teardown(standin.close)
  const app = await startApp(async (app) => {
    await app.register(oauth2Provider, { name: 'github', cid: 'p-cid', csecret: 'p-secret', authURL: `${standin.url}/authorize`, tokenURL: `${standin.url}/token`, infoURL: `${standin.url}/userinfo` })
  })
  t.teardown(app.close)
  const browser = app.browser()
  const res = await browser.request(`${APP_URL}/auth/github/login`)
  t.equal(res.status, 302)
  const to = new URL(res.headers.get('location')!)
  const handshake = browser.cookieFor(`${APP_URL}/auth/github/callback`, 'gatehouse-oauth2-github')!
  const { codeVerifier } = JSON.parse(Buffer.from(handshake.split('.')[1]!, 'base64url').toString()) as { codeVerifier: string }
  t.match(codeVerifier, /^[A-Za-z0-9_-]{43}$/, '32 random octets, base64url, as in the RFC\'s example')
  t.equal(to.searchParams.get('code_challenge'), pkceChallenge(codeVerifier))
  t.equal(to.searchParams.get('code_challenge_method'), 'S256')
})

t.test('over HTTP: the dev authorization server takes the RFC\'s verifier for the RFC\'s challenge, and no other', async (t) => {
  const callback = 'http://127.0.0.1:1/auth/dev/callback'
  const dev = await startDevServer({ port: 0, redirectUris: [callback] })
  t.teardown(dev.close)
  const exchange = async (code: string, verifier: string): Promise<Response> => await fetch(`${dev.url}/login/oauth/access_token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', authorization: 'Basic ' + Buffer.from(`${DEV_CLIENT.cid}:${DEV_CLIENT.csecret}`).toString('base64') },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: callback, code_verifier: verifier }).toString()
  })
  const codeFor = async (): Promise<string> => {
    const c = client(dev.url)
    const q = new URLSearchParams({ response_type: 'code', client_id: DEV_CLIENT.cid, redirect_uri: callback, state: 's', scope: 'user', code_challenge: RFC7636_B_CHALLENGE, code_challenge_method: 'S256' })
    const page = await c.fetch(`/login/oauth/authorize?${q}`)
    t.equal(page.status, 200)
    const request = /name="request" value="([^"]+)"/.exec(await page.text())![1]!
    const back = await c.fetch('/login/oauth/authorize', { method: 'POST', form: { request, user: 'alice' } })
    t.equal(back.status, 303)
    return new URL(back.headers.get('location')!).searchParams.get('code')!
  }

  const wrong = await exchange(await codeFor(), RFC7636_B_VERIFIER.slice(0, -1) + 'Y')
  t.equal(wrong.status, 400, 'a verifier one character off')
  t.match(await wrong.json(), { error: 'invalid_grant', error_description: /code_verifier does not match/ })

  const right = await exchange(await codeFor(), RFC7636_B_VERIFIER)
  t.equal(right.status, 200, 'the RFC\'s verifier')
  t.match(await right.json(), { token_type: 'Bearer', access_token: /^[A-Za-z0-9_-]{43}$/ })
})
