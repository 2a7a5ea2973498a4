/**
 * The subject line of the e-mail provider's messages over a real SMTP server (issue 49, item 9): an e-mail code
 * arrives as "Your sign-in code", a link as "Confirmation" (go-pkgz's), unless the SMTP sender has a subject of its
 * own, which every message then carries; a sender of the app's own is told the subject with each message.
 */
import t from 'tap'
import Fastify from 'fastify'
import { authPlugin, emailProvider, SmtpSender } from '../../../index.js'
import { MailSink } from '../../helpers/mail-sink.js'

const sink = new MailSink()
await sink.start()
t.teardown(() => sink.stop())
const told: Array<string | undefined> = []
const app = Fastify()
await app.register(authPlugin, { secret: 'subject-tests-secret-0123456789abcdef-01', url: 'http://127.0.0.1' })
const sender = (subject?: string): SmtpSender => new SmtpSender({ host: '127.0.0.1', port: sink.port, from: 'no-reply@example.com', timeout: '3s', ...(subject === undefined ? {} : { subject }) })
await app.register(emailProvider, { name: 'code', template: 'Your code: {{.Code}}', code: true, sender: sender() })
await app.register(emailProvider, { name: 'link', template: 'Follow {{.Token}}', sender: sender() })
await app.register(emailProvider, { name: 'own', template: 'Your code: {{.Code}}', code: true, sender: sender('Welcome back to Example') })
await app.register(emailProvider, { name: 'func', template: 'Your code: {{.Code}}', code: true, sender: (_address: string, _text: string, options?: { subject?: string }) => { told.push(options?.subject) } })
t.teardown(() => app.close())

async function send (provider: string): Promise<string> {
  const mail = sink.next()
  const r = await app.inject({ url: `/auth/${provider}/login?user=ann&address=ann@example.com` })
  t.equal(r.statusCode, 200, `${provider}: sent`)
  return (await mail).headers.subject!
}

t.test('a code says it is a sign-in code; a link keeps go-pkgz\'s subject; a sender\'s own subject wins', async (t) => {
  t.equal(await send('code'), 'Your sign-in code')
  t.equal(await send('link'), 'Confirmation')
  t.equal(await send('own'), 'Welcome back to Example')
})

t.test('a sender of the app\'s own is told the subject', async (t) => {
  const r = await app.inject({ url: '/auth/func/login?user=ann&address=ann@example.com' })
  t.equal(r.statusCode, 200)
  t.same(told, ['Your sign-in code'])
})
