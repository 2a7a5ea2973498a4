/**
 * The TOTP stores (memory, lmdb file, a real redis-server) keep one contract: an enrolment counts once confirmed,
 * a confirmed one is not replaced, recovery codes are spent once and replaced whole, removal takes both, the key
 * check is kept once. And a key that does not open a store's secrets stops the start.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import { authPlugin, totpProvider } from '../../../index.js'
import { LmdbTotpStore, MemoryTotpStore, openTotpStore, RedisTotpStore, TotpStoreError, type TotpStore } from '../../../stores/totp/index.js'
import { RedisServer, redisMissingReason } from '../../helpers/redis-server.js'
import { KEY, OTHER_KEY, SECRET } from '../../helpers/totp-app.js'

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-totp-stores-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
let redis: RedisServer | undefined
const missing = redisMissingReason()
if (missing === undefined) {
  redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis!.stop())
}

let n = 0
const kinds: Array<[string, () => TotpStore]> = [
  ['memory', () => new MemoryTotpStore()],
  ['lmdb', () => new LmdbTotpStore(join(dir, `totp-${n++}.db`))],
  ['redis', () => new RedisTotpStore(redis!.url, { keyPrefix: `t${n++}:` })]
]

for (const [kind, open] of kinds) {
  t.test(`${kind} store`, kind === 'redis' && missing !== undefined ? { skip: missing } : {}, async (t) => {
    const store = open()
    t.teardown(() => store.close())
    t.equal(await store.get('u1'), undefined)
    t.equal(await store.enrol('u1', { secret: 's1', confirmed: true, created: 1 }), true)
    t.same(await store.get('u1'), { secret: 's1', confirmed: false, created: 1 }, 'an enrolment begins unconfirmed')
    t.equal(await store.enrol('u1', { secret: 's2', confirmed: false, created: 2 }), true, 'an unconfirmed one is replaced')
    t.equal(await store.confirm('u1', 's1', ['h1']), false, 'not the stored secret')
    t.equal(await store.confirm('u1', 's2', ['h1', 'h2', 'h3']), true)
    t.equal(await store.confirm('u1', 's2', ['x']), false, 'confirmed once')
    t.same(await store.get('u1'), { secret: 's2', confirmed: true, created: 2 })
    t.equal(await store.enrol('u1', { secret: 's3', confirmed: false, created: 3 }), false, 'a confirmed one is kept')
    t.equal(await store.recoveryLeft('u1'), 3)
    t.equal(await store.useRecovery('u1', 'h2'), 2)
    t.equal(await store.useRecovery('u1', 'h2'), -1, 'spent once')
    t.equal(await store.useRecovery('u2', 'h1'), -1, 'another user has none')
    const both = await Promise.all([store.useRecovery('u1', 'h1'), store.useRecovery('u1', 'h1')])
    t.same(both.sort(), [-1, 1], 'two spends of one code: one wins')
    await store.setRecovery('u1', ['n1', 'n2'])
    t.equal(await store.useRecovery('u1', 'h3'), -1, 'replaced whole')
    t.equal(await store.recoveryLeft('u1'), 2)
    t.equal(await store.remove('u1'), true)
    t.equal(await store.remove('u1'), false)
    t.equal(await store.get('u1'), undefined)
    t.equal(await store.recoveryLeft('u1'), 0)
    t.equal(await store.keyCheck('k1'), 'k1')
    t.equal(await store.keyCheck('k2'), 'k1', 'the first key check is kept')
    await t.rejects(store.get(''), TypeError)
  })
}

// Wrapped: a Fastify instance is thenable, and awaiting it would start it.
async function app (store: TotpStore | string, key: string): Promise<{ a: ReturnType<typeof Fastify> }> {
  const a = Fastify()
  await a.register(authPlugin, { secret: () => SECRET, url: 'http://localhost:8080', providers: [{ kind: 'direct', name: 'local', checker: () => true }] })
  a.register(totpProvider, { encryptionKey: key, store, secondFactor: ['local'] })
  return { a }
}

async function wrongKeyRefused (t: Test, store: () => TotpStore | string): Promise<void> {
  const { a: first } = await app(store(), KEY)
  await first.ready()
  await first.close()
  const { a: second } = await app(store(), OTHER_KEY)
  await t.rejects(second.ready(), { code: 'GATEHOUSE_OPTION', option: 'totp.encryptionKey', message: /not the key they were sealed with/ })
  await second.close().catch(() => {}) // closing a server whose start failed rethrows the failure
  const { a: third } = await app(store(), KEY)
  await third.ready()
  await third.close()
  t.pass('the right key starts again')
}

t.test('a wrong key is refused at startup (memory store object)', async (t) => {
  const store = new MemoryTotpStore()
  await wrongKeyRefused(t, () => store)
})

t.test('a wrong key is refused at startup (lmdb file)', async (t) => {
  const file = `bolt://${join(dir, 'keys.db')}`
  await wrongKeyRefused(t, () => file)
})

t.test('a wrong key is refused at startup (redis)', missing !== undefined ? { skip: missing } : {}, async (t) => {
  await wrongKeyRefused(t, () => `${redis!.url}`)
})

t.test('options: key, store address, algorithm, digits', async (t) => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{}, 'totp.encryptionKey'],
    [{ encryptionKey: 'short' }, 'totp.encryptionKey'],
    [{ encryptionKey: KEY, store: 'ftp://x' }, 'totp.store'],
    [{ encryptionKey: KEY, store: 42 }, 'totp.store'],
    [{ encryptionKey: KEY, algorithm: 'MD5' }, 'totp.algorithm'],
    [{ encryptionKey: KEY, digits: 7 }, 'totp.digits'],
    [{ encryptionKey: KEY, period: 5 }, 'totp.period'],
    [{ encryptionKey: KEY, secondFactor: ['nobody'] }, 'totp.secondFactor']
  ]
  for (const [opts, option] of cases) {
    const a = Fastify()
    await a.register(authPlugin, { secret: () => SECRET, url: 'http://localhost:8080', providers: [{ kind: 'direct', name: 'local', checker: () => true }] })
    a.register(totpProvider, opts as never)
    await t.rejects(a.ready(), { code: 'GATEHOUSE_OPTION', option }, option)
    await a.close()
  }
  t.throws(() => openTotpStore('bolt://', 'x'), { option: 'x' })
})

t.test('the key error says how the key was read, how many bytes it gave and how to make one; a named provider is named once', async (t) => {
  const make = 'make one with `openssl rand -base64 32`'
  const cases: Array<[Record<string, unknown>, string, string]> = [
    [{}, 'totp.encryptionKey', `is required: 32 random bytes as base64 (or 64 hex characters, or a Buffer); ${make}`],
    [{ encryptionKey: 'short' }, 'totp.encryptionKey', `is read as base64 and gives 3 bytes, but an AES-256 key is 32 bytes; ${make}`],
    [{ encryptionKey: Buffer.alloc(16).toString('base64') }, 'totp.encryptionKey', `is read as base64 and gives 16 bytes, but an AES-256 key is 32 bytes; ${make}`],
    [{ encryptionKey: 'a1'.repeat(16) }, 'totp.encryptionKey', `is read as base64 and gives 24 bytes, but an AES-256 key is 32 bytes (hex is read as hex only at 64 characters); ${make}`],
    [{ encryptionKey: 'my totp key!' }, 'totp.encryptionKey', `is read as base64 (or as hex when it is 64 hex characters), and this is neither: it has characters outside the base64 alphabet; ${make}`],
    [{ encryptionKey: Buffer.alloc(31) }, 'totp.encryptionKey', `is a Buffer of 31 bytes, but an AES-256 key is 32 bytes; ${make}`],
    [{ encryptionKey: 32 }, 'totp.encryptionKey', `must be a base64 string of 32 random bytes (or a Buffer), got number; ${make}`],
    [{ name: 'work', encryptionKey: 'short' }, 'totp.work.encryptionKey', `is read as base64 and gives 3 bytes, but an AES-256 key is 32 bytes; ${make}`]
  ]
  for (const [opts, option, message] of cases) {
    const a = Fastify()
    await a.register(authPlugin, { secret: () => SECRET, url: 'http://localhost:8080' })
    a.register(totpProvider, opts as never)
    await t.rejects(a.ready(), { code: 'GATEHOUSE_OPTION', option, message: `fastify-gatehouse: option "${option}" ${message}` }, message)
    await a.close()
  }
  for (const key of [`${randomBytes(32).toString('base64')}\n`, randomBytes(32).toString('base64url'), randomBytes(32).toString('hex').toUpperCase(), randomBytes(32)]) {
    const a = Fastify()
    t.teardown(() => a.close())
    await a.register(authPlugin, { secret: () => SECRET, url: 'http://localhost:8080' })
    await a.register(totpProvider, { encryptionKey: key, qrCode: false })
    await t.resolves(a.ready(), `a key as ${typeof key === 'string' ? 'text' : 'a Buffer'} opens`)
  }
})

t.test('a Redis store that cannot answer is a 503 TotpStoreError', missing !== undefined ? { skip: missing } : {}, async (t) => {
  const store = new RedisTotpStore('redis://127.0.0.1:1/0', { commandTimeout: 200 } as never)
  t.teardown(() => store.close())
  await t.rejects(store.get('u1'), TotpStoreError)
  await t.rejects(store.get('u1'), { statusCode: 503, code: 'GATEHOUSE_UNAVAILABLE' })
})

t.test('qrCode: false answers the URI without a QR code (the page draws it)', async (t) => {
  const a = Fastify()
  t.teardown(() => a.close())
  await a.register(authPlugin, { secret: () => SECRET, url: 'http://localhost:8080', providers: [{ kind: 'direct', name: 'local', checker: () => true }] })
  await a.register(totpProvider, { encryptionKey: KEY, qrCode: false })
  const login = await a.inject({ method: 'POST', url: '/auth/local/login', payload: { user: 'alice', passwd: 'x' } })
  const cookies = Object.fromEntries(login.cookies.map((c) => [c.name, c.value]))
  const res = await a.inject({ method: 'POST', url: '/auth/totp/enrol', cookies, headers: { 'x-xsrf-token': cookies['XSRF-TOKEN']! }, payload: {} })
  t.equal(res.statusCode, 201)
  const body = res.json() as Record<string, unknown>
  t.match(body, { uri: /^otpauth:\/\/totp\//, secret: /^[A-Z2-7]{32}$/ })
  t.notOk('qr' in body)
})

t.test('a missing otpauth or qrcode stops the registration with the npm i line', async (t) => {
  const { driverResolution } = await import('../../../lib/optional-driver.js')
  const real = driverResolution.resolve
  t.teardown(() => { driverResolution.resolve = real })
  const cases = [
    [['qrcode'], true, 'needs qrcode for authenticator-app codes and their enrolment QR code (qrCode: false needs no qrcode), and it is not installed: npm i qrcode@1'],
    [['otpauth'], false, 'needs otpauth for authenticator-app codes, and it is not installed: npm i otpauth@9'],
    [['otpauth', 'qrcode'], true, 'needs otpauth and qrcode for authenticator-app codes and their enrolment QR code (qrCode: false needs no qrcode), and they are not installed: npm i otpauth@9 qrcode@1'],
    [['otpauth', 'qrcode'], false, 'needs otpauth for authenticator-app codes, and it is not installed: npm i otpauth@9']
  ] as const
  for (const [missingNames, qrCode, message] of cases) {
    driverResolution.resolve = (name) => { if ((missingNames as readonly string[]).includes(name)) throw Object.assign(new Error('nope'), { code: 'MODULE_NOT_FOUND' }); return real(name) }
    const a = Fastify()
    await a.register(authPlugin, { secret: () => SECRET, url: 'http://localhost:8080' })
    a.register(totpProvider, { encryptionKey: KEY, qrCode })
    await t.rejects(a.ready(), { code: 'GATEHOUSE_OPTION', option: 'totp', message: `fastify-gatehouse: option "totp" ${message}` }, `${missingNames.join(' and ')} missing, qrCode ${qrCode}`)
    await a.close().catch(() => {})
  }
})

t.test('store addresses, and a corrupt record is a 503 (never an enrolment)', async (t) => {
  const opened = openTotpStore('memory://', 'store')
  t.ok(opened.store instanceof MemoryTotpStore)
  t.equal(opened.owned, true)
  const given = new MemoryTotpStore()
  t.same(openTotpStore(given, 'store'), { store: given, owned: false })
  t.throws(() => openTotpStore('not an address', 'store'), { option: 'store', message: /not an address/ })
  if (redis === undefined) return
  const store = new RedisTotpStore(redis.url, { keyPrefix: 'corrupt:' })
  t.teardown(() => store.close())
  for (const text of ['{not json', '{"secret": 1}', 'null']) {
    await store.client.set('corrupt:totp:{u1}:e', text)
    await t.rejects(store.get('u1'), { statusCode: 503, code: 'GATEHOUSE_UNAVAILABLE', name: 'TotpStoreError' }, text)
  }
})
