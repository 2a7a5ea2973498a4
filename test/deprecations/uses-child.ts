/**
 * Run by deprecations.test.ts in a fresh process (a deprecation warns once per process, so no earlier test may have
 * used the name): uses every deprecated name twice, as an app would, and reports for each what the use gave next to
 * what the new name gives (`works`) and the DeprecationWarnings emitted meanwhile (`warnings`: their codes). Prints
 * one JSON object `{ [name]: { works, warnings } }`.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { isDeepStrictEqual } from 'node:util'
import * as root from '../../index.js'
import * as providers from '../../providers/index.js'
import * as toolkit from '../../toolkit.js'
import * as stores from '../../stores/index.js'
import * as compat from '../../compat.js'
import { authPlugin, directProvider, emailProvider, oauth2Provider } from '../../index.js'
import { Audit as AuditClass } from '../../lib/audit/audit.js'
import { AUDIT_EVENT_TYPES as EVENT_TYPES } from '../../lib/audit/events.js'
import { MemoryRefreshCache as RefreshCache } from '../../plugins/core/base/refresh-cache.js'
import { safeEqual as equal } from '../../lib/compare.js'
import { readLoginRequest as readLogin, requestFields as fieldsOf } from '../../lib/login/login-request.js'
import { RESERVED_PROVIDER_NAMES as RESERVED } from '../../providers/oauth2/builtins.js'
import { isMailAddress as isMail } from '../../providers/email/sender.js'
import { appInfoHeaders as appInfo } from '../../plugins/toolkit/app-info.js'
import { deprecationHeaders as deprecation } from '../../plugins/toolkit/deprecation.js'
import { isPing as ping } from '../../plugins/toolkit/ping.js'
import { runChecks as checks } from '../../plugins/toolkit/health.js'
import { etagMatches as etag } from '../../plugins/toolkit/cache-control.js'
import { containsBlackWord as blackWord } from '../../plugins/toolkit/black-words.js'
import { isStateStore as isState } from '../../stores/state/resolve.js'
import { contentIdOf as contentId, isAvatarId as isAvatar, AVATAR_ID_RE as AVATAR_RE } from '../../stores/types.js'

const SECRET = 'deprecations-secret-0123456789abcdef'
const url = 'http://127.0.0.1'
const checker = (user: string, passwd: string): boolean => user === 'ann' && passwd === 'pw'

let warnings: string[] = []
process.on('warning', (w) => { if (w.name === 'DeprecationWarning') warnings.push((w as { code?: string }).code ?? '?') })

const report: Record<string, { works: boolean; warnings: string[] }> = {}

/** Uses the name twice (`use`), compares what the second use gave with `expected` (what the new name gives). */
async function check (name: string, use: () => unknown, expected: () => unknown = use): Promise<void> {
  const want = await settle(expected)
  warnings = []
  await settle(use)
  const got = await settle(use)
  // Warnings are emitted on the next tick.
  await new Promise((resolve) => setImmediate(resolve))
  report[name] = { works: isDeepStrictEqual(got, want), warnings }
}

/** What a use gives: its result, or its error's name and message (a use may be expected to fail as the new name does). */
async function settle (use: () => unknown): Promise<unknown> {
  try {
    return await use()
  } catch (err) {
    return { error: (err as Error).name, message: (err as Error).message }
  }
}

/** An app with the root plugin, `register`ed into it, ready; what `probe` answers; closed. */
async function app (register: (app: FastifyInstance) => unknown, probe: (app: FastifyInstance) => Promise<unknown> = async () => 'ready', opts: object = {}): Promise<unknown> {
  const a = Fastify()
  try {
    await a.register(authPlugin, { secret: SECRET, url, ...opts })
    await register(a)
    await a.ready()
    return await probe(a)
  } finally {
    await a.close()
  }
}
const login = (path: string) => async (a: FastifyInstance) => {
  const r = await a.inject({ url: path })
  return [r.statusCode, r.headers['content-type']]
}

// The root entry.
await check('root:verifyProvider', async () => await app((a) => a.register(root.verifyProvider, { name: 'mail', template: '{{.Token}}', sender: () => {} }), login('/auth/mail/login?user=u&address=u@example.test')),
  async () => await app((a) => a.register(emailProvider, { name: 'mail', template: '{{.Token}}', sender: () => {} }), login('/auth/mail/login?user=u&address=u@example.test')))
await check('root:SendError', () => { const e = new root.SendError('rejected', 'no'); return [e instanceof providers.MailSendError, e.kind, e.code] }, () => { const e = new providers.MailSendError('rejected', 'no'); return [e instanceof root.SendError, e.kind, e.code] })
await check('root:DEV_PORT', () => root.DEV_PORT, () => 8084)
await check('root:BREACHED_PASSWORD_HEADER', () => root.BREACHED_PASSWORD_HEADER, () => providers.BREACHED_PASSWORD_HEADER)
await check('root:appleKeyFromFile', async () => await root.appleKeyFromFile('/nonexistent/key.p8')(), async () => await providers.appleKeyFromFile('/nonexistent/key.p8')())
await check('root:discoverOidc', async () => await root.discoverOidc('not a url'), async () => await providers.discoverOidc('not a url'))
await check('root:getProviderToken', async () => await root.getProviderToken(Fastify().server as never, 'github'), async () => await providers.getProviderToken(Fastify().server as never, 'github'))
await check('root:revokeProviderToken', async () => await root.revokeProviderToken(Fastify().server as never, 'github'), async () => await providers.revokeProviderToken(Fastify().server as never, 'github'))
await check('root:mapStandardClaims', () => root.mapStandardClaims({ sub: '1', name: 'Ann', email: 'a@example.test' }, {} as never), () => providers.mapStandardClaims({ sub: '1', name: 'Ann', email: 'a@example.test' }, {} as never))
await check('root:builtinProviders', () => [...root.builtinProviders], () => [...providers.builtinProviders])
await check('root:OAUTH2_BUILTIN_NAMES', () => [...root.OAUTH2_BUILTIN_NAMES], () => [...providers.OAUTH2_BUILTIN_NAMES])
await check('root:breachedPasswords', () => typeof root.breachedPasswords().check, () => typeof providers.breachedPasswords().check)
await check('root:normaliseAccountName', () => root.normaliseAccountName(' Ann '), () => providers.normaliseAccountName(' Ann '))
await check('root:turnstileVerifier', () => Object.keys(root.turnstileVerifier({ secret: 's' })), () => Object.keys(providers.turnstileVerifier({ secret: 's' })))
await check('root:hcaptchaVerifier', () => Object.keys(root.hcaptchaVerifier({ secret: 's' })), () => Object.keys(providers.hcaptchaVerifier({ secret: 's' })))
await check('root:recaptchaV3Verifier', () => Object.keys(root.recaptchaV3Verifier({ secret: 's' })), () => Object.keys(providers.recaptchaV3Verifier({ secret: 's' })))
await check('root:SmtpSender', () => new root.SmtpSender({ host: '127.0.0.1', port: 2525, from: 'a@example.test' }) instanceof providers.SmtpSender, () => true)
await check('root:providerKit', async () => await app((a) => a.register(async (scope) => { root.providerKit(scope).mount({ name: 'kit', login: (_q, reply) => reply.send({ kit: true }) }) }), login('/auth/kit/login')),
  async () => await app((a) => a.register(async (scope) => { providers.providerKit(scope).mount({ name: 'kit', login: (_q, reply) => reply.send({ kit: true }) }) }), login('/auth/kit/login')))
await check('root:handlerProvider', async () => await app((a) => a.register(root.handlerProvider, { provider: { name: 'own', login: (_q, reply) => reply.send({}) } }), login('/auth/own/login')),
  async () => await app((a) => a.register(providers.handlerProvider, { provider: { name: 'own', login: (_q, reply) => reply.send({}) } }), login('/auth/own/login')))
for (const name of ['funcLogger', 'pinoLogger', 'stdLogger'] as const) {
  await check(`root:${name}`, () => typeof root[name](((() => {}) as never)).logf, () => typeof compat[name](((() => {}) as never)).logf)
}
await check('root:noopLogger', () => typeof root.noopLogger.logf, () => typeof compat.noopLogger.logf)
await check('root:userId', () => root.userId('github', '42'), () => compat.userId('github', '42'))
await check('root:senderFunc', () => typeof root.senderFunc(() => {}).send, () => typeof compat.senderFunc(() => {}).send)
await check('root:isMailAddress', () => root.isMailAddress('a@example.test'), () => isMail('a@example.test'))
await check('root:RESERVED_PROVIDER_NAMES', () => [...root.RESERVED_PROVIDER_NAMES], () => [...RESERVED])
await check('root:sendError', async () => { const a = Fastify(); a.get('/', (_q, reply) => root.sendError(reply, 400, 'bad')); const r = await a.inject('/'); return [r.statusCode, r.json()] },
  async () => { const a = Fastify(); a.get('/', (_q, reply) => toolkit.sendError(reply, 400, 'bad')); const r = await a.inject('/'); return [r.statusCode, r.json()] })
await check('root:safeEqual', () => root.safeEqual('abc', 'abc'), () => equal('abc', 'abc'))
await check('root:readLoginRequest', () => root.readLoginRequest({ site: 'shop' }), () => readLogin({ site: 'shop' }))
await check('root:requestFields', () => root.requestFields({ method: 'GET', query: { a: '1' } } as never), () => fieldsOf({ method: 'GET', query: { a: '1' } } as never))
await check('root:AUDIT_EVENT_TYPES', () => [...root.AUDIT_EVENT_TYPES], () => [...EVENT_TYPES])
await check('root:Audit', () => new root.Audit(undefined, compat.noopLogger, () => '') instanceof AuditClass, () => true)
await check('root:MemoryRefreshCache', () => { const c = new root.MemoryRefreshCache(); c.set('k', { jti: 'j' } as never); return c.get('k') }, () => { const c = new RefreshCache(); c.set('k', { jti: 'j' } as never); return c.get('k') })
await check('root:avatarPlugin', async () => await app((a) => a.register(root.avatarPlugin, {}), async (a) => (await a.inject('/avatar/x.image')).statusCode, { avatar: false }), () => 404)

// fastify-gatehouse/providers: the plugins are registered from the root now.
const pluginCases: Array<[keyof typeof providers & keyof typeof root, object]> = [
  ['directProvider', { name: 'local', checker }],
  ['oauth2Provider', { name: 'github', cid: 'c', csecret: 's' }],
  ['oidcProvider', { name: 'corp', cid: 'c', csecret: 's' }],
  ['appleProvider', { clientId: 'c' }],
  ['devProvider', { port: 0 }],
  ['telegramProvider', { token: '1:x', polling: false, apiUrl: 'http://127.0.0.1:9' }],
  ['passkeyProvider', {}],
  ['totpProvider', {}]
]
for (const [name, opts] of pluginCases) {
  await check(`providers:${name}`, async () => await app((a) => a.register(providers[name] as never, opts)), async () => await app((a) => a.register(root[name] as never, opts)))
}
await check('providers:verifyProvider', async () => await app((a) => a.register(providers.verifyProvider, { name: 'mail', template: '{{.Token}}', sender: () => {} }), login('/auth/mail/login?user=u&address=u@example.test')),
  async () => await app((a) => a.register(emailProvider, { name: 'mail', template: '{{.Token}}', sender: () => {} }), login('/auth/mail/login?user=u&address=u@example.test')))
await check('providers:SendError', () => new providers.SendError('failed', 'x') instanceof providers.MailSendError, () => true)
await check('providers:DEV_PORT', () => providers.DEV_PORT, () => 8084)
await check('providers:senderFunc', () => typeof providers.senderFunc(() => {}).send, () => 'function')
await check('providers:isMailAddress', () => providers.isMailAddress('no'), () => false)
await check('providers:RESERVED_PROVIDER_NAMES', () => providers.RESERVED_PROVIDER_NAMES.includes('github'), () => true)

// fastify-gatehouse/toolkit.
await check('toolkit:tracePlugin', async () => { const a = Fastify(); await a.register(toolkit.tracePlugin); a.get('/', async () => 'ok'); const r = await a.inject({ url: '/', headers: { 'x-request-id': 'abc' } }); return r.headers['x-request-id'] },
  async () => { const a = Fastify(); await a.register(toolkit.requestIdPlugin); a.get('/', async () => 'ok'); const r = await a.inject({ url: '/', headers: { 'x-request-id': 'abc' } }); return r.headers['x-request-id'] })
const restCases = ['wrap', 'renderJSON', 'renderJSONFromBytes', 'renderJSONWithHTML', 'encodeJSON', 'decodeJSON', 'sendErrorJSON', 'errorLogger', 'publish', 'expvarSnapshot', 'parseFromTo', 'parseTimestamp'] as const
for (const name of restCases) {
  await check(`toolkit:${name}`, async () => await callLikeCompat(toolkit[name] as never, name), async () => await callLikeCompat(compat[name] as never, name))
}
await check('toolkit:VarRegistry', () => new toolkit.VarRegistry() instanceof compat.VarRegistry, () => true)
for (const name of ['funcLogger', 'pinoLogger', 'stdLogger'] as const) {
  await check(`toolkit:${name}`, () => typeof toolkit[name](((() => {}) as never)).logf, () => 'function')
}
await check('toolkit:noopLogger', () => typeof toolkit.noopLogger.logf, () => 'function')
await check('toolkit:appInfoHeaders', () => toolkit.appInfoHeaders({ name: 'app', version: '1' }), () => appInfo({ name: 'app', version: '1' }))
await check('toolkit:deprecationHeaders', () => toolkit.deprecationHeaders({}), () => deprecation({}))
await check('toolkit:isPing', () => toolkit.isPing({ method: 'GET', url: '/ping' } as never), () => ping({ method: 'GET', url: '/ping' } as never))
await check('toolkit:runChecks', async () => await toolkit.runChecks([{ name: 'db', check: async () => {} }], 1000), async () => await checks([{ name: 'db', check: async () => {} }], 1000))
await check('toolkit:etagMatches', () => toolkit.etagMatches('"a"', '"a"'), () => etag('"a"', '"a"'))
await check('toolkit:containsBlackWord', () => toolkit.containsBlackWord('a bad word', ['bad']), () => blackWord('a bad word', ['bad']))

// fastify-gatehouse/stores.
for (const [name, family] of [['StateStoreError', 'state'], ['PasskeyStoreError', 'passkey'], ['TotpStoreError', 'totp']] as const) {
  await check(`stores:${name}`, () => { const e = new stores[name]('down'); return [e instanceof stores.StoreError, e.family, e instanceof stores[name]] }, () => [true, family, true])
}
await check('stores:isStateStore', () => stores.isStateStore(new stores.MemoryStateStore()), () => isState(new stores.MemoryStateStore()))
await check('stores:isPasskeyStore', () => stores.isPasskeyStore(new stores.MemoryPasskeyStore()), () => true)
await check('stores:isTotpStore', () => stores.isTotpStore(new stores.MemoryTotpStore()), () => true)
await check('stores:isAvatarStore', () => stores.isAvatarStore(new stores.MemoryStore()), () => true)
await check('stores:isAvatarId', () => stores.isAvatarId('abc'), () => isAvatar('abc'))
await check('stores:contentIdOf', () => stores.contentIdOf(new Uint8Array([1, 2])), () => contentId(new Uint8Array([1, 2])))
await check('stores:AVATAR_ID_RE', () => stores.AVATAR_ID_RE.source, () => AVATAR_RE.source)
await check('stores:newStore', () => stores.newStore('memory://').constructor.name, () => stores.openAvatarStore('memory://').constructor.name)

// fastify.auth's old member names.
const member = async (use: (a: FastifyInstance) => unknown): Promise<unknown> => await app(async () => {}, async (a) => await settle(async () => await use(a)))
await check('fastify.auth.trace', async () => await member((a) => a.auth.trace === a.auth.optionalUser), () => true)
await check('fastify.auth.recent', async () => await member((a) => typeof a.auth.recent({ within: '5m' })), () => 'function')
await check('fastify.auth.listSessions', async () => await member(async (a) => await a.auth.listSessions('u1')), async () => await member(async (a) => await a.auth.sessions.list('u1')))
await check('fastify.auth.revokeSession', async () => await member(async (a) => await a.auth.revokeSession('j1')), async () => await member(async (a) => await a.auth.sessions.revoke('j1')))
await check('fastify.auth.revokeUser', async () => await member(async (a) => await a.auth.revokeUser('u1')), async () => await member(async (a) => await a.auth.sessions.revokeUser('u1')))
await check('fastify.auth.addOidcProvider', async () => await app((a) => { a.auth.addOidcProvider('corp', { cid: 'c', csecret: '' }, { issuer: 'https://id.example' }) }),
  async () => await app((a) => a.register(root.oidcProvider, { name: 'corp', cid: 'c', csecret: '', issuer: 'https://id.example' })))
await check('fastify.auth.addTelegramProvider', async () => await app((a) => { a.auth.addTelegramProvider({ token: '1:x', polling: false, apiUrl: 'http://127.0.0.1:9' }) }),
  async () => await app((a) => a.register(root.telegramProvider, { token: '1:x', polling: false, apiUrl: 'http://127.0.0.1:9' })))

// Option keys that moved into the `login` and `factors` groups.
const optionCases: Array<[string, object, object]> = [
  ['allowedRedirectHosts', { allowedRedirectHosts: ['app.example'] }, { login: { redirectHosts: ['app.example'] } }],
  ['rateLimit', { rateLimit: false }, { login: { rateLimit: false } }],
  ['captcha', { captcha: () => true }, { login: { captcha: () => true } }],
  ['crossSite', { crossSite: false }, { login: { crossSite: false } }],
  ['lastLoginMethod', { lastLoginMethod: true }, { login: { lastMethod: true } }],
  ['loginPage', { loginPage: '/signin' }, { login: { page: '/signin' } }],
  ['reauthentication', { reauthentication: { within: '2m' } }, { factors: { reauthentication: { within: '2m' } } }],
  ['trustedDevices', { trustedDevices: true }, { factors: { trustedDevices: true } }]
]
const signIn = async (a: FastifyInstance): Promise<unknown> => {
  await a.register(directProvider, { name: 'local', checker })
}
const probeLogin = async (a: FastifyInstance): Promise<unknown> => {
  const r = await a.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'ann', passwd: 'pw', from: 'https://app.example/x' }, headers: { 'sec-fetch-site': 'cross-site' } })
  return [r.statusCode, r.headers.location ?? null, r.cookies.map((c) => c.name).sort()]
}
for (const [key, old, now] of optionCases) {
  await check(`option:${key}`, async () => await app(signIn, probeLogin, old), async () => await app(signIn, probeLogin, now))
}
await check("providers entry { kind: 'verify' }", async () => await app(async () => {}, login('/auth/mail/login?user=u&address=u@example.test'), { providers: [{ kind: 'verify', name: 'mail', template: '{{.Token}}', sender: () => {} }] }),
  async () => await app(async () => {}, login('/auth/mail/login?user=u&address=u@example.test'), { providers: [{ kind: 'email', name: 'mail', template: '{{.Token}}', sender: () => {} }] }))
void oauth2Provider

/** Calls a go-pkgz/rest helper as its tests do, on a small app (the same calls for the old and the new name). */
async function callLikeCompat (fn: (...args: unknown[]) => unknown, name: typeof restCases[number]): Promise<unknown> {
  if (name === 'parseTimestamp') return String(fn('2024-01-02T03:04:05Z'))
  if (name === 'publish') { fn(`dep-${Math.random()}`, () => 1); return 'published' }
  if (name === 'expvarSnapshot') return Object.keys(await (fn() as Promise<object>)).includes('memstats')
  if (name === 'errorLogger') return typeof (fn(compat.noopLogger) as { log: unknown }).log
  const a = Fastify()
  a.post('/', async (request, reply) => {
    switch (name) {
      case 'wrap': return await (fn(async () => 'wrapped') as (this: unknown, q: unknown, r: unknown) => Promise<unknown>).call(a, request, reply)
      case 'renderJSON': return fn(reply, { a: 1 })
      case 'renderJSONFromBytes': return fn(reply, '{"a":1}')
      case 'renderJSONWithHTML': return fn(reply, { a: '<b>' })
      case 'encodeJSON': return fn(reply, 201, { a: 1 })
      case 'decodeJSON': return fn(request)
      case 'sendErrorJSON': return fn(reply, request, 400, new Error('bad'), 'details')
      case 'parseFromTo': return fn(request)
    }
  })
  const r = await a.inject({ method: 'POST', url: '/?from=20240101&to=20240102', payload: { a: 1 } })
  return [r.statusCode, r.body]
}

console.log(JSON.stringify(report))
