/**
 * The small apps scratch-app.test.ts writes into the folder where the packed package is installed. Each is a
 * user's program as written against the published package (plain JavaScript, no test helpers), and prints one
 * JSON line of what it saw for the test to check.
 */

import { readFileSync } from 'node:fs'
import { codeBlocks, root, tutorialBlocks } from '../docs/pages.js'
import { join } from 'node:path'

/**
 * The README's five-minute tutorial, its blocks as written: the setup and run commands, `app.ts`, and the
 * registration that makes alice an admin. The test writes them unchanged but for the port (8080 may be taken on a
 * shared machine: the test's free port replaces it, in `url` and `listen` alike).
 */
export const TUTORIAL = tutorialBlocks()

/** The tutorial's `app.ts` on another port. */
export function tutorialApp (port: number, app = TUTORIAL.app): string {
  if (app.split('8080').length !== 3) throw new Error('the tutorial names port 8080 twice (url and listen)')
  return app.replaceAll('8080', String(port))
}

/** The tutorial with the README's admin registration in place of its own `authPlugin` registration. */
export function tutorialAdminApp (port: number): string {
  const own = /^await app\.register\(authPlugin, \{\n[\s\S]*?^\}\)\n/m
  if (!own.test(TUTORIAL.app)) throw new Error('the tutorial registers authPlugin in a block of its own')
  return tutorialApp(port, TUTORIAL.app.replace(own, TUTORIAL.admin))
}

/**
 * The commands of the tutorial's run block: the lines that make `.env` (run by a shell as written) and the start
 * command for Node 22.18 and later and for 22.12 to 22.17 (from its comment).
 */
export function tutorialCommands (): { makeEnv: string; start: string[]; startBefore2218: string[] } {
  const lines = TUTORIAL.run.trimEnd().split('\n')
  const last = lines.at(-1)!
  const m = /^(node [^#]*?)\s+# Node 22\.18 and later; on 22\.12 to 22\.17: (node .+)$/.exec(last)
  if (m === null) throw new Error(`the tutorial's start line says which command for which Node: ${last}`)
  return { makeEnv: lines.slice(0, -1).join('\n'), start: m[1]!.split(' ').slice(1), startBefore2218: m[2]!.split(' ').slice(1) }
}

/**
 * docs/guide/testing.md's testable app, its blocks as written, by the file each names in its first line
 * (`// app.ts: …`): `app.ts`, `server.ts`, `app.test.ts`.
 */
export const TESTING_FILES: Record<string, string> = Object.fromEntries(codeBlocks(readFileSync(join(root, 'docs/guide/testing.md'), 'utf8'), 'The shape of a testable app')
  .filter((b) => b.lang === 'ts').map((b) => [/^\/\/ ([\w.-]+\.ts):/.exec(b.code)?.[1] ?? '(unnamed)', b.code]))

/**
 * Examples the package test runs (and type-checks with `tsc --init`'s configuration) as they are written in their
 * page: test/docs/readme-examples.test.ts counts their lines as tested.
 */
export const RUN_AS_WRITTEN: string[] = Object.values(TESTING_FILES)

/** The options of an app that reads them from the environment, compiled with `tsc --init`'s configuration. */
export const ENV_OPTIONS = `import Fastify from 'fastify'
import authPlugin from 'fastify-gatehouse'

const app = Fastify()
await app.register(authPlugin, {
  secret: process.env.AUTH_SECRET!,
  url: 'http://localhost:8080',
  stateStore: process.env.REDIS_URL,
  cookies: { domain: process.env.COOKIE_DOMAIN },
  avatar: { store: process.env.AVATAR_STORE }
})
`

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
import authPlugin from 'fastify-gatehouse'
import { funcLogger } from 'fastify-gatehouse/compat'
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
import authPlugin, { passkeyProvider, totpProvider } from 'fastify-gatehouse'
import { SmtpSender } from 'fastify-gatehouse/providers'
import { argon2Hash, corsPlugin, fileServerPlugin, secureHeadersPlugin, withArgon2Hash } from 'fastify-gatehouse/toolkit'
import { openAvatarStore, openPasskeyStore, RedisStateStore } from 'fastify-gatehouse/stores'
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
  cors: await registration((app) => app.register(corsPlugin, { origins: ['https://app.example.com'] })),
  secureHeaders: await registration((app) => app.register(secureHeadersPlugin)),
  basicAuthArgon2: thrown(() => withArgon2Hash('ops', 'aGFzaGhhc2g=', 'c2FsdHNhbHRzYWx0')),
  argon2Hash: await argon2Hash('pw').then(() => null, (err) => err),
  smtp: thrown(() => new SmtpSender({ host: '127.0.0.1', from: 'site@example.com' })),
  redisStore: thrown(() => new RedisStateStore('redis://127.0.0.1:1')),
  boltPasskeys: thrown(() => openPasskeyStore('bolt://./data/passkeys.db', 'passkeyStore')),
  redisPasskeys: thrown(() => openPasskeyStore('redis://127.0.0.1:1', 'passkeyStore')),
  boltStore: thrown(() => openAvatarStore('bolt://./data/avatars.db'))
}
const seen = (err) => err === null ? null : { name: err.name, code: err.code, option: err.option, message: err.message }
console.log(JSON.stringify(Object.fromEntries(Object.entries(errors).map(([k, err]) => [k, seen(err)]))))
`

// With every driver installed: each feature at work against real peers (REDIS_URL, SMTP_PORT, PICTURE_URL).
const DRIVERS = `
import Fastify from 'fastify'
import { existsSync } from 'node:fs'
import authPlugin, { directProvider, passkeyProvider } from 'fastify-gatehouse'
import { SmtpSender } from 'fastify-gatehouse/providers'
import { argon2Hash, argon2Verify, corsPlugin, decodeArgon2Secret, fileServerPlugin, secureHeadersPlugin, withArgon2Hash } from 'fastify-gatehouse/toolkit'
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
const headed = Fastify()
await headed.register(corsPlugin, { origins: ['https://app.example.com'], credentials: true })
await headed.register(secureHeadersPlugin)
headed.get('/h', async () => 'h')
const h = await headed.inject({ url: '/h', headers: { origin: 'https://app.example.com' } })
out.headed = [h.headers['access-control-allow-origin'], h.headers['x-content-type-options']]
await headed.close()

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
  'avatar.mjs': AVATAR,
  'missing.mjs': MISSING,
  'drivers.mjs': DRIVERS,
  'habits.mjs': HABITS,
  'public/hello.txt': 'hello from the file server'
}
