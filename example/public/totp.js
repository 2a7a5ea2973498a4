// Authenticator apps on the demo page: "Add an authenticator app" for the signed-in user (QR code, confirmed with a
// code, recovery codes shown once), and the second step of a `local` password login asking for a code, with "use a
// recovery code instead". The server side is fastify-gatehouse's TOTP provider under /auth/totp.
import { api, currentUser, reason, showMessage, withPassword } from './app.js'

const $ = (sel) => document.querySelector(sel)
const TOTP = '/auth/totp'
const postJSON = (path, body) => api(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })
let recovery = false

/** The served QR code, parsed as SVG (never as HTML) and put in place. */
function showQr (svgText) {
  const svg = new DOMParser().parseFromString(svgText, 'image/svg+xml').documentElement
  $('#totp-qr').replaceChildren(document.importNode(svg, true))
}

function showCodes (codes) {
  $('#totp-code-list').replaceChildren(...codes.map((c) => Object.assign(document.createElement('li'), { textContent: c })))
  $('#totp-codes').hidden = false
}

async function refreshState () {
  const r = await api(`${TOTP}/status`)
  if (r.status !== 200) return
  const { enabled, recoveryCodesLeft } = r.body
  $('#totp-state').textContent = enabled ? `On: password sign-ins ask for a code. ${recoveryCodesLeft} recovery codes left.` : 'Off.'
  $('#totp-add').hidden = enabled
  $('#totp-new-codes').hidden = !enabled
  $('#totp-remove').hidden = !enabled
}

async function addApp () {
  const r = await withPassword(`${TOTP}/enrol`, 'POST')
  if (r.status !== 201) { showMessage(`Adding an authenticator app failed: ${reason(r)}`); return }
  showQr(r.body.qr)
  $('#totp-secret').textContent = r.body.secret
  $('#totp-codes').hidden = true
  $('#totp-enrol').hidden = false
  $('#totp-confirm-code').focus()
}

async function confirmApp (ev) {
  ev.preventDefault()
  const r = await postJSON(`${TOTP}/enrol/confirm`, { code: $('#totp-confirm-code').value.trim() })
  if (r.status !== 200) { showMessage(`That code did not confirm it: ${reason(r)}`); return }
  ev.target.reset()
  $('#totp-enrol').hidden = true
  showCodes(r.body.recoveryCodes)
  showMessage('Authenticator app added: your next password sign-in asks for a code.', 'info')
  await refreshState()
}

/**
 * Removal and new codes need a recent sign-in (or the password) and a code confirmed in this session: ask for
 * each when the server says so, then retry.
 */
async function withFreshCode (path, method) {
  let r = await withPassword(path, method)
  if (r.body?.code === 'GATEHOUSE_STEP_UP') {
    const code = window.prompt('Type a code from your authenticator app')
    if (!code) return null
    r = await withPassword(path, method, { ...r.sent, code: code.trim() })
  }
  if (r.status !== 200) { showMessage(`Failed: ${reason(r)}`); return null }
  return r.body
}

function askForCode (methods) {
  recovery = false
  setRecoveryMode()
  $('#totp-use-passkey').hidden = !methods.includes('passkey')
  $('#totp-step').hidden = false
  $('#totp-login-code').focus()
  showMessage('Password accepted: type the code from your authenticator app.', 'info')
}

function setRecoveryMode () {
  $('#totp-login-label').textContent = recovery ? 'Recovery code' : 'Code'
  $('#totp-login-code').inputMode = recovery ? 'text' : 'numeric'
  $('#totp-use-recovery').textContent = recovery ? 'Use a code from the app instead' : 'Use a recovery code instead'
}

async function secondStep (ev) {
  ev.preventDefault()
  const value = $('#totp-login-code').value.trim()
  const trustDevice = $('#totp-trust').checked
  const r = await postJSON(`${TOTP}/login`, recovery ? { recoveryCode: value, trustDevice } : { code: value, trustDevice })
  if (r.status !== 200) { showMessage(`Sign-in failed: ${reason(r)}`); return }
  ev.target.reset()
  $('#totp-step').hidden = true
  const left = recovery ? ' A recovery code was used: make new ones on your account.' : ''
  showMessage(left, 'info')
  document.dispatchEvent(new CustomEvent('gatehouse:signed-in'))
}

async function show (user) {
  // Recovery codes are shown once: gone from the page when the user signs out or in again.
  $('#totp-code-list').replaceChildren()
  $('#totp-codes').hidden = true
  $('#totp-enrol').hidden = true
  const { body } = await api('/auth/list')
  const on = Array.isArray(body) && body.includes('totp')
  $('#totp').hidden = !on || !user
  if (user) $('#totp-step').hidden = true
  if (on && user) await refreshState()
}

$('#totp-add').addEventListener('click', addApp)
$('#totp-confirm-form').addEventListener('submit', confirmApp)
$('#totp-new-codes').addEventListener('click', async () => { const b = await withFreshCode(`${TOTP}/recovery-codes`, 'POST'); if (b) { showCodes(b.recoveryCodes); await refreshState() } })
$('#totp-remove').addEventListener('click', async () => { if (await withFreshCode(`${TOTP}/`, 'DELETE')) { $('#totp-codes').hidden = true; await refreshState() } })
$('#totp-login-form').addEventListener('submit', secondStep)
$('#totp-use-recovery').addEventListener('click', () => { recovery = !recovery; setRecoveryMode(); $('#totp-login-code').focus() })
$('#totp-use-passkey').addEventListener('click', () => { $('#totp-step').hidden = true; document.dispatchEvent(new CustomEvent('gatehouse:use-passkey')) })
document.addEventListener('gatehouse:second-factor', (ev) => { if ((ev.detail?.methods ?? []).includes('totp')) askForCode(ev.detail.methods) })
document.addEventListener('gatehouse:user', (ev) => { show(ev.detail) })

// app.js has read who is signed in before this module runs (it waits for app.js).
await show(currentUser)
