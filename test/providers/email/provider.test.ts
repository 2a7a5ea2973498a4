/**
 * The verified provider refuses a malformed address for every sender, before anything is counted or sent, and
 * may not take a built-in provider's name (issue 23 item 15).
 */
import t from 'tap'
import Fastify from 'fastify'
import { authPlugin } from '../../../auth.js'
import { verifyProvider } from '../../../providers/index.js'

const options = { secret: () => 'verify-test-secret-0123456789-0123456789', url: 'http://127.0.0.1' }

async function appWith (extra: Record<string, unknown> = {}): Promise<{ app: ReturnType<typeof Fastify>; outbox: Array<[string, string]> }> {
  const outbox: Array<[string, string]> = []
  const app = Fastify()
  await app.register(authPlugin, options)
  // A console-like sender: it takes whatever it is given.
  await app.register(verifyProvider, { name: 'email', template: '{{.Token}}', sender: (address: string, text: string) => { outbox.push([address, text]) }, ...extra })
  return { app, outbox }
}

t.test('a malformed address is a 400 with a code, whatever the sender, and nothing is sent', async (t) => {
  const { app, outbox } = await appWith()
  t.teardown(() => app.close())
  for (const address of ['notanemail', 'a@b@c', 'Ann <ann@example.com>', 'ann@example.com,bob@example.com', 'a b@example.com', `${'x'.repeat(65)}@example.com`]) {
    const r = await app.inject(`/auth/email/login?user=ann&address=${encodeURIComponent(address)}`)
    t.equal(r.statusCode, 400, address)
    t.same(r.json(), { error: 'address rejected', details: 'not a single mail address', code: 'GATEHOUSE_BAD_REQUEST' })
  }
  t.equal(outbox.length, 0, 'nothing was sent')
  const ok = await app.inject('/auth/email/login?user=ann&address=ann@example.com')
  t.equal(ok.statusCode, 200)
  t.same(outbox.map(([a]) => a), ['ann@example.com'])
})

t.test('a malformed address is not counted against the sends limit', async (t) => {
  const { app, outbox } = await appWith()
  t.teardown(() => app.close())
  for (let i = 0; i < 8; i++) t.equal((await app.inject('/auth/email/login?user=ann&address=ann.example.com')).statusCode, 400)
  t.equal((await app.inject('/auth/email/login?user=ann&address=ann@example.com')).statusCode, 200, 'the real address still gets its message')
  t.equal(outbox.length, 1)
})

t.test('isAddress: a sender that delivers elsewhere gives its own rule', async (t) => {
  const { app, outbox } = await appWith({ isAddress: (a: string) => /^\+\d{6,15}$/.test(a) })
  t.teardown(() => app.close())
  t.equal((await app.inject('/auth/email/login?user=ann&address=%2B4915112345678')).statusCode, 200)
  const refused = await app.inject('/auth/email/login?user=ann&address=ann@example.com')
  t.equal(refused.statusCode, 400)
  t.same(refused.json(), { error: 'address rejected', details: 'not an address this provider sends to', code: 'GATEHOUSE_BAD_REQUEST' })
  t.same(outbox.map(([a]) => a), ['+4915112345678'])
  const bad = Fastify()
  t.teardown(() => bad.close())
  await bad.register(authPlugin, options)
  bad.register(verifyProvider, { name: 'sms', template: '{{.Token}}', sender: () => {}, isAddress: 'phone' as unknown as () => boolean })
  await t.rejects(bad.ready(), { name: 'OptionsError', option: 'verify.sms.isAddress' })
})

t.test('a verified provider named like a built-in one is refused', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(authPlugin, options)
  app.register(verifyProvider, { name: 'google', template: '{{.Token}}', sender: () => {} })
  await t.rejects(app.ready(), { name: 'OptionsError', option: 'verify.name', message: /"google" is a built-in provider name/ })
})
