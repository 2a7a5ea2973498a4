/**
 * The page of docs/guide/spa.md's spa client (tokens in the page), compiled with the DOM library (lines as written
 * there; test/e2e/browser/spa.test.ts runs the page's code as written).
 */
const API = 'https://api.example.com'
const CLIENT = 'web'
const redirectUri = `${location.origin}/callback`
let tokens = { access_token: '', refresh_token: '' }   // in memory only

const base64url = (bytes = new ArrayBuffer(0)) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')

async function signIn () {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)).buffer)
  const state = base64url(crypto.getRandomValues(new Uint8Array(16)).buffer)
  const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)))
  sessionStorage.setItem('pkce', JSON.stringify({ verifier, state }))
  const query = new URLSearchParams({ response_type: 'code', client_id: CLIENT, redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: 'S256', state })
  location.assign(`${API}/auth/authorize?${query}`)
}

async function token (fields = {}) {
  const res = await fetch(`${API}/auth/token`, { method: 'POST', body: new URLSearchParams({ client_id: CLIENT, ...fields }) })
  if (!res.ok) throw new Error(`sign in again: ${(await res.json()).error}`)
  tokens = await res.json()
}

async function finishSignIn () {
  const params = new URLSearchParams(location.search)
  const { verifier, state } = JSON.parse(sessionStorage.getItem('pkce') ?? '{}')
  sessionStorage.removeItem('pkce')
  history.replaceState(null, '', '/')
  if (params.get('state') !== state) throw new Error('not the sign-in this page started')
  await token({ grant_type: 'authorization_code', code: params.get('code') ?? '', redirect_uri: redirectUri, code_verifier: verifier })
}

async function api (path = '/') {
  const call = async () => await fetch(`${API}${path}`, { headers: { Authorization: `Bearer ${tokens.access_token}` } })
  let res = await call()
  if (res.status === 401) {
    await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token })
    res = await call()
  }
  return res
}

export { signIn, finishSignIn, api }
