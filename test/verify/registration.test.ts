import t from 'tap'
import Fastify from 'fastify'
import { authPlugin } from '../../plugins/auth.js'
import { MemoryStateStore } from '../../lib/state-store/index.js'
import { addVerifProvider, renderTemplate, senderFunc, SmtpSender } from '../../providers/verify/index.js'
import { client, listen } from '../helpers/client.js'

t.test('through the root plugin: options entry, fastify.auth.addVerifProvider, root stateStore', async (t) => {
  const outbox: string[] = []
  const store = new MemoryStateStore()
  const { app, base } = await listen(async (app) => {
    await app.register(authPlugin, {
      secret: () => 'registration-secret-0123456789',
      url: 'http://127.0.0.1',
      stateStore: store,
      audiences: ['site1'],
      providers: [{ kind: 'verify', name: 'mail', template: '{{.Token}}', sender: (_a: string, text: string) => { outbox.push(text) } }]
    })
    app.auth.addVerifProvider('mail2', 'code {{.Token}}', senderFunc((_a, text) => { outbox.push(text.slice(5)) }), { tokenTtl: 60_000 })
  })
  t.teardown(() => app.close())
  t.same(await (await client(base).fetch('/auth/list')).json(), ['mail', 'mail2'])

  const c = client(base)
  const noSite = await c.fetch('/auth/mail/login?user=u&address=u@example.com')
  t.equal(noSite.status, 403, 'audiences set: a site is required before anything is sent')
  t.equal(outbox.length, 0)
  const otherSite = await c.fetch('/auth/mail/login?user=u&address=u@example.com&aud=site2')
  t.equal(otherSite.status, 403)
  t.same(await otherSite.json(), { error: 'forbidden', details: 'audience "site2" is not allowed' })
  t.equal(outbox.length, 0)

  for (const p of ['mail', 'mail2']) {
    t.equal((await c.fetch(`/auth/${p}/login?user=u&address=u@example.com&site=site1`)).status, 200)
    const before = store.size
    const r = await c.fetch(`/auth/${p}/login?token=${outbox.at(-1)!}`)
    t.equal(r.status, 200, p)
    t.equal(store.size, before + 1, 'the used token is remembered in the root store')
  }
})

t.test('registration errors name what is wrong', async (t) => {
  const app = Fastify()
  await app.register(authPlugin, { secret: () => 'registration-secret-0123456789', url: 'http://127.0.0.1' })
  const send = (): void => {}
  t.throws(() => addVerifProvider(app.auth, 'a', 'no token here', send), /must contain \{\{\.Token\}\}/)
  t.throws(() => addVerifProvider(app.auth, 'a', '', send), /needs a message template/)
  t.throws(() => addVerifProvider(app.auth, 'a', '{{.Token}}', {} as never), /sender .* must be a function/)
  t.throws(() => addVerifProvider(app.auth, 'a', '{{.Token}}', send, { tokenTtl: '30 minutes' }), /option "tokenTtl"/)
  t.throws(() => addVerifProvider(app.auth, 'a', '{{.Token}}', send, { escape: 'xml' as never }), /option "escape"/)
  t.throws(() => addVerifProvider(app.auth, 'a', '{{.Token}}', send, { sendTimeout: -1 }), /option "sendTimeout"/)
  t.throws(() => addVerifProvider(app.auth, 'a', '{{.Token}}', send, { stateStore: 5 as never }), /stateStore/)
  t.throws(() => addVerifProvider(app.auth, 'bad name!', '{{.Token}}', send), /provider name/)
  addVerifProvider(app.auth, 'a', '{{.Token}}', send)
  t.throws(() => addVerifProvider(app.auth, 'a', '{{.Token}}', send), /already registered/)
  await app.close()
})

t.test('SmtpSender options are checked', async (t) => {
  const ok = { host: '127.0.0.1', from: 'a@example.com' }
  t.throws(() => new SmtpSender({ ...ok, host: '' }), /option "host"/)
  t.throws(() => new SmtpSender({ ...ok, from: 'a@example.com\r\nBcc: x@y' }), /option "from"/)
  t.throws(() => new SmtpSender({ ...ok, subject: 'x\ny' }), /option "subject"/)
  t.throws(() => new SmtpSender({ ...ok, port: 70000 }), /option "port"/)
  t.throws(() => new SmtpSender({ ...ok, contentType: 'application/pdf' }), /option "contentType"/)
  t.throws(() => new SmtpSender({ ...ok, charset: 'koi8-r' }), /option "charset"/)
  t.throws(() => new SmtpSender({ ...ok, startTLS: 'yes' as never }), /option "startTLS"/)
  t.throws(() => new SmtpSender({ ...ok, timeout: 'soon' }), /option "timeout"/)
  new SmtpSender({ ...ok, tls: true }).close()
})

t.test('templates: placeholders once, spaces allowed, values never evaluated', async (t) => {
  const v = { Address: 'a@x', User: '{{.Token}}', Token: 'T', Site: '<s>' }
  t.equal(renderTemplate('{{.User}}|{{ .Token }}|{{.Site}}|{{.Nope}}', v, 'none'), '{{.Token}}|T|<s>|{{.Nope}}')
  t.equal(renderTemplate('<b>{{.Site}}</b>', v), '<b>&lt;s&gt;</b>', 'HTML templates escape by default')
  t.equal(renderTemplate('{{.Site}}', v), '<s>', 'plain templates do not')
})
