/**
 * The small apps scratch-app.test.ts writes into the folder where the packed package is installed. Each is a
 * user's program as written against the published package (plain JavaScript, no test helpers), and prints one
 * JSON line of what it saw for the test to check.
 */

import { readFileSync } from 'node:fs'

/**
 * The README's five-minute tutorial, its code block as written: only the TypeScript marks (non-null `!`, the
 * parameter and return types) are dropped to make it JavaScript, and its port 8080 is the one the test gives
 * (PORT: 8080 may be taken on a shared machine), in `url` and `listen` alike.
 */
const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
const TUTORIAL_TS = /^## Five-minute tutorial\n\n```ts\n([\s\S]*?)^```$/m.exec(README)?.[1]
if (TUTORIAL_TS === undefined) throw new Error('README.md has no "## Five-minute tutorial" with a ts code block')
const TUTORIAL = TUTORIAL_TS.replace(/(\w|\))!(?=[\s,.)\]])/g, '$1').replace(/: (?:string|Promise<boolean>)(?=[,){ ])/g, '')
  .replace("'http://localhost:8080'", "'http://localhost:' + process.env.PORT").replace('port: 8080', 'port: Number(process.env.PORT)')

// Signs in with the direct provider, then calls the protected route with the XSRF header, as a browser app does.
const CLIENT = `
async function signIn (base) {
  const login = await fetch(base + '/auth/local/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user: 'alice', passwd: 'alice-pw' }) })
  const cookies = login.headers.getSetCookie().map((c) => c.split(';')[0])
  const xsrf = cookies.find((c) => c.startsWith('XSRF-TOKEN=')).slice('XSRF-TOKEN='.length)
  return { login: login.status, cookie: cookies.join('; '), xsrf }
}
async function signInAndCall (base) {
  const { login, cookie, xsrf } = await signIn(base)
  const denied = await fetch(base + '/api/me')
  const me = await fetch(base + '/api/me', { headers: { cookie, 'x-xsrf-token': xsrf } })
  return { login, denied: denied.status, status: me.status, body: await me.json() }
}
`
const SETUP = `
  await app.register(authPlugin, { secret: () => process.env.AUTH_SECRET, url: 'http://127.0.0.1' })
  await app.register(directProvider, { name: 'local', checker: async (user, passwd) => user === 'alice' && passwd === 'alice-pw' })
  app.get('/api/me', { preHandler: app.auth.authenticate }, async (request) => request.user)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const result = await signInAndCall('http://127.0.0.1:' + app.server.address().port)
  await app.close()
  console.log(JSON.stringify(result))
`

/** A self-implemented provider (through the provider kit, the public way) whose user comes with PICTURE_URL. */
const PIC_PROVIDER = `
const PIC = { kind: 'handler', provider: (kit) => ({ name: 'pic', login: (request, reply) => kit.completeLogin(request, reply, { user: { name: 'pic', id: 'github_1' }, avatar: { url: process.env.PICTURE_URL } }) }) }
`

// The avatar of a user whose provider gave a picture link (PICTURE_URL): what is served, and what was logged.
const AVATAR = `
import Fastify from 'fastify'
import authPlugin, { funcLogger } from 'fastify-gatehouse'
const lines = []
${PIC_PROVIDER}const app = Fastify()
await app.register(authPlugin, {
  secret: () => process.env.AUTH_SECRET, url: 'http://127.0.0.1', logger: funcLogger((line) => lines.push(line)),
  avatar: { store: process.env.AVATAR_STORE, fetch: { allowPrivate: true, loginWait: '10s' } }, providers: [PIC]
})
await app.ready()
const link = (await app.inject('/auth/pic/login')).json().picture
const res = await app.inject(new URL(link).pathname)
const png = res.rawPayload
await app.close()
console.log(JSON.stringify({ status: res.statusCode, type: res.headers['content-type'], png: png.subarray(1, 4).toString(),
  width: png.readUInt32BE(16), height: png.readUInt32BE(20), sharpLog: lines.filter((l) => l.includes('sharp')) }))
`

// Every feature that needs an optional package, configured where none is installed: the error of each.
const MISSING = `
import Fastify from 'fastify'
import authPlugin, { passkeyProvider, SmtpSender, totpProvider } from 'fastify-gatehouse'
import { argon2Hash, fileServerPlugin, withArgon2Hash } from 'fastify-gatehouse/toolkit'
import { newStore, openPasskeyStore, RedisStateStore } from 'fastify-gatehouse/stores'
const core = (extra = {}) => async (app) => app.register(authPlugin, { secret: () => process.env.AUTH_SECRET, url: 'http://127.0.0.1', ...extra })
async function registration (...plugins) {
  const app = Fastify()
  try {
    for (const plugin of plugins) await plugin(app)
    await app.ready()
    return null
  } catch (err) {
    return err
  } finally {
    await app.close().catch(() => {})
  }
}
function thrown (fn) { try { fn(); return null } catch (err) { return err } }
const errors = {
  stateStore: await registration(core({ stateStore: 'redis://127.0.0.1:1' })),
  boltAvatars: await registration(core({ avatar: { store: 'bolt://./data/avatars.db' } })),
  mongoAvatars: await registration(core({ avatar: { store: 'mongodb://127.0.0.1:1/app' } })),
  passkeys: await registration(core(), (app) => app.register(passkeyProvider, {})),
  totpQr: await registration(core(), (app) => app.register(totpProvider, { encryptionKey: 'a1'.repeat(32) })),
  totp: await registration(core(), (app) => app.register(totpProvider, { encryptionKey: 'a1'.repeat(32), qrCode: false })),
  fileServer: await registration((app) => app.register(fileServerPlugin, { root: '.' })),
  basicAuthArgon2: thrown(() => withArgon2Hash('ops', 'aGFzaGhhc2g=', 'c2FsdHNhbHRzYWx0')),
  argon2Hash: await argon2Hash('pw').then(() => null, (err) => err),
  smtp: thrown(() => new SmtpSender({ host: '127.0.0.1', from: 'site@example.com' })),
  redisStore: thrown(() => new RedisStateStore('redis://127.0.0.1:1')),
  boltPasskeys: thrown(() => openPasskeyStore('bolt://./data/passkeys.db', 'passkeyStore')),
  redisPasskeys: thrown(() => openPasskeyStore('redis://127.0.0.1:1', 'passkeyStore')),
  boltStore: thrown(() => newStore('bolt://./data/avatars.db'))
}
const seen = (err) => err === null ? null : { name: err.name, code: err.code, option: err.option, message: err.message }
console.log(JSON.stringify(Object.fromEntries(Object.entries(errors).map(([k, err]) => [k, seen(err)]))))
`

// With every driver installed: each feature at work against real peers (REDIS_URL, SMTP_PORT, PICTURE_URL).
const DRIVERS = `
import Fastify from 'fastify'
import { existsSync } from 'node:fs'
import authPlugin, { directProvider, passkeyProvider, SmtpSender } from 'fastify-gatehouse'
import { argon2Hash, argon2Verify, decodeArgon2Secret, fileServerPlugin, withArgon2Hash } from 'fastify-gatehouse/toolkit'
import { openStateStore } from 'fastify-gatehouse/stores'
${CLIENT}
const secret = () => process.env.AUTH_SECRET
const out = {}
${PIC_PROVIDER}
const app = Fastify()
// Passkeys are bound to a domain name (the RP id), not to an address.
await app.register(authPlugin, { secret, url: 'http://localhost:8080', stateStore: process.env.REDIS_URL, avatar: { store: 'bolt://./data/avatars.db', fetch: { allowPrivate: true, loginWait: '10s' } }, providers: [PIC] })
await app.register(directProvider, { name: 'local', checker: async (user, passwd) => user === 'alice' && passwd === 'alice-pw' })
await app.register(passkeyProvider, { store: 'bolt://./data/passkeys.db' })
app.get('/api/me', { preHandler: app.auth.authenticate }, async (request) => request.user)
await app.listen({ port: 0, host: '127.0.0.1' })
const base = 'http://127.0.0.1:' + app.server.address().port
out.signIn = await signInAndCall(base)
const { cookie, xsrf } = await signIn(base)
const options = await fetch(base + '/auth/passkey/register/options', { method: 'POST', headers: { cookie, 'x-xsrf-token': xsrf, 'content-type': 'application/json' }, body: '{}' })
out.passkeyOptions = { status: options.status, body: await options.json() }
const link = (await (await fetch(base + '/auth/pic/login')).json()).picture
const picture = Buffer.from(await (await fetch(base + new URL(link).pathname)).arrayBuffer())
out.picture = { png: picture.subarray(1, 4).toString(), width: picture.readUInt32BE(16), height: picture.readUInt32BE(20) }
await app.close()
out.files = ['./data/avatars.db', './data/passkeys.db'].filter((f) => existsSync(f))

const { store } = await openStateStore(process.env.REDIS_URL, 'stateStore')
out.redisOnce = [await store.setIfAbsent('scratch', 'v', 60_000), await store.setIfAbsent('scratch', 'v', 60_000)]
await store.close()

const { hash, salt } = await argon2Hash('ops-pw', { memoryCost: 1024 })
const stored = decodeArgon2Secret(hash, salt, { memoryCost: 1024 })
out.argon2 = [await argon2Verify('ops-pw', stored), await argon2Verify('wrong', stored)]
const web = Fastify()
web.get('/ops', { onRequest: withArgon2Hash('ops', hash, salt, { memoryCost: 1024 }) }, async () => 'ops ok')
await web.register(fileServerPlugin, { root: './public', prefix: '/static' })
const basic = (pw) => ({ authorization: 'Basic ' + Buffer.from('ops:' + pw).toString('base64') })
const ops = await web.inject({ url: '/ops', headers: basic('ops-pw') })
const file = await web.inject('/static/hello.txt')
out.web = { ops: [ops.statusCode, ops.body], wrong: (await web.inject({ url: '/ops', headers: basic('wrong') })).statusCode, file: [file.statusCode, file.body] }
await web.close()

const smtp = new SmtpSender({ host: '127.0.0.1', port: Number(process.env.SMTP_PORT), from: 'site@example.com' })
await smtp.send('bob@example.com', 'your code: 1234')
smtp.close()

const mongo = Fastify()
await mongo.register(authPlugin, { secret, url: 'http://127.0.0.1', avatar: { store: 'mongodb://127.0.0.1:1/app' } })
await mongo.ready()
await mongo.close()
out.mongoRegistered = true
console.log(JSON.stringify(out))
`

/**
 * Fastify habits from the tarball (issue 23): @fastify/auth and @fastify/swagger registered beside the package
 * (the app's API renamed with decoratorName), a server-rendered page that sees the signed-in user on a same-origin
 * navigation (xsrf.navigation), guards as onRequest hooks, and the testing helper signIn.
 */
const HABITS = `import Fastify from 'fastify'
import fastifyAuth from '@fastify/auth'
import swagger from '@fastify/swagger'
import authPlugin from 'fastify-gatehouse'
import { signIn } from 'fastify-gatehouse/testing'
const out = {}
const app = Fastify()
await app.register(swagger, { openapi: { info: { title: 'scratch', version: '1.0.0' } } })
await app.register(fastifyAuth)
await app.register(authPlugin, {
  secret: process.env.AUTH_SECRET,
  url: 'http://localhost',
  decoratorName: 'gatehouse',
  xsrf: { navigation: true },
  providers: [{ kind: 'direct', name: 'local', checker: async (user, passwd) => user === 'alice' && passwd === 'alice-pw' }]
})
app.get('/page', { onRequest: app.gatehouse.trace }, async (request, reply) => reply.type('text/html').send('<p>' + (request.user?.name ?? 'guest') + '</p>'))
app.get('/api/me', { onRequest: app.auth([app.gatehouse.authenticate]) }, async (request) => ({ name: request.user.name }))
await app.ready()
const login = await app.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'alice', passwd: 'alice-pw' } })
out.login = login.statusCode
const cookie = login.cookies.map((c) => c.name + '=' + c.value).join('; ')
const navigation = { cookie, 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' }
out.page = (await app.inject({ url: '/page', headers: navigation })).body
out.pageCrossSite = (await app.inject({ url: '/page', headers: { ...navigation, 'sec-fetch-site': 'cross-site' } })).body
out.pageNoMetadata = (await app.inject({ url: '/page', headers: { cookie } })).body
out.apiWithoutHeader = (await app.inject({ url: '/api/me', headers: { cookie } })).statusCode
const bob = await signIn(app, { name: 'bob', id: 'local_bob' })
const me = await app.inject({ url: '/api/me', cookies: bob.cookies, headers: bob.headers })
out.signIn = [me.statusCode, me.json()]
out.swaggerPaths = Object.keys(app.swagger().paths).filter((p) => p.startsWith('/auth/')).sort()
await app.close()
console.log(JSON.stringify(out))
`

/** File name → source, written into the scratch app. */
export const APPS: Record<string, string> = {
  'esm-app.mjs': `import Fastify from 'fastify'
import authPlugin, { directProvider } from 'fastify-gatehouse'
import { pingPlugin } from 'fastify-gatehouse/toolkit'
${CLIENT}
const app = Fastify()
await app.register(pingPlugin)
${SETUP}`,
  'cjs-app.cjs': `const Fastify = require('fastify')
const { authPlugin, directProvider } = require('fastify-gatehouse')
const { pingPlugin } = require('fastify-gatehouse/toolkit')
${CLIENT}
async function main () {
  const app = Fastify()
  await app.register(pingPlugin)
${SETUP}}
main().catch((err) => { console.error(err); process.exit(1) })`,
  // The README tutorial as written, started without AUTH_SECRET.
  'tutorial.mjs': TUTORIAL,
  'avatar.mjs': AVATAR,
  'missing.mjs': MISSING,
  'drivers.mjs': DRIVERS,
  'habits.mjs': HABITS,
  'public/hello.txt': 'hello from the file server'
}
