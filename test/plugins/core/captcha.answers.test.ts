/**
 * The captcha answers that must not let a login in although nothing in them says "refused": a siteverify answer
 * with `success: true` but no `hostname`, a Turnstile answer without the configured `action`, a reCAPTCHA v3 answer
 * without a score (a v2 key's token), and a verifier of the host answering `{}`, `undefined`, `null` or only a
 * `reason`. Each is a 403 `GATEHOUSE_CAPTCHA`, and the credential checker never runs.
 */
import t, { type Test } from 'tap'
import { authPlugin, type AuthOptions } from '../../../auth.js'
import { directProvider } from '../../../providers/direct.js'
import { recaptchaV3Verifier, turnstileVerifier } from '../../../lib/captcha/siteverify.js'
import { listen } from '../../helpers/client.js'
import { captchaStandin } from '../../helpers/captcha-standin.js'

const SECRET = 'captcha-test-secret-0123456789abcdef-0123456789'
const HOST = 'app.localhost'

const standin = await captchaStandin()
t.teardown(() => standin.close())
standin.site('turnstile', 'ts-site', 'ts-secret')
standin.site('recaptcha', 'rc-site', 'rc-secret')

/** An app with a direct provider `local` behind `captcha`; the users its checker saw. */
async function start (t: Test, captcha: AuthOptions['captcha']): Promise<{ base: string; checked: string[] }> {
  const checked: string[] = []
  const { app, base } = await listen(async (app) => {
    await app.register(authPlugin, { secret: SECRET, url: `http://${HOST}`, captcha, rateLimit: { failures: { perIp: 1000, perAccount: 1000 } } })
    await app.register(directProvider, { name: 'local', checker: (user: string) => { checked.push(user); return true } })
  })
  t.teardown(() => app.close())
  return { base, checked }
}

async function login (base: string, form: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}/auth/local/login`, { method: 'POST', body: new URLSearchParams({ user: 'ann', passwd: 'pw', ...form }), redirect: 'manual' })
  return { status: res.status, body: await res.json() as Record<string, unknown> }
}

t.test('a siteverify answer without hostname, or without the configured action, is refused', async (t) => {
  const app = await start(t, turnstileVerifier({ secret: 'ts-secret', verifyUrl: standin.url('turnstile'), action: 'login' }))
  const token = (o: { hostname?: string | undefined; action?: string } = {}) => standin.issue({ service: 'turnstile', sitekey: 'ts-site', hostname: HOST, action: 'login', ...o })
  for (const [what, tok, reason] of [
    ['no hostname in the answer', token({ hostname: undefined }), 'hostname'],
    ['no action in the answer (a widget without data-action)', token({ action: undefined }), 'action']
  ] as const) {
    const r = await login(app.base, { 'cf-turnstile-response': tok })
    t.equal(r.status, 403, what)
    t.match(r.body, { code: 'GATEHOUSE_CAPTCHA', details: `captcha refused: ${reason}` }, what)
  }
  t.same(app.checked, [], 'the checker never ran')
  t.equal((await login(app.base, { 'cf-turnstile-response': token() })).status, 200, 'a complete answer signs in')
})

t.test('a reCAPTCHA v3 answer without a score is refused', async (t) => {
  const app = await start(t, recaptchaV3Verifier({ secret: 'rc-secret', verifyUrl: standin.url('recaptcha') }))
  const r = await login(app.base, { 'g-recaptcha-response': standin.issue({ service: 'recaptcha', sitekey: 'rc-site', hostname: HOST, action: 'login' }) })
  t.equal(r.status, 403)
  t.match(r.body, { code: 'GATEHOUSE_CAPTCHA', details: 'captcha refused: score' })
  const scored = await login(app.base, { 'g-recaptcha-response': standin.issue({ service: 'recaptcha', sitekey: 'rc-site', hostname: HOST, action: 'login', score: 0.9 }) })
  t.equal(scored.status, 200, 'the same answer with a score signs in')
  t.same(app.checked, ['ann'])
})

t.test('a verifier answering {}, undefined, null or only a reason refuses the login', async (t) => {
  let verdict: unknown
  const app = await start(t, { verify: () => verdict as never })
  for (const [what, value, details] of [
    ['{}', {}, 'captcha refused: invalid'],
    ['undefined', undefined, 'captcha refused: invalid'],
    ['null', null, 'captcha refused: invalid'],
    ['{ reason }', { reason: 'bot-like' }, 'captcha refused: bot-like'],
    ['{ ok: "yes" }', { ok: 'yes' }, 'captcha refused: invalid'],
    ['1', 1, 'captcha refused: invalid']
  ] as const) {
    verdict = value
    const r = await login(app.base, { captcha: 'tok' })
    t.equal(r.status, 403, what)
    t.match(r.body, { code: 'GATEHOUSE_CAPTCHA', details }, what)
  }
  t.same(app.checked, [], 'the checker never ran')
  verdict = { ok: true }
  t.equal((await login(app.base, { captcha: 'tok' })).status, 200, '{ ok: true } lets the login go on')
})
