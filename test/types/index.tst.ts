/**
 * Type tests of the public API, compiled (not run) by `npm run typecheck` in CI: what a user writes must
 * type-check; misuse must not (each `@ts-expect-error` fails the build when the line stops being an error).
 */
import Fastify from 'fastify'
import authPlugin, {
  directProvider, oauth2Provider, oidcProvider, devProvider, emailProvider, telegramProvider, passkeyProvider, ErrorCodes, OptionsError,
  type AuthOptions, type Claims, type GatehouseAuth, type ReadonlyUser
} from '../../index.js'
import { SmtpSender, appleKeyFromFile, providerKit } from '../../providers/index.js'
import { type ProviderMethods } from '../../compat.js'
import { sanitizeUrl, pingPlugin, healthPlugin, withBcryptHash, maybe } from '../../toolkit.js'
import { startLocalOAuth2Server } from '../../servers/index.js'

const app = Fastify()

const opts: AuthOptions = {
  secret: (aud) => `secret-${aud}`,
  url: 'https://example.com',
  session: { tokenDuration: '15m', maxAge: 31 * 24 * 3600 * 1000 },
  claimsUpdater: (claims: Claims) => ({ ...claims, plan: 'gold' }),
  validator: { validate: (_token, claims) => claims.user?.name !== 'mallory' },
  xsrf: { ignoreMethods: ['GET'] },
  providers: [{ kind: 'direct', name: 'local', checker: async (user, passwd) => user === 'a' && passwd === 'b' }]
}
await app.register(authPlugin, opts)
await app.register(authPlugin, { secret: { get: async () => 's' }, url: 'http://localhost' })

app.get('/admin', { preHandler: app.auth.rbac(['admin']) }, async (request) => {
  // Read-only in the types (frozen at runtime): ReadonlyUser, not User.
  const user: ReadonlyUser | null = request.user
  const name: string | undefined = user?.name
  const must: ReadonlyUser = app.auth.mustGetUser(request)
  return { name, editor: must.hasRole(['editor']), admin: must.isAdmin() }
})
app.get('/private', { preHandler: [app.auth.authenticate, app.auth.updateUser((u) => u.setBoolAttr('seen', true))] }, async () => 'ok')
app.auth.addDirectProvider('other', (u, p) => u === p)

// The README's request-log redaction
const secrets = new Set(['token', 'code', 'state', 'passwd', 'password', 'secret'])
const logged = Fastify({ logger: { serializers: { req: (req) => ({ method: req.method, url: sanitizeUrl(req.url, secrets) }) } } })
void logged

// Providers, by call and by options entry
app.auth.addProvider('github', 'cid', 'csecret', { timeout: '5s' })
app.auth.addDevProvider(8084, { emailFn: (name) => `${name}@example.com` })
app.auth.addVerifProvider('email', 'Confirm with {{.Token}}', new SmtpSender({ host: 'localhost', port: 25, from: 'a@b.c' }))
app.auth.addVerifProvider('sms', '{{.Token}}', async (_address, _text) => {})
app.auth.addCustomProvider('corp', { cid: 'c', csecret: 's' }, {
  endpoint: { authURL: 'https://corp/auth', tokenURL: 'https://corp/token' },
  infoURL: 'https://corp/me',
  mapUser: (data) => ({ id: String(data.sub), name: String(data.name) })
})
await app.auth.addAppleProvider({ clientId: 'c', teamId: 't', keyId: 'k' }, appleKeyFromFile('/keys/apple.p8'))
app.auth.addTelegramProvider({ token: '123:abc' })
const entries: AuthOptions['providers'] = [
  { kind: 'oauth2', name: 'google', cid: 'c', csecret: 's' },
  { kind: 'dev' },
  { kind: 'oauth2', name: 'corp', cid: 'c', csecret: 's', endpoint: { authURL: 'https://corp/auth', tokenURL: 'https://corp/token' }, infoURL: 'https://corp/me', mapUser: (data) => ({ id: String(data.sub) }) },
  { kind: 'oidc', name: 'sso', cid: 'c', csecret: 's', issuer: 'https://sso.example.com', handshakeTtl: '5m' },
  { kind: 'apple', clientId: 'c', teamId: 't', keyId: 'k', keyLoader: appleKeyFromFile('/keys/apple.p8') },
  { kind: 'email', name: 'mail', template: '{{.Token}}', sender: async () => {} },
  { kind: 'telegram', token: '1:x', polling: false },
  { kind: 'passkey', secondFactor: ['local'] },
  { kind: 'handler', provider: { name: 'magic', login: (_request, reply, login) => reply.send({ aud: login.aud ?? null }) } }
]

// A self-implemented provider through the kit
await app.register(async (scope) => {
  const kit = providerKit(scope)
  kit.mount({ name: 'kit', login: async (request, reply, login) => await kit.completeLogin(request, reply, { user: { name: 'u', id: 'kit_u' }, ...login }) })
  const token: string = await kit.loginState.sign({ step: 1 }, '5m')
  void token
  // @ts-expect-error the mount counts login requests: the kit's throttle cannot count one twice
  void kit.throttle.loginRequest
})

// fastify.auth is the app's API: these 13 members and the seed's add* methods, nothing of the providers' plumbing
type AppApi = 'authenticate' | 'optionalUser' | 'admin' | 'rbac' | 'stepUp' | 'xsrf' | 'updateUser' | 'getUser' | 'mustGetUser' | 'sessions' |
  'tokens' | 'providers' | 'jwks'
// and, until 1.0, the names five of them had (deprecated: each warns once when used)
type DeprecatedApi = 'trace' | 'recent' | 'revokeSession' | 'revokeUser' | 'listSessions'
type Members = Exclude<keyof GatehouseAuth, keyof ProviderMethods>
const exactly = <T>(_: T & ([T] extends [AppApi | DeprecatedApi] ? ([AppApi | DeprecatedApi] extends [T] ? unknown : never) : never)): void => {}
exactly<Members>(null as unknown as Members)
void [app.auth.sessions.list, app.auth.sessions.revoke, app.auth.sessions.revokeUser]
const names: Array<keyof ProviderMethods> = ['addProvider', 'addDevProvider', 'addDirectProvider', 'addVerifProvider', 'addCustomProvider', 'addOidcProvider', 'addAppleProvider', 'addTelegramProvider', 'addCustomHandler']
void names
// @ts-expect-error the providers' plumbing is not on fastify.auth
void app.auth.completeLogin
// @ts-expect-error the providers' plumbing is not on fastify.auth
void app.auth.throttle
// @ts-expect-error the providers' plumbing is not on fastify.auth
void app.auth.options
// @ts-expect-error the avatar slot is not on fastify.auth
void app.auth.avatar
// @ts-expect-error fastify.auth.tokens is the app's part: create, parse, set, read, reset
void app.auth.tokens.signPurpose
void [app.auth.tokens.create, app.auth.tokens.parse, app.auth.tokens.set, app.auth.tokens.read, app.auth.tokens.reset]
await app.register(pingPlugin)
await app.register(healthPlugin, { checks: [{ name: 'db', check: async () => {} }] })
app.get('/ops', { onRequest: withBcryptHash('ops', '$2a$10$abcdefghijklmnopqrstuu5Hk0V6oZpGkJ2aJrJ6J4p3m8y1cH7e') }, async () => 'ok')
app.get('/maybe', { preHandler: maybe((req) => req.method === 'POST', app.auth.authenticate) }, async () => 'ok')

// Providers as plugins
await app.register(directProvider, { name: 'local2', checker: async (user, passwd) => user === passwd })
await app.register(oauth2Provider, { name: 'github', cid: 'c', csecret: 's', timeout: 5000 })
await app.register(oauth2Provider, {
  name: 'corp3', cid: 'c', csecret: 's', endpoint: { authURL: 'https://corp/auth', tokenURL: 'https://corp/token' },
  infoURL: 'https://corp/me', mapUser: (data) => ({ id: String(data.sub) })
})
await app.register(oidcProvider, { name: 'sso', cid: 'c', csecret: 's', issuer: 'https://sso.example.com' })
await app.register(devProvider, { port: 0, onServer: (server) => { const u: string = server.url; void u } })
await app.register(emailProvider, { name: 'mail', template: '{{.Token}}', sender: async () => {} })
await app.register(telegramProvider, { token: '1:x', polling: false })
await app.register(passkeyProvider, { store: 'memory://' })
const local = await startLocalOAuth2Server({ url: 'http://localhost:9096', withLoginPage: true })
await app.register(oauth2Provider, { name: 'custom', ...local.providerOptions })
const code: string = ErrorCodes.OPTION
try { await app.ready() } catch (err) { if (err instanceof OptionsError) { const o: string = err.option; void o } }
void code

// @ts-expect-error an oauth2 entry needs its client secret
const noSecretEntry: AuthOptions['providers'] = [{ kind: 'oauth2', name: 'google', cid: 'c' }]
// @ts-expect-error a custom provider needs mapUser
app.auth.addCustomProvider('corp2', { cid: 'c', csecret: 's' }, { endpoint: { authURL: 'a', tokenURL: 't' }, infoURL: 'i' })
// @ts-expect-error health checks are functions or {name, check}
await app.register(healthPlugin, { checks: ['db'] })
// @ts-expect-error secret is required
const noSecret: AuthOptions = { url: 'http://x' }
// @ts-expect-error rbac takes a list of role names
app.auth.rbac('admin')
// @ts-expect-error request.user may be null
const n: string = Fastify().get('/', async (r) => r.user.name) as unknown as string
// @ts-expect-error the direct plugin needs a checker
await app.register(directProvider, { name: 'x' })
// @ts-expect-error a checker returns a boolean or { ok, user }
app.auth.addDirectProvider('bad', (u: string) => u)
// @ts-expect-error a checker's user is a name or { name, id?, email?, attrs?, role? }
app.auth.addDirectProvider('bad2', () => ({ ok: true, user: { username: 'alice' } }))
// @ts-expect-error ok is a boolean
app.auth.addDirectProvider('bad3', () => ({ ok: 'yes' }))
app.auth.addDirectProvider('canonical', () => ({ ok: true, user: 'alice' }))
app.auth.addDirectProvider('account', async () => ({ ok: true, user: { name: 'Alice', id: '42', role: 'editor' } }))
// @ts-expect-error the old `options` wrapper of a telegram entry is gone: the entry is the plugin's options
const wrappedEntry: AuthOptions['providers'] = [{ kind: 'telegram', options: { token: '1:x' } }]
// @ts-expect-error 0.x duration names are gone
app.auth.addProvider('github', 'cid', 'csecret', { timeoutMs: 5000 })
// @ts-expect-error unknown provider kinds are rejected
const badEntry: AuthOptions = { secret: () => 's', url: 'http://x', providers: [{ kind: 'nope', name: 'x' }] }
// @ts-expect-error cookies.sameSite takes only the three cookie values
const badSameSite: AuthOptions = { secret: () => 's', url: 'http://x', cookies: { sameSite: 'loose' } }

void noSecret; void wrappedEntry; void n; void badEntry; void badSameSite; void entries; void noSecretEntry
