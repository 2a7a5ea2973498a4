/**
 * The page of docs/guide/spa.md's cookie session (a sibling subdomain), compiled with the DOM library (lines as
 * written there; test/e2e/browser/spa.test.ts runs the page's code as written).
 */
const API = 'https://api.example.com'
const xsrf = () => document.cookie.match(/(?:^|; )(?:__Secure-)?XSRF-TOKEN=([^;]+)/)?.[1] ?? ''

async function signIn (user = '', passwd = '') {
  const res = await fetch(`${API}/auth/local/login`, { method: 'POST', credentials: 'include', body: new URLSearchParams({ user, passwd }) })
  return res.ok
}

async function whoAmI () {
  const res = await fetch(`${API}/api/me`, { credentials: 'include', headers: { 'X-XSRF-TOKEN': xsrf() } })
  return res.ok ? (await res.json()).name : null
}

export { signIn, whoAmI }
