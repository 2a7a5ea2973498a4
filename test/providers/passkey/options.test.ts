/**
 * The passkey provider's options: every mistake fails registration with an OptionsError naming the option, and the
 * RP id and origins default to the core's `url`.
 */
import t from 'tap'
import Fastify from 'fastify'
import { authPlugin, passkeyProvider, type PasskeyProviderOptions } from '../../../index.js'
import { MemoryPasskeyStore } from '../../../stores/index.js'
import { SECRET } from '../../helpers/passkey-app.js'

async function ready (opts: unknown, url = 'https://login.example.com'): Promise<void> {
  const app = Fastify()
  try {
    await app.register(authPlugin, { secret: () => SECRET, url, providers: [{ kind: 'direct', name: 'local', checker: () => true }] })
    await app.register(passkeyProvider, opts as PasskeyProviderOptions)
    await app.ready()
  } finally {
    await app.close()
  }
}

t.test('mistakes name the option', async (t) => {
  const cases: Array<[string, unknown, string]> = [
    ['unknown key', { nmae: 'x' }, 'passkey.nmae'],
    ['bad name', { name: 'a b' }, 'passkey.name'],
    ['rpID not a domain', { rpID: 'https://example.com' }, 'passkey.rpID'],
    ['rpID of another site', { rpID: 'other.example' }, 'passkey.rpID'],
    ['rpID a sibling', { rpID: 'www.example.com' }, 'passkey.rpID'],
    ['origins not a list', { origins: 'https://login.example.com' }, 'passkey.origins'],
    ['origin with a path', { origins: ['https://login.example.com/app'] }, 'passkey.origins'],
    ['origin off the RP id', { rpID: 'example.com', origins: ['https://example.org'] }, 'passkey.rpID'],
    ['empty origins', { origins: [] }, 'passkey.origins'],
    ['userVerification', { userVerification: 'discouraged' }, 'passkey.userVerification'],
    ['challengeTtl', { challengeTtl: 'soon' }, 'passkey.challengeTtl'],
    ['pendingTtl', { pendingTtl: -1 }, 'passkey.pendingTtl'],
    ['maxPerUser', { maxPerUser: 0 }, 'passkey.maxPerUser'],
    ['findUser', { findUser: 42 }, 'passkey.findUser'],
    ['findUser provider name', { findUser: 'not a name' }, 'passkey.findUser'],
    ['loadUser', { loadUser: 'x' }, 'passkey.loadUser'],
    ['store scheme', { store: 'postgres://x' }, 'passkey.store'],
    ['store object', { store: { add () {} } }, 'passkey.store'],
    ['stateStore', { stateStore: 'memcached://x' }, 'passkey.stateStore'],
    ['secondFactor not a list', { secondFactor: 'local' }, 'passkey.secondFactor'],
    ['secondFactor unknown provider', { secondFactor: ['locall'] }, 'passkey.secondFactor']
  ]
  for (const [what, opts, option] of cases) {
    await t.rejects(ready(opts), { name: 'OptionsError', code: 'GATEHOUSE_OPTION', option }, what)
  }
})

t.test('a provider that is not a direct provider cannot take a second factor', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(authPlugin, { secret: () => SECRET, url: 'http://localhost:8080' })
  app.auth.addCustomHandler({ name: 'mine', login: async () => ({}) })
  await app.register(passkeyProvider, { secondFactor: ['mine'] })
  await t.rejects(app.ready(), { option: 'passkey.secondFactor', message: /"mine", which is not a direct provider/ })
})

t.test('two passkey plugins cannot both be the second factor of one provider', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(authPlugin, { secret: () => SECRET, url: 'http://localhost:8080', providers: [{ kind: 'direct', name: 'local', checker: () => true }] })
  await app.register(passkeyProvider, { secondFactor: ['local'] })
  app.register(passkeyProvider, { name: 'keys2', secondFactor: ['local'] })
  await t.rejects(app.ready(), { option: 'passkey.keys2.secondFactor', message: /"local", which already has a second factor/ })
})

t.test('the passkey provider needs the auth core', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  app.register(passkeyProvider, {})
  await t.rejects(app.ready(), { code: 'GATEHOUSE_OPTION', option: 'passkey', message: /register authPlugin first/ })
})

t.test('defaults: RP id and origin from url; a parent domain and extra origins when asked', async (t) => {
  const options = async (url: string, opts: PasskeyProviderOptions): Promise<{ rp: { id: string; name: string }; timeout: number }> => {
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(authPlugin, { secret: () => SECRET, url })
    await app.register(passkeyProvider, opts)
    app.get('/login-as', async (_req, reply) => { await app.auth.tokens.set(reply, { user: { name: 'u', id: 'local_u' } }); return 'ok' })
    const login = await app.inject('/login-as')
    const cookies = Object.fromEntries(login.cookies.map((c) => [c.name, c.value]))
    const res = await app.inject({ method: 'POST', url: '/auth/passkey/register/options', cookies, headers: { 'x-xsrf-token': cookies[url.startsWith('https:') ? '__Host-XSRF-TOKEN' : 'XSRF-TOKEN']! }, payload: {} })
    t.equal(res.statusCode, 200)
    return res.json()
  }
  t.match(await options('https://login.example.com/app', {}), { rp: { id: 'login.example.com', name: 'login.example.com' }, timeout: 300_000 })
  t.match(await options('https://login.example.com', { rpID: 'example.com', rpName: 'Example', origins: ['https://login.example.com', 'https://www.example.com'], challengeTtl: '2m' }),
    { rp: { id: 'example.com', name: 'Example' }, timeout: 120_000 })
  await t.resolves(ready({ store: new MemoryPasskeyStore(), findUser: 'local', loadUser: (u: unknown) => u }))
})
