/**
 * Who may `POST …/logout?all=1` (issue 49, item 8): the pages that state the rule (revocation.md, routes.md,
 * sessions-list.md, security.md) state the one rule the security fix made, and the app keeps each part of it: a
 * `GET` with `all` is 405, a header or bearer token is 403 `GATEHOUSE_FORBIDDEN`, a cookie session without its XSRF
 * header is 401 `GATEHOUSE_XSRF`, one whose sign-in is not recent is 401 `GATEHOUSE_REAUTHENTICATE` (and stays
 * signed in), one with the password in the body ends every session, and a cross-site request is 403.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { root } from './pages.js'
import { accountApp, fakeClock, signIn, URL_BASE, xsrf } from '../helpers/account-app.js'

const page = (p: string): string => readFileSync(join(root, p), 'utf8').replace(/\s+/g, ' ')
const PAGES = ['docs/guide/revocation.md', 'docs/reference/routes.md', 'docs/guide/sessions-list.md', 'docs/guide/security.md']

t.test('each page that states the rule states all of it', async (t) => {
  for (const p of PAGES) {
    const text = page(p)
    t.match(text, /logout\?all=1/, `${p} names the route`)
    t.match(text, /cookie session/, `${p}: a cookie session`)
    t.match(text, /XSRF header/, `${p}: with its XSRF header`)
    t.match(text, /(header, bearer or query token|bearer or query token)/, `${p}: a token in a header or URL is not one`)
    t.match(text, /(recent|reauthentication\.within)/, `${p}: a recent sign-in`)
    t.match(text, /password/, `${p}: or the password`)
  }
  for (const p of ['docs/guide/revocation.md', 'docs/reference/routes.md']) {
    const text = page(p)
    t.match(text, /405/, `${p}: a GET with all is 405`)
    t.match(text, /403 `GATEHOUSE_FORBIDDEN`/, `${p}: 403 GATEHOUSE_FORBIDDEN for a token`)
    t.match(text, /401 `GATEHOUSE_REAUTHENTICATE`/, `${p}: 401 GATEHOUSE_REAUTHENTICATE otherwise`)
  }
})

t.test('the app keeps each part of the rule', async (t) => {
  const clock = fakeClock(t)
  const a = await accountApp(t)
  const c = a.client()
  const other = a.client()
  await signIn(other, 'alice')
  await signIn(c, 'alice')
  const token = c.jar.get('JWT')!
  const status = async (res: Response): Promise<[number, string | undefined]> => [res.status, ((await res.json()) as { code?: string }).code]

  t.same(await status(await c.fetch('/auth/logout?all=1', { headers: xsrf(c) })), [405, 'GATEHOUSE_BAD_REQUEST'], 'a GET with all')
  t.same(await status(await a.client().fetch('/auth/logout?all=1', { method: 'POST', headers: { authorization: `Bearer ${token}` }, json: {} })), [403, 'GATEHOUSE_FORBIDDEN'], 'a bearer token')
  t.same(await status(await a.client().fetch('/auth/logout?all=1', { method: 'POST', headers: { 'x-jwt': token }, json: {} })), [403, 'GATEHOUSE_FORBIDDEN'], 'a header token')
  t.same(await status(await c.fetch('/auth/logout?all=1', { method: 'POST', json: {} })), [401, 'GATEHOUSE_XSRF'], 'a cookie session without its XSRF header')
  t.same(await status(await c.fetch('/auth/logout?all=1', { method: 'POST', headers: { ...xsrf(c), origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }, json: {} })), [403, 'GATEHOUSE_CROSS_SITE'], 'from another site')
  clock.tick(6 * 60_000)
  t.same(await status(await c.fetch('/auth/logout?all=1', { method: 'POST', headers: xsrf(c), json: {} })), [401, 'GATEHOUSE_REAUTHENTICATE'], 'a sign-in that is not recent')
  t.equal((await c.fetch('/auth/user', { headers: xsrf(c) })).status, 200, 'refused, this browser stays signed in')
  const done = await c.fetch('/auth/logout?all=1', { method: 'POST', headers: { ...xsrf(c), origin: URL_BASE }, json: { password: 'alice-secret' } })
  t.equal(done.status, 200, 'with the password: every session ends')
  t.equal((await other.fetch('/auth/user', { headers: xsrf(other) })).status, 401, 'the other session too')
})
