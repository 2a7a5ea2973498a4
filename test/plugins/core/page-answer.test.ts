/**
 * The package's two confirmation forms, the device page (`POST {authPrefix}/device`) and the confirmation of a
 * sign-in started from another site (`POST {authPrefix}/authorize`), are judged by one handler (issue 43, item 11):
 * the same refusal for the same bad answer, and the page's XSRF value compared in constant time (through
 * `crypto.timingSafeEqual`, watched here), never with `!==`.
 */
import t from 'tap'
import crypto from 'node:crypto'
import { syncBuiltinESMExports } from 'node:module'
import { clientsApp } from '../../helpers/clients-app.js'

const s = await clientsApp()
t.teardown(s.close)
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'

const login = await s.app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'ann', passwd: 'x' } })
const jar = Object.fromEntries(login.cookies.map((c) => [c.name, c.value]))
const cookie = `JWT=${jar.JWT!}; XSRF-TOKEN=${jar['XSRF-TOKEN']!}`
const xsrf = jar['XSRF-TOKEN']!

const FORMS = {
  device: { url: '/auth/device', fields: { user_code: 'BCDF-GHJK' } },
  authorize: { url: '/auth/authorize', fields: { response_type: 'code', client_id: 'mobile', redirect_uri: 'com.example.app:/callback', code_challenge: CHALLENGE, code_challenge_method: 'S256' } }
}

async function post (form: keyof typeof FORMS, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return await s.app.inject({
    method: 'POST',
    url: FORMS[form].url,
    headers: { ...FORM, cookie, origin: s.base, 'sec-fetch-site': 'same-origin', ...headers },
    payload: new URLSearchParams({ ...FORMS[form].fields, ...fields }).toString()
  })
}

t.test('the same refusal from both forms for each bad answer', async (t) => {
  const wrong = `${xsrf.slice(0, -1)}${xsrf.endsWith('A') ? 'B' : 'A'}`
  const bad: Array<[string, Record<string, string>, Record<string, string>, number, string]> = [
    ['from another site', { xsrf, action: 'approve' }, { 'sec-fetch-site': 'cross-site' }, 403, 'GATEHOUSE_CROSS_SITE'],
    ['from another origin', { xsrf, action: 'approve' }, { origin: 'https://evil.example' }, 403, 'GATEHOUSE_CROSS_SITE'],
    ['signed out', { xsrf, action: 'approve' }, { cookie: '' }, 401, 'GATEHOUSE_UNAUTHORIZED'],
    ['a wrong XSRF value of the same length', { xsrf: wrong, action: 'approve' }, {}, 403, 'GATEHOUSE_XSRF'],
    ['a shorter XSRF value', { xsrf: xsrf.slice(1), action: 'approve' }, {}, 403, 'GATEHOUSE_XSRF'],
    ['no XSRF value', { action: 'approve' }, {}, 400, 'GATEHOUSE_OAUTH'],
    ['an action of neither kind', { xsrf, action: 'maybe' }, {}, 400, 'GATEHOUSE_BAD_REQUEST']
  ]
  for (const [why, fields, headers, status, code] of bad) {
    const answers = await Promise.all((['device', 'authorize'] as const).map(async (form) => await post(form, fields, headers)))
    for (const [i, r] of answers.entries()) {
      t.equal(r.statusCode, status, `${why}: ${i === 0 ? 'device' : 'authorize'} ${status}`)
      t.equal(r.json().code, code, `${why}: ${code}`)
    }
    const [device, authorize] = answers.map((r) => { const { details, ...rest } = r.json(); return rest })
    t.same(device, authorize, `${why}: one refusal (the details name what was asked)`)
  }
})

t.test('the XSRF value is compared in constant time on both forms', async (t) => {
  const compared: string[] = []
  const original = crypto.timingSafeEqual
  crypto.timingSafeEqual = ((a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
    compared.push(Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('utf8'))
    return original(a, b)
  }) as typeof crypto.timingSafeEqual
  syncBuiltinESMExports()
  t.teardown(() => { crypto.timingSafeEqual = original; syncBuiltinESMExports() })
  for (const form of ['device', 'authorize'] as const) {
    const sent = `${xsrf.slice(0, -2)}zz`
    compared.length = 0
    const r = await post(form, { xsrf: sent, action: 'approve' })
    t.equal(r.statusCode, 403, form)
    t.ok(compared.includes(sent), `${form}: the sent value went through timingSafeEqual`)
  }
})
