/**
 * The `captcha` option over real HTTP: an app listening on a port, the three built-in verifiers asking a local
 * stand-in of their siteverify endpoints (test/helpers/captcha-standin.ts). The captcha is checked in the login
 * prelude, for every provider, before the provider sees the request: a direct POST without a solved captcha never
 * reaches the credential checker; a token reused, of another site, of another host or action, or a bot's score is
 * refused; a slow or failing service is a 503 within the deadline; refusals lock the client's address.
 */
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { authPlugin, type AuthOptions } from '../../../auth.js'
import { providerKit } from '../../../plugins/core/kit.js'
import { directProvider } from '../../../providers/direct.js'
import { hcaptchaVerifier, recaptchaV3Verifier, turnstileVerifier } from '../../../lib/captcha/siteverify.js'
import type { AuditEvent } from '../../../lib/audit/events.js'
import { OptionsError } from '../../../lib/errors.js'
import { listen } from '../../helpers/client.js'
import { captchaStandin, type CaptchaStandin } from '../../helpers/captcha-standin.js'

const SECRET = 'captcha-test-secret-0123456789abcdef-0123456789'
const HOST = 'app.localhost'

const standin = await captchaStandin()
t.teardown(() => standin.close())
standin.site('turnstile', 'ts-site', 'ts-secret')
standin.site('turnstile', 'ts-other-site', 'ts-other-secret')
standin.site('hcaptcha', 'hc-site', 'hc-secret')
standin.site('hcaptcha', 'hc-other-site', 'hc-other-secret')
standin.site('recaptcha', 'rc-site', 'rc-secret')

interface Started { base: string; checked: string[]; events: AuditEvent[] }

/** An app with a direct provider `local` and a provider `mine` that only answers, behind `captcha`. */
async function start (t: Test, captcha: AuthOptions['captcha'], extra: Partial<AuthOptions> = {}): Promise<Started> {
  const checked: string[] = []
  const events: AuditEvent[] = []
  const { app, base } = await listen(async (app: FastifyInstance) => {
    await app.register(authPlugin, { secret: SECRET, url: `http://${HOST}`, captcha, onEvent: (e) => { events.push(e) }, ...extra })
    await app.register(directProvider, { name: 'local', checker: (user: string, passwd: string) => { checked.push(user); return passwd === 'right-password' } })
    await app.register(async (scope) => {
      const kit = providerKit(scope)
      kit.mount({ name: 'mine', login: (_request, reply) => reply.send({ answered: 'mine' }) })
      // A login that continues one begun elsewhere (a confirmation link, a second factor) is not asked again.
      kit.mount({ name: 'later', login: (_request, reply) => reply.send({ answered: 'later' }) }, { continuesLogin: () => true })
    })
  })
  t.teardown(() => app.close())
  return { base, checked, events }
}

async function post (base: string, path: string, form: Record<string, string>): Promise<Response> {
  return await fetch(`${base}${path}`, { method: 'POST', body: new URLSearchParams(form), redirect: 'manual' })
}

const turnstile = (o: Partial<Parameters<typeof turnstileVerifier>[0]> = {}) => turnstileVerifier({ secret: 'ts-secret', verifyUrl: standin.url('turnstile'), action: 'login', ...o })
const tsToken = (o: { sitekey?: string; hostname?: string; action?: string } = {}) => standin.issue({ service: 'turnstile', sitekey: 'ts-site', hostname: HOST, action: 'login', ...o })

t.test('Turnstile: a direct POST without a solved captcha never reaches the checker; a fresh token signs in once', async (t) => {
  const app = await start(t, turnstile())
  const skipped = await post(app.base, '/auth/local/login', { user: 'ann', passwd: 'right-password' })
  t.equal(skipped.status, 400)
  t.match(await skipped.json(), { code: 'GATEHOUSE_CAPTCHA', details: /cf-turnstile-response/ })
  t.same(app.checked, [], 'the credential checker did not run')

  const token = tsToken()
  const ok = await post(app.base, '/auth/local/login', { user: 'ann', passwd: 'right-password', 'cf-turnstile-response': token })
  t.equal(ok.status, 200)
  t.match(ok.headers.get('set-cookie'), /JWT=/, 'a session was issued')
  t.match(standin.calls.at(-1), { secret: 'ts-secret', response: token, remoteip: '127.0.0.1' }, 'siteverify got the secret, the token and the client address')

  const replayed = await post(app.base, '/auth/local/login', { user: 'ann', passwd: 'right-password', 'cf-turnstile-response': token })
  t.equal(replayed.status, 403)
  t.match(await replayed.json(), { code: 'GATEHOUSE_CAPTCHA', details: 'captcha refused: reused' })
  t.equal(replayed.headers.get('set-cookie'), null, 'no session for a reused token')
  t.same(app.checked, ['ann'], 'the checker ran once, for the fresh token only')
  t.match(app.events.filter((e) => e.type === 'login.failed').map((e) => e.reason), ['captcha', 'captcha'], 'audited as captcha failures')
})

t.test('Turnstile: a token of another site, of another host or of another action is refused', async (t) => {
  const app = await start(t, turnstile())
  const cases: Array<[string, string, string]> = [
    ['another site key', tsToken({ sitekey: 'ts-other-site' }), 'invalid'],
    ['another host', tsToken({ hostname: 'evil.example' }), 'hostname'],
    ['another action', tsToken({ action: 'signup' }), 'action'],
    ['made up', 'turnstile.not-a-token', 'invalid']
  ]
  for (const [what, token, reason] of cases) {
    const res = await post(app.base, '/auth/local/login', { user: 'ann', passwd: 'right-password', 'cf-turnstile-response': token })
    t.equal(res.status, 403, what)
    t.match(await res.json(), { code: 'GATEHOUSE_CAPTCHA', details: `captcha refused: ${reason}` }, what)
  }
  const two = await fetch(`${app.base}/auth/local/login?cf-turnstile-response=a&cf-turnstile-response=b`, { method: 'POST', body: new URLSearchParams({ user: 'ann', passwd: 'right-password' }) })
  t.equal(two.status, 400, 'two tokens')
  t.equal((await two.json()).code, 'GATEHOUSE_CAPTCHA')
  const huge = await post(app.base, '/auth/local/login', { user: 'ann', passwd: 'right-password', 'cf-turnstile-response': 'x'.repeat(5000) })
  t.equal(huge.status, 400, 'a token longer than any service issues')
  t.same(app.checked, [], 'the checker never ran')
})

t.test('every provider\'s login is guarded, not only password ones; a login that continues one is not asked again', async (t) => {
  const app = await start(t, turnstile())
  t.equal((await fetch(`${app.base}/auth/mine/login`)).status, 400, 'a provider of its own without a token')
  const ok = await fetch(`${app.base}/auth/mine/login?cf-turnstile-response=${tsToken()}`)
  t.equal(ok.status, 200)
  t.same(await ok.json(), { answered: 'mine' })
  t.equal((await fetch(`${app.base}/auth/later/login`)).status, 200, 'a continuing login needs no captcha')
})

t.test('the verifier names the providers it guards', async (t) => {
  const app = await start(t, turnstileVerifier({ secret: 'ts-secret', verifyUrl: standin.url('turnstile'), providers: ['local'] }))
  t.equal((await fetch(`${app.base}/auth/mine/login`)).status, 200, 'a provider not named is not guarded')
  t.equal((await post(app.base, '/auth/local/login', { user: 'ann', passwd: 'right-password' })).status, 400, 'the named one is')
})

t.test('a slow or failing captcha service is a 503 within the deadline, never a login', async (t) => {
  const app = await start(t, turnstile({ timeout: 300 }))
  t.teardown(() => { standin.mode = 'ok' })
  standin.mode = 'slow'
  const began = Date.now()
  const slow = await post(app.base, '/auth/local/login', { user: 'ann', passwd: 'right-password', 'cf-turnstile-response': tsToken() })
  const took = Date.now() - began
  t.equal(slow.status, 503)
  t.equal((await slow.json()).code, 'GATEHOUSE_UNAVAILABLE')
  // A lower bound only (load makes it later, never earlier): the 503 came from the 300 ms deadline.
  t.ok(took >= 250, `answered at the deadline (${took} ms)`)
  standin.mode = 'down'
  const down = await post(app.base, '/auth/local/login', { user: 'ann', passwd: 'right-password', 'cf-turnstile-response': tsToken() })
  t.equal(down.status, 503)
  t.equal((await down.json()).code, 'GATEHOUSE_UNAVAILABLE')
  t.same(app.checked, [], 'the checker never ran')
})

t.test('a wrong secret of ours is a 503, not a refusal of the user', async (t) => {
  const app = await start(t, turnstile({ secret: 'not-our-secret' }))
  const res = await post(app.base, '/auth/local/login', { user: 'ann', passwd: 'right-password', 'cf-turnstile-response': tsToken() })
  t.equal(res.status, 503)
})

t.test('refused captchas count under the lockout: the address is locked after rateLimit.failures.perIp', async (t) => {
  const app = await start(t, turnstile(), { rateLimit: { failures: { perIp: 3, perAccount: 100 } } })
  for (let i = 0; i < 3; i++) {
    t.equal((await post(app.base, '/auth/mine/login', { 'cf-turnstile-response': 'turnstile.guessed' + i })).status, 403, `refusal ${i + 1}`)
  }
  const calls = standin.calls.length
  const locked = await post(app.base, '/auth/local/login', { user: 'ann', passwd: 'right-password', 'cf-turnstile-response': tsToken() })
  t.equal(locked.status, 429, 'locked, even with a good token')
  t.ok(locked.headers.get('retry-after'))
  t.equal(standin.calls.length, calls, 'siteverify was not asked while locked')
  t.same(app.checked, [])
})

t.test('hCaptcha: the site key is sent, a token of another site is refused, a token is single-use', async (t) => {
  const app = await start(t, hcaptchaVerifier({ secret: 'hc-secret', sitekey: 'hc-site', verifyUrl: standin.url('hcaptcha') }))
  const token = standin.issue({ service: 'hcaptcha', sitekey: 'hc-site', hostname: HOST })
  const ok = await post(app.base, '/auth/local/login', { user: 'ann', passwd: 'right-password', 'h-captcha-response': token })
  t.equal(ok.status, 200)
  t.match(standin.calls.at(-1), { sitekey: 'hc-site' })
  const again = await post(app.base, '/auth/local/login', { user: 'ann', passwd: 'right-password', 'h-captcha-response': token })
  t.match(await again.json(), { code: 'GATEHOUSE_CAPTCHA', details: 'captcha refused: reused' })
  const other = standin.issue({ service: 'hcaptcha', sitekey: 'hc-other-site', hostname: HOST })
  const mismatch = await post(app.base, '/auth/local/login', { user: 'ann', passwd: 'right-password', 'h-captcha-response': other })
  t.equal(mismatch.status, 403)
  t.match(await mismatch.json(), { details: 'captcha refused: invalid' })
})

t.test('reCAPTCHA v3: a low score and another action are refused; the score threshold is the host\'s', async (t) => {
  const app = await start(t, recaptchaV3Verifier({ secret: 'rc-secret', verifyUrl: standin.url('recaptcha'), minScore: 0.7 }))
  const token = (score: number, action = 'login') => standin.issue({ service: 'recaptcha', sitekey: 'rc-site', hostname: HOST, action, score })
  const login = async (tok: string) => await post(app.base, '/auth/local/login', { user: 'ann', passwd: 'right-password', 'g-recaptcha-response': tok })
  t.match(await (await login(token(0.3))).json(), { code: 'GATEHOUSE_CAPTCHA', details: 'captcha refused: score' })
  t.match(await (await login(token(0.6))).json(), { details: 'captcha refused: score' }, 'below the host\'s 0.7')
  t.match(await (await login(token(0.9, 'signup'))).json(), { details: 'captcha refused: action' })
  t.equal((await login(token(0.9))).status, 200)
  t.same(app.checked, ['ann'])
})

t.test('a function of the host decides on the field `captcha`', async (t) => {
  const seen: string[] = []
  const app = await start(t, async (check) => { seen.push(`${check.provider}:${check.token}:${check.hostname}`); return check.token === 'let-me-in' ? true : { ok: false, reason: 'nope' } })
  t.equal((await post(app.base, '/auth/local/login', { user: 'ann', passwd: 'right-password', captcha: 'let-me-in' })).status, 200)
  t.match(await (await post(app.base, '/auth/local/login', { user: 'ann', passwd: 'right-password', captcha: 'bot' })).json(), { details: 'captcha refused: nope' })
  t.same(seen, [`local:let-me-in:${HOST}`, `local:bot:${HOST}`])
})

t.test('bad captcha options fail registration naming the option', async (t) => {
  t.throws(() => turnstileVerifier({} as never), { option: 'captcha.secret' })
  t.throws(() => turnstileVerifier({ secret: 's', verifyUrl: 'ftp://x' }), OptionsError)
  t.throws(() => turnstileVerifier({ secret: 's', colour: 'red' } as never), { option: 'captcha.colour' })
  t.throws(() => recaptchaV3Verifier({ secret: 's', minScore: 2 }), { option: 'captcha.minScore' })
  t.throws(() => hcaptchaVerifier({ secret: 's', providers: [] }), { option: 'captcha.providers' })
  const register = async (captcha: unknown): Promise<void> => { await Fastify().register(authPlugin, { secret: SECRET, url: `http://${HOST}`, captcha: captcha as never }) }
  await t.rejects(register('yes'), { option: 'captcha' })
  await t.rejects(register({ verify: () => true, field: 'a b' }), { option: 'captcha.field' })
})
