import t from 'tap'
import Fastify from 'fastify'
import { authPlugin } from '../auth.js'
import { startLocalOAuth2Server } from '../servers/index.js'
import { client, listen } from './helpers/client.js'

t.test('every provider kind can be given in the options object and by add* calls', async (t) => {
  const local = await startLocalOAuth2Server({ url: 'http://127.0.0.1:0' })
  t.teardown(() => local.close())
  const sent: string[] = []
  const { app, base } = await listen(async (app) => {
    await app.register(authPlugin, {
      secret: () => 'wiring-secret-0001-0123456789abcdef',
      url: 'http://127.0.0.1',
      providers: [
        { kind: 'direct', name: 'local', checker: () => true },
        { kind: 'oauth2', name: 'github', cid: 'cid', csecret: 'csec' },
        { kind: 'dev', port: 0 },
        { kind: 'oauth2', ...local.providerOptions, name: 'custom' },
        { kind: 'verify', name: 'email', template: 'token {{.Token}}', sender: (_a: string, text: string) => { sent.push(text) } },
        { kind: 'telegram', token: '123:abc', polling: false, apiUrl: 'http://127.0.0.1:9' },
        { kind: 'handler', provider: { name: 'mine', login: () => ({ mine: true }), callback: () => ({}), logout: () => ({}) } },
        { kind: 'passkey', name: 'keys' }
      ]
    })
    app.auth.addProvider('google', 'gid', 'gsecret')
    app.auth.addCustomProvider('custom2', local.providerOptions, local.providerOptions)
    app.auth.addDirectProvider('direct2', () => false)
  })
  t.equal(app.auth.providers().length, 11)
  t.teardown(() => app.close())
  const r = await client(base).fetch('/auth/list')
  t.same(await r.json(), ['local', 'github', 'dev', 'custom', 'email', 'telegram', 'mine', 'keys', 'google', 'custom2', 'direct2'])

  // The dev provider's login redirects to its fake server, which the app started on ready.
  const dev = await client(base).fetch('/auth/dev/login')
  t.equal(dev.status, 302)
  t.match(dev.headers.get('location'), /^http:\/\/127\.0\.0\.1:\d+\//)
  // The dev server only sends codes to our own callback (its client credentials are public).
  const authorize = new URL(dev.headers.get('location')!)
  t.equal(authorize.searchParams.get('redirect_uri'), 'http://127.0.0.1/auth/dev/callback')
  authorize.searchParams.set('redirect_uri', 'http://evil.example/cb')
  const foreign = await fetch(authorize, { redirect: 'manual' })
  t.equal(foreign.status, 400, 'foreign redirect_uri refused by the dev server')
  t.equal(foreign.headers.get('location'), null)
  // The custom provider's login redirects to the local OAuth2 server.
  const custom = await client(base).fetch('/auth/custom/login')
  t.equal(custom.status, 302)
  t.ok(custom.headers.get('location')!.startsWith(local.url), 'custom login goes to the local OAuth2 server')
  // A self-implemented handler answers through the same routes.
  t.same(await (await client(base).fetch('/auth/mine/login')).json(), { mine: true })
  // The verified provider sends through the given sender.
  const v = await client(base).fetch('/auth/email/login?user=u&address=u@example.test')
  t.equal(v.status, 200)
  t.equal(sent.length, 1)
  t.match(sent[0], /^token [\w-]+\.[\w-]+\.[\w-]+$/)
})

t.test('registration errors are OptionsErrors naming the option, at ready', async (t) => {
  const cases: Array<[(app: ReturnType<typeof Fastify>) => unknown, string]> = [
    [(app) => app.auth.addProvider('myspace', 'a', 'b'), 'oauth2.myspace.endpoint'],
    [(app) => app.auth.addProvider('github', 'a', ''), 'oauth2.github.csecret'],
    [(app) => app.auth.addCustomProvider('github', { cid: 'a', csecret: 'b' }, { endpoint: { authURL: 'http://x/a', tokenURL: 'http://x/t' }, infoURL: 'http://x/u', mapUser: () => ({ id: '1' }) }), 'oauth2.github.name'],
    [(app) => app.auth.addDirectProvider('local', () => true), 'providers'],
    [(app) => app.auth.addDirectProvider('bad name', () => true), 'direct.name'],
    [(app) => app.auth.addDirectProvider('x', 'yes' as never), 'direct.checker']
  ]
  for (const [call, option] of cases) {
    const app = Fastify()
    await app.register(authPlugin, { secret: () => 'x-secret-x-0123456789abcdef-0123456789abcdef', url: 'http://127.0.0.1', providers: [{ kind: 'direct', name: 'local', checker: () => true }] })
    call(app)
    await t.rejects(app.ready(), { code: 'GATEHOUSE_OPTION', option }, option)
    await app.close()
  }
  const app = Fastify()
  await app.register(authPlugin, { secret: () => 'x-secret-x-0123456789abcdef-0123456789abcdef', url: 'http://127.0.0.1' })
  await t.rejects(app.auth.addAppleProvider({ clientId: 'c', teamId: 't', keyId: 'k' }, async () => { throw new Error('no such key file') }),
    { code: 'GATEHOUSE_OPTION', option: 'apple.keyLoader' }, 'apple: a failing key loader rejects')
  await app.close()
})

t.test('after ready every add* call and addCustomHandler throw the same OptionsError', async (t) => {
  const app = Fastify()
  await app.register(authPlugin, { secret: () => 'x-secret-x-0123456789abcdef-0123456789abcdef', url: 'http://127.0.0.1' })
  await app.ready()
  t.teardown(() => app.close())
  const calls: Array<[string, () => unknown]> = [
    ['addProvider', () => app.auth.addProvider('github', 'a', 'b')],
    ['addDevProvider', () => app.auth.addDevProvider(0)],
    ['addDirectProvider', () => app.auth.addDirectProvider('late', () => true)],
    ['addVerifProvider', () => app.auth.addVerifProvider('mail', '{{.Token}}', () => {})],
    ['addCustomProvider', () => app.auth.addCustomProvider('corp', { cid: 'a', csecret: 'b' }, { endpoint: { authURL: 'http://x/a', tokenURL: 'http://x/t' }, infoURL: 'http://x/u', mapUser: () => ({ id: '1' }) })],
    ['addOidcProvider', () => app.auth.addOidcProvider('sso', { cid: 'a', csecret: 'b' }, { issuer: 'http://127.0.0.1:9' })],
    ['addTelegramProvider', () => app.auth.addTelegramProvider({ token: '1:x', polling: false })],
    ['addCustomHandler', () => app.auth.addCustomHandler({ name: 'mine', login: () => ({}) })]
  ]
  for (const [what, call] of calls) t.throws(call, { code: 'GATEHOUSE_OPTION', option: 'providers' }, what)
  await t.rejects(app.auth.addAppleProvider({ clientId: 'c', teamId: 't', keyId: 'k' }, async () => { throw new Error('never called') }),
    { code: 'GATEHOUSE_OPTION' }, 'addAppleProvider')
  t.same(app.auth.providers(), [], 'nothing was mounted')
})
