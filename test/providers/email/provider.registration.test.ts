import t from 'tap'
import type { Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import cookie from '@fastify/cookie'
import { authPlugin } from '../../../auth.js'
import { corePlugin } from '../../../plugins/core/plugin.js'
import { MemoryStateStore } from '../../../stores/state/index.js'
import { senderFunc, SmtpSender, verifyProvider, type VerifyProviderOptions } from '../../../providers/index.js'
import { renderTemplate } from '../../../providers/email/template.js'
import { client, listen } from '../../helpers/client.js'

const SECRET = () => 'registration-secret-0123456789-0123456789abcdef'

t.test('every way of adding one: options entry, fastify.auth.addVerifProvider, the verifyProvider plugin', async (t) => {
  const outbox: string[] = []
  const store = new MemoryStateStore()
  const { app, base } = await listen(async (app) => {
    await app.register(authPlugin, {
      secret: SECRET,
      url: 'http://127.0.0.1',
      stateStore: store,
      // The session list's entries would live in this store too (test/plugins/core/sessions.test.ts counts them).
      revocation: { sessionList: false },
      audiences: ['site1'],
      providers: [{ kind: 'verify', name: 'mail', template: '{{.Token}}', sender: (_a: string, text: string) => { outbox.push(text) } }]
    })
    app.auth.addVerifProvider('mail2', 'code {{.Token}}', senderFunc((_a, text) => { outbox.push(text.slice(5)) }), { tokenTtl: 60_000 })
    await app.register(verifyProvider, { name: 'mail3', template: 'link {{.Token}}', sender: { send: (_a, text) => { outbox.push(text.slice(5)) } } })
  })
  t.teardown(() => app.close())
  t.same(await (await client(base).fetch('/auth/list')).json(), ['mail', 'mail2', 'mail3'])

  const c = client(base)
  const noSite = await c.fetch('/auth/mail/login?user=u&address=u@example.com')
  t.equal(noSite.status, 403, 'audiences set: a site is required before anything is sent')
  t.same(await noSite.json(), { error: 'forbidden', details: 'an audience (site) is required', code: 'GATEHOUSE_FORBIDDEN' })
  t.equal(outbox.length, 0)
  const otherSite = await c.fetch('/auth/mail/login?user=u&address=u@example.com&aud=site2')
  t.equal(otherSite.status, 403)
  t.same(await otherSite.json(), { error: 'forbidden', details: 'audience "site2" is not allowed', code: 'GATEHOUSE_FORBIDDEN' })
  t.equal(outbox.length, 0)

  for (const p of ['mail', 'mail2', 'mail3']) {
    // A browser of its own each: a sign-in in a browser holding a session also marks that one revoked in the store.
    const c = client(base)
    t.equal((await c.fetch(`/auth/${p}/login?user=u&address=u@example.com&site=site1`)).status, 200)
    const before = store.size
    const r = await c.fetch(`/auth/${p}/login?token=${outbox.at(-1)!}`)
    t.equal(r.status, 200, p)
    t.equal((await r.json() as { name: string }).name, 'u')
    t.equal(store.size, before + 1, 'the used token is remembered in the root store')
  }
})

t.test('the plugin works on the core alone (no root plugin, no avatar proxy)', async (t) => {
  const outbox: string[] = []
  const app = Fastify()
  await app.register(cookie)
  await app.register(corePlugin, { secret: SECRET, url: 'http://127.0.0.1' })
  await app.register(verifyProvider, { name: 'mail', template: '{{.Token}}', sender: (_a: string, text: string) => { outbox.push(text) } })
  t.teardown(() => app.close())
  t.equal((await app.inject('/auth/mail/login?user=u&address=u@example.com')).statusCode, 200)
  const r = await app.inject(`/auth/mail/login?token=${outbox[0]!}`)
  t.equal(r.statusCode, 200)
  t.match(r.json(), { name: 'u', id: /^mail_[0-9a-f]{40}$/ })
  t.equal(r.json().picture, undefined, 'no avatar proxy, no picture')
})

/** Builds an app, lets `add` add a provider, and expects ready() to fail with an OptionsError naming `option`. */
async function refused (t: Test, add: (app: FastifyInstance) => void, option: string, what: string): Promise<void> {
  const app = Fastify()
  await app.register(authPlugin, { secret: SECRET, url: 'http://127.0.0.1' })
  add(app)
  await t.rejects(async () => { await app.ready() }, { name: 'OptionsError', code: 'GATEHOUSE_OPTION', option }, what)
  await app.close()
}

t.test('registration errors name the option, for the wrapper and the plugin alike', async (t) => {
  const send = (): void => {}
  const cases: Array<[string, Partial<VerifyProviderOptions> & Record<string, unknown>, string]> = [
    ['template without the token', { template: 'no token here' }, 'verify.a.template'],
    ['empty template', { template: '' }, 'verify.a.template'],
    ['sender that is no sender', { sender: {} as never }, 'verify.a.sender'],
    ['tokenTtl in words', { tokenTtl: '30 minutes' }, 'verify.a.tokenTtl'],
    ['unknown escape', { escape: 'xml' as never }, 'verify.a.escape'],
    ['negative sendTimeout', { sendTimeout: -1 }, 'verify.a.sendTimeout'],
    ['stateStore of the wrong kind', { stateStore: 5 as never }, 'verify.a.stateStore'],
    ['stateStore address of another scheme', { stateStore: 'mysql://x' }, 'verify.a.stateStore'],
    ['bad name', { name: 'bad name!' }, 'verify.name']
  ]
  for (const [what, over, option] of cases) {
    const o = { name: 'a', template: '{{.Token}}', sender: send, ...over } as VerifyProviderOptions
    const { name, template, sender, ...tuning } = o
    await refused(t, (app) => { app.auth.addVerifProvider(name, template, sender, tuning) }, option, `addVerifProvider: ${what}`)
    await refused(t, (app) => { app.register(verifyProvider, o) }, option, `verifyProvider: ${what}`)
  }
  await refused(t, (app) => { app.register(verifyProvider, { name: 'a', template: '{{.Token}}', sender: send, tokenTTL: 5 } as never) }, 'verify.tokenTTL', 'unknown option')
  await refused(t, (app) => {
    app.auth.addVerifProvider('a', '{{.Token}}', send)
    app.register(verifyProvider, { name: 'a', template: '{{.Token}}', sender: send })
  }, 'providers', 'a name taken twice')

  const app = Fastify()
  await app.register(authPlugin, { secret: SECRET, url: 'http://127.0.0.1' })
  await app.ready()
  t.throws(() => app.auth.addVerifProvider('late', '{{.Token}}', send), { code: 'GATEHOUSE_OPTION', option: 'providers' }, 'after ready')
  await app.close()
})

t.test('SmtpSender options are checked', async (t) => {
  const ok = { host: '127.0.0.1', from: 'a@example.com' }
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ host: '' }, 'SmtpSender.host'],
    [{ host: undefined }, 'SmtpSender.host'],
    [{ from: 'a@example.com\r\nBcc: x@y' }, 'SmtpSender.from'],
    [{ subject: 'x\ny' }, 'SmtpSender.subject'],
    [{ port: 70000 }, 'SmtpSender.port'],
    [{ username: 5 }, 'SmtpSender.username'],
    [{ password: 5 }, 'SmtpSender.password'],
    [{ contentType: 'application/pdf' }, 'SmtpSender.contentType'],
    [{ charset: 'koi8-r' }, 'SmtpSender.charset'],
    [{ startTLS: 'yes' }, 'SmtpSender.startTLS'],
    [{ tls: 1 }, 'SmtpSender.tls'],
    [{ insecureSkipVerify: 'no' }, 'SmtpSender.insecureSkipVerify'],
    [{ timeout: 'soon' }, 'SmtpSender.timeout']
  ]
  for (const [over, option] of cases) {
    t.throws(() => new SmtpSender({ ...ok, ...over } as never), { name: 'OptionsError', code: 'GATEHOUSE_OPTION', option }, option)
  }
  t.throws(() => new SmtpSender(null as never), { code: 'GATEHOUSE_OPTION', option: 'SmtpSender' })
  const s = new SmtpSender({ ...ok, tls: true })
  t.equal(s.contentType, 'text/plain')
  s.close()
  t.throws(() => senderFunc(5 as never), { code: 'GATEHOUSE_OPTION', option: 'sender' })
})

t.test('templates: placeholders once, spaces allowed, values never evaluated', async (t) => {
  const v = { Address: 'a@x', User: '{{.Token}}', Token: 'T', Site: '<s>' }
  t.equal(renderTemplate('{{.User}}|{{ .Token }}|{{.Site}}|{{.Nope}}', v, 'none'), '{{.Token}}|T|<s>|{{.Nope}}')
  t.equal(renderTemplate('<b>{{.Site}}</b>', v), '<b>&lt;s&gt;</b>', 'HTML templates escape by default')
  t.equal(renderTemplate('{{.Site}}', v), '<s>', 'plain templates do not')
})
