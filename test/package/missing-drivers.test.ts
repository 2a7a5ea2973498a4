/**
 * Each feature that needs an optional driver, configured while that driver looks uninstalled (the loader's
 * resolution is told to miss it): the error comes at configuration, names the option the user set and the
 * `npm i` line, and nothing is left running. Without sharp, avatars are identicons and no picture is fetched.
 * scratch-app.test.ts shows the same with the drivers really absent from node_modules.
 */
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { PassThrough } from 'node:stream'
import { driverResolution, installCommand, type DriverName } from '../../lib/optional-driver.js'
import { openStateStore, RedisStateStore } from '../../stores/state/index.js'
import { authPlugin, passkeyProvider, samlProvider, SmtpSender } from '../../index.js'
import { argon2Hash, corsPlugin, fileServerPlugin, secureHeadersPlugin, withArgon2Hash } from '../../toolkit.js'
import { GridFsStore, newStore, openPasskeyStore } from '../../stores/index.js'
import { runHashCli } from '../../plugins/toolkit/hash-cli.js'
import { identiconPng } from '../../plugins/avatar/plugin.js'
import { getAvatar, login, startApp } from '../helpers/avatar-app.js'
import { startPictureServer } from '../helpers/pictures.js'

const hidden = new Set<string>()
const resolve = driverResolution.resolve
driverResolution.resolve = (name) => {
  if (hidden.has(name)) throw Object.assign(new Error(`Cannot find module '${name}'`), { code: 'MODULE_NOT_FOUND' })
  return resolve(name)
}
t.teardown(() => { driverResolution.resolve = resolve })

/** Runs `fn` while `driver` looks uninstalled. */
async function without<T> (driver: DriverName, fn: () => T | Promise<T>): Promise<T> {
  hidden.add(driver)
  try {
    return await fn()
  } finally {
    hidden.delete(driver)
  }
}

/** The error of `fn`, thrown or rejected. */
async function failure (fn: () => unknown): Promise<unknown> {
  try {
    await fn()
  } catch (err) {
    return err
  }
  throw new Error('expected a failure')
}

/** Registers the plugins `setup` adds and readies the app; the registration error. The app is closed. */
async function registration (setup: (app: FastifyInstance) => Promise<unknown>): Promise<unknown> {
  const app = Fastify()
  try {
    return await failure(async () => { await setup(app); await app.ready() })
  } finally {
    await app.close().catch(() => {})
  }
}

const SECRET = (): string => 'missing-drivers-secret-0123456789abcdef'
const core = (extra: Record<string, unknown> = {}) => async (app: FastifyInstance) =>
  await app.register(authPlugin, { secret: SECRET, url: 'http://localhost:8080', ...extra })

/** What the error of a missing `driver` for `option` looks like. */
function missing (option: string, driver: DriverName): Record<string, unknown> {
  const install = installCommand(driver).replace(/[.@/]/g, '\\$&')
  return { name: 'OptionsError', code: 'GATEHOUSE_OPTION', option, message: new RegExp(`option "${option.replace(/\./g, '\\.')}" needs ${driver.replace(/\//g, '\\/')} for .+, and it is not installed: ${install}$`) }
}

t.test('ioredis: the Redis state store and passkey store name the option that gave the address', async (t) => {
  await without('ioredis', async () => {
    t.match(await registration(core({ stateStore: 'redis://127.0.0.1:1' })), missing('stateStore', 'ioredis'), 'root stateStore')
    t.match(await failure(() => openStateStore('redis://127.0.0.1:1', 'telegram.stateStore')), missing('telegram.stateStore', 'ioredis'))
    t.match(await failure(() => new RedisStateStore('redis://127.0.0.1:1')), missing('RedisStateStore', 'ioredis'))
    t.match(await failure(() => openPasskeyStore('redis://127.0.0.1:1', 'passkey.p.store')), missing('passkey.p.store', 'ioredis'))
  })
})

t.test('lmdb and mongodb: the avatar and passkey stores', async (t) => {
  const dir = t.testdir()
  await without('lmdb', async () => {
    t.match(await registration(core({ avatar: { store: `bolt://${dir}/avatars.db` } })), missing('avatar.store', 'lmdb'))
    t.match(await failure(() => openPasskeyStore(`bolt://${dir}/passkeys.db`, 'passkey.p.store')), missing('passkey.p.store', 'lmdb'))
    t.match(await failure(() => newStore(`bolt://${dir}/x.db`)), missing('LmdbStore', 'lmdb'))
  })
  await without('mongodb', async () => {
    t.match(await registration(core({ avatar: { store: 'mongodb://127.0.0.1:1/app' } })), missing('avatar.store', 'mongodb'))
    t.match(await failure(() => GridFsStore.fromAddress('mongodb://127.0.0.1:1/app')), missing('GridFsStore', 'mongodb'))
  })
})

t.test('@simplewebauthn/server: the passkey provider fails at registration', async (t) => {
  await without('@simplewebauthn/server', async () => {
    t.match(await registration(async (app) => { await core()(app); await app.register(passkeyProvider, { name: 'keys' }) }), missing('passkey.keys', '@simplewebauthn/server'))
  })
})

t.test('@node-saml/node-saml: the SAML provider fails at registration, naming its option', async (t) => {
  await without('@node-saml/node-saml', async () => {
    t.match(await registration(async (app) => { await core()(app); await app.register(samlProvider, { name: 'corp', idp: () => undefined }) }), missing('saml.corp', '@node-saml/node-saml'))
  })
})

t.test('nodemailer, @fastify/cors, helmet, @fastify/static, argon2: the sender, cors, secure headers, the file server, the Argon2id helpers and the hash CLI', async (t) => {
  await without('nodemailer', async () => {
    t.match(await failure(() => new SmtpSender({ host: '127.0.0.1', from: 'site@example.com' })), missing('SmtpSender', 'nodemailer'))
  })
  await without('@fastify/cors', async () => {
    t.match(await registration(async (app) => await app.register(corsPlugin, { origins: ['https://app.example.com'] })), missing('cors', '@fastify/cors'))
  })
  await without('helmet', async () => {
    t.match(await registration(async (app) => await app.register(secureHeadersPlugin)), missing('secureHeaders', 'helmet'))
  })
  await without('@fastify/static', async () => {
    t.match(await registration(async (app) => await app.register(fileServerPlugin, { root: t.testdir() })), missing('fileServer', '@fastify/static'))
  })
  await without('argon2', async () => {
    t.match(await failure(() => withArgon2Hash('ops', 'aGFzaGhhc2g=', 'c2FsdHNhbHRzYWx0')), missing('basicAuth.argon2Hash', 'argon2'))
    t.match(await failure(() => argon2Hash('pw')), missing('argon2Hash', 'argon2'))
    // The CLI stops before reading the password: the input is never consumed.
    const stdin = new PassThrough()
    stdin.end('pw\n')
    const out = new PassThrough()
    const err = new PassThrough()
    t.equal(await runHashCli(['hash', '--argon2'], stdin, out, err), 1)
    t.match(String(err.read()), /option "--argon2" needs argon2 for Argon2id password hashes, and it is not installed: npm i argon2@0\.45\n$/)
    t.equal(out.read(), null, 'nothing printed')
    t.equal(String(stdin.read()), 'pw\n', 'the password was not read')
  })
})

t.test('sharp: logins with a picture get the identicon, the picture host is never asked, the log says it once', async (t) => {
  const pictures = await startPictureServer()
  t.teardown(() => pictures.close())
  hidden.add('sharp')
  t.teardown(() => { hidden.delete('sharp') })
  const { app, base, lines } = await startApp({ fetch: { allowPrivate: true } })
  t.teardown(() => app.close())
  for (const user of ['ann', 'ben']) {
    const { res, body } = await login(base, user, `${pictures.base}/photo.jpg`)
    t.equal(res.status, 200, `${user} signs in`)
    const served = await getAvatar(base, body.picture!)
    t.equal(served.headers.get('content-type'), 'image/png')
    t.same(Buffer.from(await served.arrayBuffer()), await identiconPng(body.id), `${user}: the identicon`)
  }
  t.same(pictures.requests, [], 'no picture fetched')
  t.equal(lines.filter((l) => l.includes('need sharp')).length, 1, 'told once')
})
