// Demo page logic: plain browser JavaScript, no build step. Every API call sends the XSRF header read from the
// XSRF-TOKEN cookie, which is how a browser app uses fastify-gatehouse's cookie sessions.
import { captchaToken, resetCaptcha } from './captcha.js'

const $ = (sel) => document.querySelector(sel)
const AUTH = '/auth'
// Providers with a form or flow of their own on this page; every other one is an OAuth2 redirect.
const OWN_UI = new Set(['local', 'email', 'emailcode', 'telegram', 'passkey', 'totp'])
const LABELS = { dev: 'dev (fake OAuth2 server)', custom: 'custom (local OAuth2 server)', oidc: 'OpenID Connect' }

const params = new URLSearchParams(location.search)

/**
 * The device page and a phone app's sign-in (`login: { page: '/' }`) send a browser without a session here with
 * `?from=<path>`; once signed in, the page goes back there. Only a path of this site is followed: the query is
 * anyone's to write, and a link elsewhere would make this page an open redirect.
 */
const returnTo = sameSitePath(params.get('from'))

function sameSitePath (from) {
  if (!from || !from.startsWith('/') || from.startsWith('//') || from.includes('\\')) return null
  const url = new URL(from, location.origin)
  return url.origin === location.origin ? url.pathname + url.search : null
}

/** Where a sign-in that leaves the page (a provider, an e-mail link) comes back to. */
const backHere = `${location.origin}${returnTo ?? '/'}`

function xsrfHeader () {
  // __Host-XSRF-TOKEN when the demo runs on an https AUTH_URL (the package's default cookie names there).
  const m = document.cookie.match(/(?:^|;\s*)(?:__Host-)?XSRF-TOKEN=([^;]+)/)
  return m ? { 'X-XSRF-TOKEN': decodeURIComponent(m[1]) } : {}
}

export async function api (path, init = {}) {
  let res
  try {
    res = await fetch(path, { ...init, headers: { ...xsrfHeader(), ...(init.headers || {}) }, credentials: 'same-origin' })
  } catch {
    return { status: 0, body: { error: 'the demo server cannot be reached' } }
  }
  let body = null
  try { body = await res.json() } catch { body = null }
  return { status: res.status, body }
}

/**
 * A request that changes the account's factors (an authenticator app, a passkey, recovery codes, other sessions).
 * When the sign-in is older than a few minutes the server answers GATEHOUSE_REAUTHENTICATE: the page asks for the
 * password and sends the request again with it. The answer carries `sent`, the body that went (for a retry).
 */
export async function withPassword (path, method, body = {}) {
  const send = (b) => api(path, { method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(b) })
  let sent = body
  let r = await send(sent)
  if (r.body?.code === 'GATEHOUSE_REAUTHENTICATE') {
    const password = window.prompt('Confirm it is you: your password')
    if (!password) return { ...r, sent }
    sent = { ...body, password }
    r = await send(sent)
  }
  return { ...r, sent }
}

export const reason = (r) => r.body?.details || r.body?.error || `status ${r.status}`

/**
 * The signed-in user as this page last read it, or null. passkey.js, totp.js and sessions.js read it instead of
 * asking the server again (they run after this module, so it is set by then).
 */
export let currentUser = null

/**
 * The XSRF cookie comes and goes with the session cookie (set at sign-in, cleared at logout; the session cookie
 * itself is HttpOnly). Without it the page is signed out, and asking `/auth/user` would only earn a 401, which a
 * browser's console reports as an error on every signed-out visit.
 */
const mayBeSignedIn = () => /(?:^|;\s*)(?:__Host-)?XSRF-TOKEN=/.test(document.cookie)

export function showMessage (text, kind = 'error') {
  const el = $('#message')
  el.textContent = text
  el.dataset.kind = kind
  el.hidden = !text
}

async function refresh () {
  const { status, body } = mayBeSignedIn() ? await api(`${AUTH}/user`) : { status: 401, body: null }
  const signedIn = status === 200
  currentUser = signedIn ? body : null
  if (signedIn && returnTo) { location.assign(returnTo); return }
  $('#status').textContent = signedIn ? `signed in as ${body.name}` : 'not signed in'
  $('#signed-in').hidden = !signedIn
  $('#sign-in').hidden = signedIn
  // passkey.js shows the user's passkeys (or the passkey sign-in) from this.
  document.dispatchEvent(new CustomEvent('gatehouse:user', { detail: signedIn ? body : null }))
  if (!signedIn) return
  $('#user-name').textContent = body.name
  $('#user-id').textContent = body.id
  $('#user-extra').textContent = [body.role && `role: ${body.role}`, body.attrs?.admin && 'admin', body.email].filter(Boolean).join(', ')
  const img = $('#avatar')
  img.hidden = !body.picture
  if (body.picture) img.src = body.picture
}

async function loadProviders () {
  const { body } = await api(`${AUTH}/list`)
  const names = Array.isArray(body) ? body : []
  const from = encodeURIComponent(backHere)
  const box = $('#oauth-buttons')
  box.textContent = ''
  for (const name of names.filter((n) => !OWN_UI.has(n))) {
    const a = document.createElement('a')
    a.href = `${AUTH}/${encodeURIComponent(name)}/login?from=${from}`
    a.textContent = `Sign in with ${LABELS[name] || name}`
    a.dataset.provider = name
    box.append(a)
  }
  $('#method-password').hidden = !names.includes('local')
  $('#method-oauth2').hidden = box.childElementCount === 0
  $('#method-email').hidden = !names.includes('email')
  $('#method-emailcode').hidden = !names.includes('emailcode')
  $('#telegram').hidden = !names.includes('telegram')
}

$('#direct-form').addEventListener('submit', async (ev) => {
  ev.preventDefault()
  const form = new FormData(ev.target)
  const session = form.get('session') ? '1' : '0'
  const captcha = await captchaToken()
  const r = await api(`${AUTH}/local/login?session=${session}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ user: form.get('user'), passwd: form.get('passwd'), ...(captcha ? { 'cf-turnstile-response': captcha } : {}) })
  })
  resetCaptcha()
  // The password was right but the user has a second factor: passkey.js or totp.js asks for it (`methods`).
  if (r.body?.code === 'GATEHOUSE_SECOND_FACTOR') { ev.target.reset(); document.dispatchEvent(new CustomEvent('gatehouse:second-factor', { detail: { methods: r.body.methods ?? [] } })); return }
  if (r.status !== 200) { showMessage(`Sign-in failed: ${reason(r)}`); return }
  ev.target.reset()
  showMessage('')
  await refresh()
})

document.addEventListener('gatehouse:signed-in', async () => { showMessage(''); await refresh() })

$('#email-form').addEventListener('submit', async (ev) => {
  ev.preventDefault()
  const form = new FormData(ev.target)
  const q = new URLSearchParams({ user: form.get('user'), address: form.get('address'), from: backHere })
  const r = await api(`${AUTH}/email/login?${q}`)
  if (r.status === 200) showMessage('Confirmation sent: open its link, or paste the token below.', 'info')
  else showMessage(`Sending failed: ${reason(r)}`)
})

$('#email-confirm').addEventListener('click', async () => {
  const token = $('#email-form').elements.token.value.trim()
  // The token carries `from`, so a good one answers with a redirect to this page (followed by fetch).
  const r = await api(`${AUTH}/email/login?token=${encodeURIComponent(token)}`)
  if (r.status !== 200) { showMessage(`Confirmation failed: ${reason(r)}`); return }
  showMessage('')
  await refresh()
})

$('#emailcode-form').addEventListener('submit', async (ev) => {
  ev.preventDefault()
  const form = new FormData(ev.target)
  const q = new URLSearchParams({ user: form.get('user'), address: form.get('address'), from: backHere })
  const r = await api(`${AUTH}/emailcode/login?${q}`)
  if (r.status === 200) showMessage(`Code sent: type the ${r.body.digits} digits below.`, 'info')
  else showMessage(`Sending failed: ${reason(r)}`)
})

$('#emailcode-confirm').addEventListener('click', async () => {
  const form = $('#emailcode-form').elements
  // A code is never put in a link: it goes back as a POST, with the address it was sent to.
  const body = JSON.stringify({ address: form.address.value.trim(), code: form.code.value.trim() })
  const r = await api(`${AUTH}/emailcode/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body })
  if (r.status !== 200) { showMessage(`Sign-in failed: ${reason(r)}`); return }
  showMessage('')
  await refresh()
})

$('#telegram-start').addEventListener('click', async () => {
  const r = await api(`${AUTH}/telegram/login`)
  if (r.status !== 200) { showMessage(`Telegram login unavailable: ${reason(r)}`); return }
  const a = document.createElement('a')
  a.href = `https://t.me/${encodeURIComponent(r.body.bot)}?start=${encodeURIComponent(r.body.token)}`
  a.target = '_blank'
  a.rel = 'noopener'
  a.textContent = `Open @${r.body.bot} and press Start`
  $('#telegram-link').replaceChildren(a)
  for (let i = 0; i < 90; i++) {
    await new Promise((resolve) => setTimeout(resolve, 2000))
    const poll = await api(`${AUTH}/telegram/login?token=${encodeURIComponent(r.body.token)}`)
    if (poll.status === 200) { $('#telegram-link').textContent = ''; await refresh(); return }
    if (poll.status !== 404) { showMessage(`Telegram login failed: ${reason(poll)}`); return }
  }
  showMessage('Telegram login timed out: press Log in with Telegram again.')
})

$('#logout').addEventListener('click', async () => {
  await api(`${AUTH}/logout`)
  showMessage('')
  $('#api-result').textContent = ''
  await refresh()
})

for (const btn of document.querySelectorAll('[data-api]')) {
  btn.addEventListener('click', async () => {
    const out = $('#api-result')
    out.textContent = `${btn.dataset.api} …`
    delete out.dataset.verdict
    const { status, body } = await api(btn.dataset.api)
    const verdict = status > 0 && status < 300 ? 'allowed' : 'denied'
    out.dataset.verdict = verdict
    out.textContent = `${btn.dataset.api} → ${status} ${verdict}\n${JSON.stringify(body, null, 2)}`
  })
}

// A provider login that was cancelled or failed comes back here with ?error=…; show it once, then tidy the URL.
if (params.get('error')) {
  showMessage(`Sign-in did not complete: ${params.get('error')}`)
  history.replaceState(null, '', location.pathname)
} else if (returnTo) {
  showMessage('Sign in to continue: a device or an app is waiting for you.', 'info')
}

await loadProviders()
await refresh()
