/**
 * The provider kit and the mount's login prelude: a self-implemented provider that does nothing but answer is
 * throttled, cross-site guarded and handed checked login fields, however it was registered; the kit and the
 * providers refuse to be used without the core or after ready, each with an OptionsError naming it.
 */
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { authPlugin, type AuthOptions } from '../../../auth.js'
import { providerKit, type ProviderKit } from '../../../plugins/core/kit.js'
import type { AuthProvider } from '../../../plugins/core/base/types.js'
import { directProvider } from '../../../providers/direct.js'
import { passkeyProvider } from '../../../providers/passkey/provider.js'

const SECRET = () => 'kit-test-secret-0123456789abcdef-0123456789'

/** A provider that does nothing but answer with the login fields it was handed. */
const echo = (name: string): AuthProvider => ({ name, login: (_request, reply, login) => reply.send({ answered: name, login }) })

/** The three public ways of adding a self-implemented provider. */
const WAYS: Array<[string, (app: FastifyInstance) => Promise<void>, Partial<AuthOptions>]> = [
  ['addCustomHandler', async (app) => { app.auth.addCustomHandler(echo('mine')) }, {}],
  ["{kind: 'handler'} entry", async () => {}, { providers: [{ kind: 'handler', provider: echo('mine') }] }],
  ['kit.mount', async (app) => { await app.register(async (scope) => { providerKit(scope).mount(echo('mine')) }) }, {}]
]

async function start (add: (app: FastifyInstance) => Promise<void>, root: Partial<AuthOptions>): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(authPlugin, {
    secret: SECRET,
    url: 'https://app.example',
    audiences: ['site-a'],
    rateLimit: { login: { max: 2, window: '1m' } },
    ...root
  })
  await add(app)
  await app.ready()
  return app
}

for (const [way, add, root] of WAYS) {
  t.test(`a handler that only answers, added by ${way}, runs behind the login prelude`, async (t) => {
    const app = await start(add, root)
    t.teardown(() => app.close())
    const get = async (query: string, headers: Record<string, string> = {}) => await app.inject({ url: `/auth/mine/login${query}`, headers })

    const ok = await get('?aud=site-a&from=https://app.example/back&session=1')
    t.equal(ok.statusCode, 200)
    t.same(ok.json().login, { aud: 'site-a', from: 'https://app.example/back', sessionOnly: true }, 'checked fields handed over')

    const foreign = await get('?aud=site-a&from=https://evil.example/')
    t.equal(foreign.json().login.from, undefined, 'a from that may not be followed is dropped')

    const crossSite = await get('?aud=site-a', { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' })
    t.equal(crossSite.statusCode, 403)
    t.equal(crossSite.json().code, 'GATEHOUSE_CROSS_SITE', 'cross-site guarded without calling anything')

    const limited = await get('?aud=site-a')
    t.equal(limited.statusCode, 429, 'the third login request within the window is refused (a cross-site one is not counted)')
    t.equal(limited.json().code, 'GATEHOUSE_RATE_LIMITED', 'throttled without calling anything')
  })
}

t.test('the prelude refuses malformed common fields and foreign audiences as the providers did', async (t) => {
  const app = await start(async (app) => { app.auth.addCustomHandler(echo('mine')) }, { rateLimit: false })
  t.teardown(() => app.close())
  const cases: Array<[string, number, string]> = [
    ['?aud=site-b', 403, 'GATEHOUSE_FORBIDDEN'],
    ['', 403, 'GATEHOUSE_FORBIDDEN'],
    [`?aud=${'a'.repeat(257)}`, 400, 'GATEHOUSE_BAD_REQUEST'],
    ['?aud=site-a&aud=site-b', 400, 'GATEHOUSE_BAD_REQUEST'],
    ['?aud=site-a&session=maybe', 400, 'GATEHOUSE_BAD_REQUEST'],
    ['?aud=site-a&from=%0Ahttps://app.example', 400, 'GATEHOUSE_BAD_REQUEST'],
    [`?aud=site-a&from=https://app.example/${'x'.repeat(2048)}`, 400, 'GATEHOUSE_BAD_REQUEST']
  ]
  for (const [query, status, code] of cases) {
    const r = await app.inject({ url: `/auth/mine/login${query}` })
    t.equal(r.statusCode, status, query.slice(0, 40))
    t.equal(r.json().code, code)
    t.notOk(r.json().answered, 'the handler never ran')
  }
  const form = await app.inject({ method: 'POST', url: '/auth/mine/login', payload: { site: 'site-b' } })
  t.equal(form.statusCode, 403, 'a POSTed form is read too')
})

t.test('the kit: documented members only, completeLogin issues the session', async (t) => {
  let kit: ProviderKit | undefined
  const app = Fastify()
  await app.register(authPlugin, { secret: SECRET, url: 'https://app.example/' })
  await app.register(async (scope) => {
    kit = providerKit(scope)
    const k = kit
    k.mount({ name: 'magic', login: async (request, reply, login) => await k.completeLogin(request, reply, { user: { name: 'ann', id: 'magic_ann' }, ...login }) })
  })
  await app.ready()
  t.teardown(() => app.close())
  t.same(Object.keys(kit!).sort(), ['api', 'audit', 'authPrefix', 'completeLogin', 'confirmation', 'cookies', 'logger', 'loginState', 'mount', 'onLogout', 'openStateStore', 'origin', 'routes', 'savesAvatars', 'sessions', 'stateStore', 'throttle', 'url'])
  t.equal(kit!.url, 'https://app.example')
  t.equal(kit!.authPrefix, '/auth')
  const r = await app.inject({ url: '/auth/magic/login' })
  t.equal(r.statusCode, 200)
  t.equal(r.json().name, 'ann')
  t.ok(r.cookies.some((c) => c.name === '__Host-JWT' || c.name === 'JWT'), 'session cookie set')
  // Purpose-bound tokens: a handshake is not a confirmation and neither is a session.
  const hs = await kit!.loginState.sign({ step: 1 }, '5m')
  t.equal((await kit!.loginState.verify(hs)).step, 1)
  await t.rejects(kit!.confirmation.verify(hs), { statusCode: 401 })
})

t.test('OptionsErrors at startup: a kit or a provider before the core, a kit after ready, an unknown kind', async (t) => {
  const bare = Fastify()
  t.throws(() => providerKit(bare), { code: 'GATEHOUSE_OPTION', option: 'providers', message: /register authPlugin first/ })

  for (const [plugin, opts, option] of [[directProvider, { name: 'local', checker: () => true }, 'direct'], [passkeyProvider, {}, 'passkey']] as const) {
    const early = Fastify()
    void early.register(plugin as never, opts)
    void early.register(authPlugin, { secret: SECRET, url: 'https://app.example' })
    await t.rejects(early.ready(), { code: 'GATEHOUSE_OPTION', option, message: /register authPlugin first/ }, `${option} registered before the core`)
    await early.close()
  }

  const late = Fastify()
  await late.register(authPlugin, { secret: SECRET, url: 'https://app.example' })
  await late.ready()
  t.throws(() => providerKit(late), { code: 'GATEHOUSE_OPTION', option: 'providers', message: /after the server is ready/ })
  await late.close()

  const unknown = Fastify()
  await t.rejects(async () => {
    await unknown.register(authPlugin, { secret: SECRET, url: 'https://app.example', providers: [{ kind: 'custom', name: 'x' } as never] })
    await unknown.ready()
  }, { code: 'GATEHOUSE_OPTION', option: 'providers', message: /unknown kind "custom"/ })
  await unknown.close()
})

t.test('kit.routes: a provider\'s own routes answer by the auth routes\' rules; kit.openStateStore closes what it opened', async (t) => {
  const app = Fastify()
  await app.register(authPlugin, { secret: SECRET, url: 'https://app.example/' })
  let opened: { closed: boolean } | undefined
  await app.register(async (scope) => {
    const kit = providerKit(scope)
    const store = await kit.openStateStore('memory://', 'magic.stateStore')
    const close = store.close.bind(store)
    opened = { closed: false }
    store.close = async () => { opened!.closed = true; await close() }
    t.equal(await kit.openStateStore(undefined, 'magic.stateStore'), kit.stateStore, 'no option: the app\'s state store')
    await t.rejects(kit.openStateStore('ftp://x', 'magic.stateStore'), { name: 'OptionsError', message: /magic\.stateStore/ })
    kit.routes('magic', (r) => {
      r.post('/echo', async (request) => ({ got: request.body }))
      r.get('/who', async (request, reply) => await kit.sessions.signedIn(request, reply))
    }, { bodyLimit: 32 })
  })
  await app.ready()
  const ok = await app.inject({ method: 'POST', url: '/auth/magic/echo', payload: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
  t.equal(ok.statusCode, 200)
  t.same(ok.json(), { got: { a: '1' } }, 'forms are parsed in the auth scope')
  t.equal(ok.headers['cache-control'], 'no-store')
  const big = await app.inject({ method: 'POST', url: '/auth/magic/echo', payload: { text: 'x'.repeat(64) } })
  t.equal(big.statusCode, 413, 'the scope\'s body limit')
  t.equal(big.json().code, 'GATEHOUSE_TOO_LARGE')
  const anon = await app.inject({ url: '/auth/magic/who' })
  t.equal(anon.statusCode, 401)
  t.match(anon.json(), { error: 'unauthorized', code: String })
  await app.close()
  t.equal(opened?.closed, true, 'the store the kit opened is closed with the app')
})
