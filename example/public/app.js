// Demo page logic: plain browser JavaScript, no build step. Every API call sends the XSRF header read from the
// XSRF-TOKEN cookie, which is how a browser app uses fastify-gatehouse's cookie sessions.
const $ = (sel) => document.querySelector(sel)

function xsrfHeader () {
  const m = document.cookie.match(/(?:^|;\s*)XSRF-TOKEN=([^;]+)/)
  return m ? { 'X-XSRF-TOKEN': decodeURIComponent(m[1]) } : {}
}

async function api (path, init = {}) {
  const res = await fetch(path, { ...init, headers: { ...xsrfHeader(), ...(init.headers || {}) }, credentials: 'same-origin' })
  let body = null
  try { body = await res.json() } catch { body = null }
  return { status: res.status, body }
}

function showMessage (text) {
  const el = $('#message')
  el.textContent = text
  el.hidden = !text
}

async function refresh () {
  const { status, body } = await api('/auth/user')
  const signedIn = status === 200
  $('#status').textContent = signedIn ? `signed in as ${body.name}` : 'not signed in'
  $('#signed-in').hidden = !signedIn
  $('#sign-in').hidden = signedIn
  if (signedIn) {
    $('#user-name').textContent = body.name
    $('#user-id').textContent = body.id
    $('#user-role').textContent = [body.role && `role: ${body.role}`, body.attrs?.admin && 'admin'].filter(Boolean).join(', ')
    const img = $('#avatar')
    img.hidden = !body.picture
    if (body.picture) img.src = body.picture
  }
}

async function loadProviders () {
  const { body: names } = await api('/auth/list')
  const here = encodeURIComponent(location.origin + '/')
  const box = $('#oauth-buttons')
  box.textContent = ''
  for (const name of names || []) {
    if (['local', 'email', 'telegram'].includes(name)) continue
    const a = document.createElement('a')
    a.href = `/auth/${encodeURIComponent(name)}/login?from=${here}`
    a.textContent = `Sign in with ${name}`
    a.dataset.provider = name
    box.append(a)
  }
  $('#email-form').hidden = !(names || []).includes('email')
  $('#telegram').hidden = !(names || []).includes('telegram')
}

$('#direct-form').addEventListener('submit', async (ev) => {
  ev.preventDefault()
  const form = new FormData(ev.target)
  const session = form.get('session') ? '1' : '0'
  const { status, body } = await api(`/auth/local/login?session=${session}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ user: form.get('user'), passwd: form.get('passwd') })
  })
  if (status !== 200) { showMessage(`Sign-in failed: ${body?.details || body?.error || status}`); return }
  showMessage('')
  await refresh()
})

$('#email-form').addEventListener('submit', async (ev) => {
  ev.preventDefault()
  const form = new FormData(ev.target)
  const q = new URLSearchParams({ user: form.get('user'), address: form.get('address'), from: location.origin + '/' })
  const { status, body } = await api(`/auth/email/login?${q}`)
  showMessage(status === 200 ? 'Confirmation sent: paste the token below.' : `Sending failed: ${body?.details || body?.error || status}`)
})

$('#email-confirm').addEventListener('click', async () => {
  const token = $('#email-form').elements.token.value.trim()
  const { status, body } = await api(`/auth/email/login?token=${encodeURIComponent(token)}`)
  if (status !== 200) { showMessage(`Confirmation failed: ${body?.details || body?.error || status}`); return }
  showMessage('')
  await refresh()
})

$('#telegram-start').addEventListener('click', async () => {
  const { status, body } = await api('/auth/telegram/login')
  if (status !== 200) { showMessage(`Telegram login unavailable: ${body?.error || status}`); return }
  const link = `https://t.me/${body.bot}?start=${body.token}`
  $('#telegram-link').innerHTML = ''
  const a = document.createElement('a')
  a.href = link; a.target = '_blank'; a.rel = 'noopener'; a.textContent = 'Open the bot and press Start'
  $('#telegram-link').append(a)
  for (let i = 0; i < 60; i++) {
    await new Promise((resolve) => setTimeout(resolve, 2000))
    const r = await api(`/auth/telegram/login?token=${encodeURIComponent(body.token)}`)
    if (r.status === 200) { await refresh(); return }
    if (r.status !== 404) { showMessage(`Telegram login failed: ${r.body?.details || r.body?.error}`); return }
  }
})

$('#logout').addEventListener('click', async () => {
  await api('/auth/logout')
  await refresh()
})

for (const btn of document.querySelectorAll('[data-api]')) {
  btn.addEventListener('click', async () => {
    const { status, body } = await api(btn.dataset.api)
    $('#api-result').textContent = `${btn.dataset.api} → ${status} ${status < 300 ? 'allowed' : 'denied'}\n${JSON.stringify(body, null, 2)}`
  })
}

// A provider login that was cancelled or failed comes back here with ?error=…
const params = new URLSearchParams(location.search)
if (params.get('error')) showMessage(`Sign-in did not complete: ${params.get('error')}`)

await loadProviders()
await refresh()
