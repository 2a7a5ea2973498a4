// "Where you're signed in" on the demo page: the signed-in user's sessions from GET /auth/sessions, with "Sign out"
// per row (DELETE /auth/sessions/:id) and "Sign out everywhere else" (DELETE /auth/sessions). Redrawn whenever
// app.js says who is signed in.
import { api, currentUser, reason, showMessage, withPassword } from './app.js'

const $ = (sel) => document.querySelector(sel)
const SESSIONS = '/auth/sessions'

/** "3 minutes ago", "just now", "2 hours ago", "5 days ago". */
function ago (iso) {
  const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000))
  if (s < 60) return 'just now'
  const [n, unit] = s < 3600 ? [Math.round(s / 60), 'minute'] : s < 86400 ? [Math.round(s / 3600), 'hour'] : [Math.round(s / 86400), 'day']
  return `${n} ${unit}${n === 1 ? '' : 's'} ago`
}

function row (session) {
  const li = document.createElement('li')
  li.dataset.session = session.id
  const text = document.createElement('div')
  text.className = 'session-text'
  const name = document.createElement('strong')
  name.textContent = session.device
  const meta = document.createElement('span')
  meta.className = 'session-meta'
  meta.textContent = [session.provider && `via ${session.provider}`, session.ip, `last seen ${ago(session.lastSeenAt)}`].filter(Boolean).join(' · ')
  text.append(name, meta)
  li.append(text)
  if (session.current) {
    const here = document.createElement('span')
    here.className = 'this-device'
    here.textContent = 'this device'
    li.append(here)
  }
  const out = document.createElement('button')
  out.type = 'button'
  out.className = 'secondary'
  out.textContent = 'Sign out'
  out.addEventListener('click', () => signOut(session))
  li.append(out)
  return li
}

async function draw () {
  const r = await api(SESSIONS)
  // Off on this server (revocation.sessionList: false), or signed out meanwhile.
  if (r.status !== 200) { $('#sessions').hidden = true; return }
  $('#session-list').replaceChildren(...r.body.map(row))
  $('#sessions-others').hidden = r.body.length < 2
  $('#sessions').hidden = false
}

async function signOut (session) {
  // Signing another device out needs a recent sign-in or the password; this one's own session does not.
  const r = await withPassword(`${SESSIONS}/${encodeURIComponent(session.id)}`, 'DELETE')
  if (r.status !== 204) { showMessage(`Signing out failed: ${reason(r)}`); return }
  // Ending this browser's own session signs it out: app.js redraws the page (and this card with it).
  if (session.current) document.dispatchEvent(new CustomEvent('gatehouse:signed-in'))
  else await draw()
}

$('#sessions-others').addEventListener('click', async () => {
  const r = await withPassword(SESSIONS, 'DELETE')
  if (r.status !== 200) { showMessage(`Signing out failed: ${reason(r)}`); return }
  await draw()
})

document.addEventListener('gatehouse:user', (ev) => {
  if (ev.detail === null) $('#sessions').hidden = true
  else draw()
})

// app.js has shown the signed-in user before this module runs (it waits for app.js): draw once here, when
// someone is signed in (signed out, the list would only answer 401).
if (currentUser !== null) await draw()
