/**
 * Run by lazy-load.test.ts in a fresh process: reports, step by step, whether nodemailer has been loaded yet.
 * Prints one JSON object `{ step: loaded }`.
 */
import { loaded as loadedPackage } from './state-store-probe.js'

const loaded = (): boolean => loadedPackage('nodemailer')
const steps: Record<string, boolean> = {}

const providers = await import('../../providers/index.js')
await import('../../providers/email/smtp.js')
steps.imported = loaded()

const Fastify = (await import('fastify')).default
const { authPlugin } = await import('../../auth.js')
const app = Fastify()
await app.register(authPlugin, { secret: () => 'lazy-secret-0123456789-0123456789abcdef', url: 'http://127.0.0.1' })
await app.register(providers.verifyProvider, { name: 'mail', template: '{{.Token}}', sender: () => {} })
await app.ready()
const sent = await app.inject('/auth/mail/login?user=u&address=u@example.com')
await app.close()
steps.sentWithoutSmtp = sent.statusCode === 200 ? loaded() : true

try { new providers.SmtpSender({ host: '', from: 'a@example.com' }) } catch {}
steps.refusedOptions = loaded()

const smtp = new providers.SmtpSender({ host: '127.0.0.1', from: 'a@example.com' })
steps.smtpConfigured = loaded()
smtp.close()

process.stdout.write(JSON.stringify(steps))
