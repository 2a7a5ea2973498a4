// Passkeys on the demo page: "Add a passkey" for the signed-in user (with the list of their passkeys), "Sign in with
// a passkey", and the second step of a `local` password login for a user who has one. The browser side of WebAuthn
// is @simplewebauthn/browser, served as its own file (window.SimpleWebAuthnBrowser); the server side is
// fastify-gatehouse's passkey provider under /auth/passkey.
import { api, currentUser, reason, showMessage, withPassword } from './app.js'

const $ = (sel) => document.querySelector(sel)
const PASSKEY = '/auth/passkey'
const { browserSupportsWebAuthn, startAuthentication, startRegistration } = window.SimpleWebAuthnBrowser

const postJSON = (path, body) => api(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })

/** Asks for options, lets the browser find a passkey, and sends its answer; true when signed in. */
async function signIn (what) {
  const options = await postJSON(`${PASSKEY}/login/options`, {})
  if (options.status !== 200) { showMessage(`${what} failed: ${reason(options)}`); return false }
  let answer
  try {
    answer = await startAuthentication({ optionsJSON: options.body })
  } catch (err) {
    showMessage(`${what} did not complete: ${err.message}`)
    return false
  }
  const r = await postJSON(`${PASSKEY}/login`, answer)
  if (r.status !== 200) { showMessage(`${what} failed: ${reason(r)}`); return false }
  document.dispatchEvent(new CustomEvent('gatehouse:signed-in'))
  return true
}

async function addPasskey () {
  const options = await withPassword(`${PASSKEY}/register/options`, 'POST')
  if (options.status !== 200) { showMessage(`Adding a passkey failed: ${reason(options)}`); return }
  let answer
  try {
    answer = await startRegistration({ optionsJSON: options.body })
  } catch (err) {
    showMessage(`Adding a passkey did not complete: ${err.message}`)
    return
  }
  const r = await postJSON(`${PASSKEY}/register`, { ...answer, label: `${navigator.platform || 'this device'} passkey` })
  if (r.status !== 201) { showMessage(`Adding a passkey failed: ${reason(r)}`); return }
  showMessage('Passkey added: you can now sign in with it.', 'info')
  await listPasskeys()
}

async function listPasskeys () {
  const list = $('#passkey-list')
  const r = await api(`${PASSKEY}/credentials`)
  list.textContent = ''
  if (r.status !== 200) return
  for (const p of r.body) {
    const li = document.createElement('li')
    li.dataset.id = p.id
    li.textContent = `${p.label || 'passkey'}, added ${p.created.slice(0, 10)}${p.lastUsed ? `, last used ${p.lastUsed.slice(0, 16).replace('T', ' ')}` : ''} `
    const del = document.createElement('button')
    del.type = 'button'
    del.textContent = 'Delete'
    del.addEventListener('click', async () => {
      const d = await withPassword(`${PASSKEY}/credentials/${encodeURIComponent(p.id)}`, 'DELETE')
      if (d.status !== 200) showMessage(`Deleting the passkey failed: ${reason(d)}`)
      await listPasskeys()
    })
    li.append(del)
    list.append(li)
  }
}

/** Shows the passkey parts when the provider is on and the browser can use passkeys. */
async function show (user) {
  const { body } = await api('/auth/list')
  const on = Array.isArray(body) && body.includes('passkey') && browserSupportsWebAuthn()
  $('#passkeys').hidden = !on || !user
  $('#passkey-sign-in').hidden = !on || !!user
  if (on && user) await listPasskeys()
}

$('#passkey-signin').addEventListener('click', () => signIn('Passkey sign-in'))
$('#passkey-add').addEventListener('click', addPasskey)
// With an authenticator app too, totp.js asks for a code and offers the passkey (`gatehouse:use-passkey`).
document.addEventListener('gatehouse:second-factor', async (ev) => {
  const methods = ev.detail?.methods ?? []
  if (!methods.includes('passkey') || methods.includes('totp')) return
  showMessage('Password accepted: confirm with your passkey.', 'info')
  await signIn('Confirming with a passkey')
})
document.addEventListener('gatehouse:use-passkey', () => signIn('Confirming with a passkey'))
document.addEventListener('gatehouse:user', (ev) => { show(ev.detail) })

// app.js has read who is signed in before this module runs (it waits for app.js).
await show(currentUser)
