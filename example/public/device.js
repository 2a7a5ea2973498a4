// "Sign in a device" on the demo page: the link to the device page, and "Be the demo CLI", which does what a CLI
// does (RFC 8628): asks for a code as `demo-cli`, shows it, and polls the token endpoint at the interval it was
// given until the person approves or denies the code on the device page (opened in another tab).
import { api, currentUser, reason, showMessage } from './app.js'

const $ = (sel) => document.querySelector(sel)
const AUTH = '/auth'
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'

/** A form POST, as the OAuth 2 endpoints take them (never JSON). */
const form = (fields) => ({ method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) })
const sleep = (seconds) => new Promise((resolve) => setTimeout(resolve, seconds * 1000))

/** Counts the demo CLI's runs: a newer "Be the demo CLI" stops an older run's polling. */
let runs = 0

document.addEventListener('gatehouse:user', (ev) => { $('#device-sign-in').hidden = !ev.detail })
// app.js read the user before this module ran (it is imported first): show the card for that user too.
$('#device-sign-in').hidden = !currentUser
$('#device-curl').textContent = `curl -d client_id=demo-cli ${location.origin}${AUTH}/device/code`

$('#device-try').addEventListener('click', async () => {
  const started = await api(`${AUTH}/device/code`, form({ client_id: 'demo-cli' }))
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
  while (run === runs && Date.now() < ends) {
    await sleep(interval)
    if (run !== runs) return
    const polled = await api(`${AUTH}/token`, form({ grant_type: DEVICE_GRANT, client_id: 'demo-cli', device_code: deviceCode }))
    if (polled.status === 200) {
      // A real CLI keeps the pair (the refresh token in the system keychain); the page only says it got one.
      state.textContent = `Signed in: the demo CLI got an access token (${polled.body.expires_in} s) and a refresh token.`
      document.dispatchEvent(new CustomEvent('gatehouse:user', { detail: currentUser }))
      return
    }
    const error = polled.body?.error
    if (error === 'slow_down') interval += 5
    else if (error !== 'authorization_pending') { state.textContent = `Not signed in: ${error ?? `status ${polled.status}`}.`; return }
  }
  if (run === runs) state.textContent = 'Not signed in: the code expired.'
})
