/**
 * The demo's captcha over real HTTP: the password login `local` asks for the Turnstile stand-in's token (the
 * package's turnstileVerifier checking the stand-in's siteverify on loopback). A direct POST without it, with a
 * made-up one, a spent one or one solved on another host signs nobody in; a solved token signs in once; the other
 * login methods are not asked; the stand-in's siteverify refuses a wrong secret.
 */
import t from 'tap'
import Fastify from 'fastify'
import FakeTimers from '@sinonjs/fake-timers'
import { demoCaptcha } from '../../example/captcha.js'
import { client } from '../helpers/client.js'
import { demoCaptchaToken, startDemo, type StartedDemo } from '../helpers/demo.js'

const started: StartedDemo = await startDemo({ AUTH_SECRET: 'demo-captcha-secret-0123456789abcdef-0123' })
t.teardown(started.stop)
const base = `http://127.0.0.1:${started.demo.port}`
const FIELD = 'cf-turnstile-response'

const login = async (extra: Record<string, string> = {}): Promise<Response> =>
  await client(base).fetch('/auth/local/login', { method: 'POST', json: { user: 'alice', passwd: 'alice-secret', ...extra } })

t.test('a direct POST without the captcha token is refused and signs nobody in', async (t) => {
  const r = await login()
  t.equal(r.status, 400)
  t.match(await r.json(), { code: 'GATEHOUSE_CAPTCHA', details: `a solved captcha is required (field ${FIELD})` })
  t.same(r.headers.getSetCookie(), [], 'no session cookie')
})

t.test('made-up, spent and other-host tokens are refused; a solved one signs in once', async (t) => {
  const madeUp = await login({ [FIELD]: 'i-solved-it-honestly' })
  t.equal(madeUp.status, 403)
  t.match(await madeUp.json(), { code: 'GATEHOUSE_CAPTCHA', details: 'captcha refused: invalid' })
  t.same(madeUp.headers.getSetCookie(), [])

  const token = await demoCaptchaToken(base)
  const ok = await login({ [FIELD]: token })
  t.equal(ok.status, 200, 'the right password with a solved captcha')
  t.match(ok.headers.getSetCookie().join('\n'), /JWT=/)
  const again = await login({ [FIELD]: token })
  t.equal(again.status, 403, 'the same token again')
  t.match(await again.json(), { code: 'GATEHOUSE_CAPTCHA', details: 'captcha refused: reused' })

  // The widget solved on a page of another host: its token names that host.
  const elsewhere = await started.demo.app.inject({ method: 'POST', url: '/captcha-standin/solve', headers: { host: 'evil.example' } })
  const other = await login({ [FIELD]: elsewhere.json().token })
  t.equal(other.status, 403)
  t.match(await other.json(), { details: 'captcha refused: hostname' })
})

t.test('a wrong password with a solved captcha is still a wrong password', async (t) => {
  const r = await client(base).fetch('/auth/local/login', { method: 'POST', json: { user: 'alice', passwd: 'nope', [FIELD]: await demoCaptchaToken(base) } })
  t.equal(r.status, 403)
  t.not((await r.json()).code, 'GATEHOUSE_CAPTCHA')
})

t.test('only the password login is asked: the dev OAuth2 login and e-mail codes are not', async (t) => {
  const dev = await client(base).fetch('/auth/dev/login?from=%2F')
  t.equal(dev.status, 302, 'the redirect to the dev OAuth2 server')
  const code = await client(base).fetch('/auth/emailcode/login?user=erin&address=erin@example.com')
  t.equal(code.status, 200)
})

t.test('the stand-in\'s siteverify speaks Turnstile: a wrong secret, a missing token', async (t) => {
  const verify = async (body: string): Promise<unknown> => (await client(base).fetch('/captcha-standin/siteverify', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body })).json()
  t.same(await verify(`secret=guess&response=${await demoCaptchaToken(base)}`), { success: false, 'error-codes': ['invalid-input-secret'] })
  t.same(await verify('response=x'), { success: false, 'error-codes': ['missing-input-secret'] })
  const other = await client(base).fetch('/captcha-standin/siteverify', { method: 'POST', json: { secret: 'x', response: 1 } })
  t.same(await other.json(), { success: false, 'error-codes': ['invalid-input-secret'] }, 'any other body is read safely')
})

t.test('the page shows the "I am not a robot" box on the password form and serves its script', async (t) => {
  const page = await (await client(base).fetch('/')).text()
  t.match(page, /<input id="captcha-check" type="checkbox"> I am not a robot/)
  const script = await client(base).fetch('/captcha.js')
  t.equal(script.status, 200)
  t.match(await script.text(), /cf-turnstile-response/)
})

t.test('unspent tokens are capped: past the cap the widget answers 503 and keeps nothing more', async (t) => {
  const app = Fastify()
  await demoCaptcha(1, 'http://localhost:1', 3).register(app)
  const solve = async (): Promise<number> => (await app.inject({ method: 'POST', url: '/captcha-standin/solve' })).statusCode
  t.same([await solve(), await solve(), await solve()], [200, 200, 200])
  const busy = await app.inject({ method: 'POST', url: '/captcha-standin/solve' })
  t.equal(busy.statusCode, 503)
  t.match(busy.json(), { code: 'DEMO_CAPTCHA_BUSY', details: /too many unspent captcha tokens/ })
  await app.close()
})

t.test('a token is good for 300 s: an older one is refused', async (t) => {
  const token = await demoCaptchaToken(base)
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => { clock.uninstall() })
  clock.tick(301_000)
  const r = await login({ [FIELD]: token })
  t.equal(r.status, 403)
  t.match(await r.json(), { code: 'GATEHOUSE_CAPTCHA', details: 'captcha refused: reused' })
})
