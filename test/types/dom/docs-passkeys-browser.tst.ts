/**
 * The browser snippet of docs/providers/passkeys.md ("In the browser"), compiled against the DOM library and
 * @simplewebauthn/browser's types (lines as written there; test/docs/readme-examples.test.ts checks they stay the same).
 */
import { startAuthentication, startRegistration } from '@simplewebauthn/browser'

async function post (path: string, body: unknown): Promise<Response> {
  const xsrf = document.cookie.match(/XSRF-TOKEN=([^;]+)/)?.[1] ?? ''   // read per call: a sign-in replaces it
  const headers = { 'Content-Type': 'application/json', 'X-XSRF-TOKEN': xsrf }
  return await fetch(`/auth/passkey/${path}`, { method: 'POST', headers, body: JSON.stringify(body) })
}

export async function addPasskey (label: string): Promise<boolean> {
  const optionsJSON = await (await post('register/options', {})).json()
  const answer = await startRegistration({ optionsJSON })               // the browser's prompt
  return (await post('register', { ...answer, label })).status === 201
}

export async function signInWithPasskey (): Promise<boolean> {
  const optionsJSON = await (await post('login/options', {})).json()    // any passkey the browser holds for the site
  const answer = await startAuthentication({ optionsJSON })
  return (await post('login', answer)).status === 200                   // the session cookies are set
}
