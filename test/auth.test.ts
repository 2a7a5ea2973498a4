/**
 * Registration order mistakes say what to do (issue 23 item 12): a provider or the avatar plugin registered
 * before authPlugin, @fastify/cookie registered after it.
 */
import t from 'tap'
import Fastify from 'fastify'
import cookie from '@fastify/cookie'
import { authPlugin } from '../auth.js'
import { avatarPlugin } from '../plugins/avatar/plugin.js'
import { oauth2Provider, directProvider, devProvider, verifyProvider, telegramProvider, passkeyProvider, totpProvider } from '../providers/index.js'

const options = { secret: () => 'auth-test-secret-0123456789-0123456789', url: 'http://127.0.0.1' }
const BEFORE = /needs the auth core: register authPlugin first/

t.test('a provider or the avatar plugin registered before authPlugin: "register authPlugin first"', async (t) => {
  const plugins: Array<[string, unknown, Record<string, unknown>]> = [
    ['oauth2', oauth2Provider, { name: 'github', cid: 'id', csecret: 'secret' }],
    ['direct', directProvider, { checker: () => true }],
    ['dev', devProvider, { port: 0 }],
    ['verify', verifyProvider, { name: 'email', template: '{{.Token}}', sender: () => {} }],
    ['telegram', telegramProvider, { token: '1:x' }],
    ['passkey', passkeyProvider, {}],
    ['totp', totpProvider, {}],
    ['avatar', avatarPlugin, {}]
  ]
  for (const [label, plugin, opts] of plugins) {
    const app = Fastify()
    app.register(plugin as typeof avatarPlugin, opts)
    app.register(authPlugin, options)
    const err = await app.ready().then(() => undefined, (e: Error) => e)
    await app.close().catch(() => {})
    t.match(err, { name: 'OptionsError', code: 'GATEHOUSE_OPTION', message: BEFORE }, label)
    t.notMatch(err?.message, /dependency/, `${label}: not Fastify's dependency error`)
  }
})

t.test('@fastify/cookie registered after authPlugin: "register @fastify/cookie before authPlugin"', async (t) => {
  const app = Fastify()
  app.register(authPlugin, options)
  app.register(cookie, { secret: 'host-cookie-secret' })
  const err = await app.ready().then(() => undefined, (e: Error) => e)
  await app.close().catch(() => {})
  t.match(err, { code: 'GATEHOUSE_OPTION', message: /@fastify\/cookie is registered after authPlugin.*register @fastify\/cookie before authPlugin/ })
  t.match((err as Error & { cause?: { code?: string } }).cause, { code: 'FST_ERR_DEC_ALREADY_PRESENT' }, 'Fastify\'s error is the cause')
})

t.test('@fastify/cookie registered before authPlugin is used, and other decorators are unchanged', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(cookie, { secret: 'host-cookie-secret' })
  await app.register(authPlugin, options)
  app.decorate('mine', 1)
  t.throws(() => app.decorate('mine', 2), { code: 'FST_ERR_DEC_ALREADY_PRESENT' })
  await app.ready()
  t.equal(app.signCookie('v').startsWith('v.'), true, 'the host\'s cookie secret signs')
})

t.test('with authPlugin\'s own @fastify/cookie, another decorator collision keeps Fastify\'s error', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(authPlugin, options)
  app.decorate('mine', 1)
  t.throws(() => app.decorate('mine', 2), { code: 'FST_ERR_DEC_ALREADY_PRESENT' })
  t.equal(app.hasDecorator('parseCookie'), true)
})
