/**
 * E-mail code sign-in (issue 36 item 3): the verified provider mails a typed code, which signs in once, within its
 * lifetime, for the address it was sent to; wrong tries are capped per code and locked out per address like
 * passwords; malformed input is a 400 that counts for nothing; every step is audited without the code.
 */
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import FakeTimers from '@sinonjs/fake-timers'
import { authPlugin } from '../../../auth.js'
import { verifyProvider } from '../../../providers/index.js'
import type { AuditEvent } from '../../../lib/audit/events.js'
import { userId } from '../../../lib/user.js'
import { MemoryStateStore } from '../../../stores/state/memory.js'
import type { StateStore } from '../../../lib/state-store.js'
import { latencyStore } from '../../helpers/latency-store.js'

const SECRET = () => 'email-code-test-secret-0123456789-0123456789'

interface CodeApp { app: FastifyInstance; outbox: Array<[string, string]>; events: AuditEvent[]; lastCode: () => string }

async function codeApp (code: unknown = true, root: Record<string, unknown> = {}): Promise<CodeApp> {
  const outbox: Array<[string, string]> = []
  const events: AuditEvent[] = []
  const app = Fastify()
  await app.register(authPlugin, { secret: SECRET, url: 'http://127.0.0.1', onEvent: (e: AuditEvent) => { events.push(e) }, ...root })
  await app.register(verifyProvider, {
    name: 'email', template: 'Your sign-in code: {{.Code}}', code: code as boolean, sender: (address: string, text: string) => { outbox.push([address, text]) }
  })
  const lastCode = (): string => /code: ([0-9]+)$/.exec(outbox.at(-1)![1])![1]!
  return { app, outbox, events, lastCode }
}

const REFUSAL = 'wrong or expired code: check it, or ask for a new one'

/** A memory store that notes the e-mail code keys' operations and the counts of their tries. */
function countingStore (store: StateStore = new MemoryStateStore()): { store: StateStore; ops: string[]; counts: number[] } {
  const ops: string[] = []
  const counts: number[] = []
  for (const name of ['get', 'take', 'delete', 'increment'] as const) {
    const original = (store[name] as (...args: unknown[]) => Promise<unknown>).bind(store)
    ;(store as unknown as Record<string, unknown>)[name] = async (key: string, ...rest: unknown[]) => {
      const result = await original(key, ...rest)
      if (key.startsWith('verify:code')) {
        ops.push(name)
        // The tries of sent codes (a try without a pending code counts on a key of its own).
        if (name === 'increment' && !key.endsWith(':none')) counts.push((result as { count: number }).count)
      }
      return result
    }
  }
  return { store, ops, counts }
}

function send (app: FastifyInstance, address = 'ann@example.com', extra = '') {
  return app.inject(`/auth/email/login?user=ann&address=${encodeURIComponent(address)}${extra}`)
}

function enter (app: FastifyInstance, code: unknown, address = 'ann@example.com') {
  return app.inject({ method: 'POST', url: '/auth/email/login', payload: { address, code } })
}

t.test('a mailed code signs in once, as the user of the address', async (t) => {
  const { app, outbox, events, lastCode } = await codeApp()
  t.teardown(() => app.close())
  const sent = await send(app, 'ann@example.com', '&from=/profile')
  t.equal(sent.statusCode, 200)
  t.same(sent.json(), { status: 'sent', user: 'ann', address: 'ann@example.com', digits: 6, expiresIn: 600 })
  t.match(outbox[0]![1], /^Your sign-in code: [0-9]{6}$/, 'the message carries the code, no link')
  const code = lastCode()
  t.notMatch(sent.body, code, 'the code is only in the mail')
  const r = await enter(app, code)
  t.equal(r.statusCode, 303, 'the login goes on to the `from` kept with the code')
  t.equal(r.headers.location, 'http://127.0.0.1/profile')
  const jwt = r.cookies.find((c) => c.name === 'JWT')
  t.ok(jwt, 'a session was issued')
  const xsrf = r.cookies.find((c) => c.name === 'XSRF-TOKEN')!.value
  const me = await app.inject({ url: '/auth/user', cookies: { JWT: jwt!.value, 'XSRF-TOKEN': xsrf }, headers: { 'x-xsrf-token': xsrf } })
  t.same({ name: me.json().name, id: me.json().id }, { name: 'ann', id: userId('email', 'ann@example.com') })
  const replay = await enter(app, code)
  t.equal(replay.statusCode, 403, 'a code signs in once')
  t.same(replay.json(), { error: 'forbidden', details: REFUSAL, code: 'GATEHOUSE_CREDENTIALS' })
  t.same(events.filter((e) => e.provider === 'email').map((e) => `${e.type}:${e.reason}`), ['confirmation.sent:code_sent', 'login.succeeded:session_issued', 'login.failed:bad_credentials'])
  const sentEvent = events.find((e) => e.type === 'confirmation.sent') as AuditEvent & { to: string }
  t.equal(sentEvent.to, 'a…@example.com')
  t.notOk(JSON.stringify(events).includes(code), 'no event carries the code')
})

t.test('a new code replaces the earlier one; a code of another address signs nobody in', async (t) => {
  const { app, lastCode } = await codeApp()
  t.teardown(() => app.close())
  await send(app, 'ann@example.com')
  const first = lastCode()
  await send(app, 'ann@example.com')
  const second = lastCode()
  if (first !== second) t.equal((await enter(app, first)).statusCode, 403, 'the replaced code is void')
  await send(app, 'bob@example.com')
  const bobs = lastCode()
  if (bobs !== second) {
    const other = await enter(app, bobs, 'ann@example.com')
    t.equal(other.statusCode, 403, "bob's code is not ann's")
  }
  t.equal((await enter(app, bobs, 'eve@example.com')).statusCode, 403, 'nor anyone else\'s')
  t.equal((await enter(app, second)).statusCode, 200)
  t.equal((await enter(app, bobs, 'bob@example.com')).statusCode, 200)
})

t.test('brute force: a code allows `attempts` wrong tries, then the address locks like a password', async (t) => {
  const { app, lastCode } = await codeApp({ attempts: 3 })
  t.teardown(() => app.close())
  await send(app)
  const right = lastCode()
  const wrong = right === '000000' ? '000001' : '000000'
  for (let i = 0; i < 3; i++) {
    const r = await enter(app, wrong)
    t.equal(r.statusCode, 403)
    t.equal(r.json().details, REFUSAL)
  }
  const late = await enter(app, right)
  t.equal(late.statusCode, 403, 'after three wrong tries even the right code is refused')
  t.equal(late.json().details, REFUSAL)
  // A new code does not buy new guesses without end: the address's lockout (rateLimit.failures, 5) counts across codes.
  await send(app)
  const fresh = lastCode()
  t.equal((await enter(app, fresh === '000000' ? '000001' : '000000')).statusCode, 403)
  const locked = await enter(app, fresh)
  t.equal(locked.statusCode, 429, 'the address is locked out: no check, not even of the right code')
  t.equal(locked.json().code, 'GATEHOUSE_RATE_LIMITED')
})

t.test('concurrent tries cannot pass the cap', async (t) => {
  // A store with a network's latency: the 20 tries read the pending code and are counted before any is compared (on
  // the plain memory store each request would run to its end before the next begins).
  const { store, counts } = countingStore(latencyStore())
  const { app, lastCode } = await codeApp({ attempts: 2 }, { stateStore: store, rateLimit: { login: { max: 0 }, failures: { perAccount: 100, perIp: 100 } } })
  t.teardown(() => app.close())
  await send(app)
  const right = lastCode()
  const guesses = Array.from({ length: 20 }, (_, i) => String(i).padStart(6, '0')).filter((g) => g !== right)
  const answers = await Promise.all(guesses.map(async (g) => (await enter(app, g)).statusCode))
  t.ok(answers.every((s) => s === 403), 'every guess refused')
  t.equal(counts.filter((c) => c <= 2).length, 2, 'only two tries were within the cap (the rest counted past it)')
  t.equal((await enter(app, right)).statusCode, 403, 'and the code is void')
})

t.test('the right code among concurrent tries past the cap is refused like them', async (t) => {
  // The pending code is read by every try before the last wrong one (the cap's own) voids it: only the count can
  // refuse the right code that was counted past `attempts` while it was still pending.
  const { store, counts } = countingStore(latencyStore())
  const { app, lastCode } = await codeApp({ attempts: 2 }, { stateStore: store, rateLimit: { login: { max: 0 }, failures: { perAccount: 100, perIp: 100 } } })
  t.teardown(() => app.close())
  await send(app)
  const right = lastCode()
  const wrong = ['000000', '000001', '000002', '000003'].filter((g) => g !== right).slice(0, 3)
  const answers = await Promise.all([...wrong, right].map(async (g) => (await enter(app, g)).statusCode))
  t.same(counts.slice(-4), [1, 2, 3, 4], 'counted in the order sent: the right code was the fourth try of two allowed')
  t.same(answers, [403, 403, 403, 403], 'the right code counted past the cap signs nobody in')
})

t.test('one refusal: no code pending, a wrong code and one past its tries answer alike, after the same steps', async (t) => {
  const { store, ops } = countingStore()
  const { app, lastCode } = await codeApp({ attempts: 1 }, { stateStore: store, rateLimit: { failures: { perAccount: 100, perIp: 100 } } })
  t.teardown(() => app.close())
  ops.length = 0
  const none = await enter(app, '123456', 'nobody@example.com')
  const noneOps = ops.splice(0)
  await send(app)
  const right = lastCode()
  const wrong = right === '000000' ? '000001' : '000000'
  await send(app, 'bob@example.com')
  ops.length = 0
  const bad = await enter(app, wrong, 'bob@example.com')
  const badOps = ops.splice(0)
  const late = await enter(app, right, 'bob@example.com') // bob's one try is spent: his code is void
  const answers = [none, bad, late]
  for (const r of answers) t.equal(r.statusCode, 403)
  t.same(answers.map((r) => r.json()), Array(3).fill({ error: 'forbidden', details: REFUSAL, code: 'GATEHOUSE_CREDENTIALS' }), 'the same body')
  t.same(noneOps, badOps.filter((op) => op !== 'delete'), 'the same store round trips: a look-up and a count')
  t.equal((await enter(app, right)).statusCode, 200, 'ann\'s code still signs in')
})

t.test('an expired code is refused', async (t) => {
  const clock = FakeTimers.install({ now: Date.now(), toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const { app, lastCode } = await codeApp({ ttl: '2m' })
  t.teardown(() => app.close())
  const sent = await send(app)
  t.equal(sent.json().expiresIn, 120)
  clock.tick(121_000)
  const r = await enter(app, lastCode())
  t.equal(r.statusCode, 403)
  t.equal(r.json().details, REFUSAL)
})

t.test('malformed input is a 400 that counts for nothing', async (t) => {
  const { app, lastCode } = await codeApp({ digits: 8, attempts: 1 })
  t.teardown(() => app.close())
  const sent = await send(app)
  t.equal(sent.json().digits, 8)
  const right = lastCode()
  t.equal(right.length, 8)
  for (const code of ['1234567', '123456789', 'abcdefgh', '1234 678', 12345678, ['12345678'], '']) {
    const r = await enter(app, code)
    t.equal(r.statusCode, 400, JSON.stringify(code))
    t.equal(r.json().code, 'GATEHOUSE_BAD_REQUEST')
  }
  t.equal((await enter(app, right, 'not-an-address')).statusCode, 400)
  const inLink = await app.inject(`/auth/email/login?address=ann@example.com&code=${right}`)
  t.equal(inLink.statusCode, 400, 'never in a link')
  t.match(inLink.json().details, /POST/)
  t.equal((await enter(app, right)).statusCode, 200, 'none of these used the one allowed try')
})

t.test('options are checked at registration', async (t) => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ code: { digits: 5 } }, 'verify.email.code.digits'],
    [{ code: { digits: 9 } }, 'verify.email.code.digits'],
    [{ code: { ttl: '11m' } }, 'verify.email.code.ttl'],
    [{ code: { attempts: 0 } }, 'verify.email.code.attempts'],
    [{ code: { attempts: 11 } }, 'verify.email.code.attempts'],
    [{ code: { length: 6 } }, 'verify.email.code.length'],
    [{ code: true, template: 'link {{.Token}}' }, 'verify.email.template'],
    [{ code: true, template: '{{.Code}} or {{.Token}}' }, 'verify.email.template'],
    [{ template: 'code {{.Code}}' }, 'verify.email.template']
  ]
  for (const [extra, option] of cases) {
    const app = Fastify()
    await app.register(authPlugin, { secret: SECRET, url: 'http://127.0.0.1' })
    app.register(verifyProvider, { name: 'email', template: '{{.Code}}', sender: () => {}, ...extra })
    await t.rejects(app.ready(), { name: 'OptionsError', option }, JSON.stringify(extra))
    await app.close()
  }
})
