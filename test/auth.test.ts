/**
 * Registration order mistakes say what to do (issue 23 item 12): a provider or the avatar plugin registered
 * before authPlugin; @fastify/cookie registered before or after it, or not at all, all work, and nothing of the
 * host's Fastify is patched.
 */
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
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

/** A signed-in request to a host route behind `authenticate`, and a host route setting its own cookie. */
async function sessionWorks (t: Test, app: FastifyInstance): Promise<void> {
  const { token, claims } = await app.auth.tokens.create({ user: { name: 'ann', id: 'local_ann' } })
  const ok = await app.inject({ url: '/private', cookies: { JWT: token, 'XSRF-TOKEN': claims.jti }, headers: { 'x-xsrf-token': claims.jti } })
  t.same([ok.statusCode, ok.json()], [200, { name: 'ann' }], 'the session cookie signs in')
  const out = await app.inject({ method: 'POST', url: '/auth/logout', cookies: { JWT: token, 'XSRF-TOKEN': claims.jti }, headers: { 'x-xsrf-token': claims.jti } })
  t.equal(out.statusCode, 200)
  t.match(out.headers['set-cookie'], [/^JWT=; .*Expires=Thu, 01 Jan 1970/, /^XSRF-TOKEN=; /], 'logout clears both cookies')
}

/** The host's routes: one behind `authenticate`, one without any hook of the package. */
function hostRoutes (app: FastifyInstance): void {
  app.get('/private', { preHandler: app.auth.authenticate }, async (req) => ({ name: req.user!.name }))
  app.get('/plain', async () => ({ ok: true }))
}

t.test('@fastify/cookie registered after authPlugin works: the host\'s cookies and the package\'s', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(authPlugin, options)
  await app.register(cookie, { secret: 'host-cookie-secret' })
  hostRoutes(app)
  app.get('/set', async (req, reply) => reply.setCookie('host', 'v1', { path: '/' }).send({ seen: req.cookies.seen ?? null }))
  await app.ready()
  t.equal(app.signCookie('v').startsWith('v.'), true, 'the host\'s cookie secret signs')
  const set = await app.inject({ url: '/set', cookies: { seen: 'yes' } })
  t.same(set.json(), { seen: 'yes' })
  t.match(set.headers['set-cookie'], /^host=v1; Path=\/; SameSite=Lax$/)
  await sessionWorks(t, app)
})

t.test('@fastify/cookie registered before authPlugin is used, and other decorators are unchanged', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(cookie, { secret: 'host-cookie-secret' })
  await app.register(authPlugin, options)
  app.decorate('mine', 1)
  t.throws(() => app.decorate('mine', 2), { code: 'FST_ERR_DEC_ALREADY_PRESENT' })
  hostRoutes(app)
  await app.ready()
  t.equal(app.signCookie('v').startsWith('v.'), true, 'the host\'s cookie secret signs')
  await sessionWorks(t, app)
})

t.test('without @fastify/cookie, authPlugin patches and decorates nothing cookie-related on the host', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(authPlugin, options)
  const bare = Fastify()
  t.equal(app.decorate, bare.decorate, 'fastify.decorate is Fastify\'s own')
  t.equal(app.decorateRequest, bare.decorateRequest, 'fastify.decorateRequest is Fastify\'s own')
  app.decorate('mine', 1)
  t.throws(() => app.decorate('mine', 2), { code: 'FST_ERR_DEC_ALREADY_PRESENT' })
  hostRoutes(app)
  await app.ready()
  t.equal(app.hasDecorator('parseCookie'), false, 'no @fastify/cookie on the host')
  t.equal(app.hasRequestDecorator('cookies'), false)
  t.equal(app.hasReplyDecorator('setCookie'), false)
  await sessionWorks(t, app)
})

t.test('a route without the package\'s hooks runs no hook of the package', async (t) => {
  const hooksOf = async (withAuth: boolean): Promise<string> => {
    const app = Fastify()
    if (withAuth) await app.register(authPlugin, options)
    app.get('/plain', async () => ({ ok: true }))
    await app.ready()
    const printed = app.printRoutes({ includeHooks: true, commonPrefix: false }).split('\n')
    await app.close()
    // The GET route's line, then its hook lines (marked •) up to the next route.
    const at = printed.findIndex((l) => l.includes('/plain (GET)'))
    const end = printed.findIndex((l, i) => i > at && !l.includes('•'))
    return printed.slice(at + 1, end).join('\n')
  }
  const bare = await hooksOf(false)
  const withAuth = await hooksOf(true)
  t.equal(withAuth, bare, 'the same hooks as on a bare app')
  t.equal(withAuth, '', 'none at all')
})
