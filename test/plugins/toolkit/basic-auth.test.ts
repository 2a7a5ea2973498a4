import t from 'tap'
import Fastify from 'fastify'
import { injectApp } from '../../helpers/app.js'
import {
  basicAuth, basicAuthPlugin, parseBasicCredentials, withArgon2Hash, withBcryptHash, withPrompt, withUserPasswd
} from '../../../plugins/toolkit/basic-auth.js'
import { argon2Hash, bcryptHash } from '../../../plugins/toolkit/password-hash.js'

const b64 = (s: string | Buffer): string => Buffer.from(s).toString('base64')
const basic = (user: string, passwd: string): string => `Basic ${b64(`${user}:${passwd}`)}`
const UNI_USER = 'jürgen'
const UNI_PASS = 'pässwörd✓:with:colons'
const REFUSED = { error: 'forbidden', details: 'invalid credentials', code: 'GATEHOUSE_CREDENTIALS' }

t.test('basic auth variants over HTTP', async (t) => {
  const bcrypt = await bcryptHash('bcrypt-secret', 4)
  const argon = await argon2Hash('argon-secret')
  const checked: string[] = []
  const { app, base, fetch } = await injectApp(async (app) => {
    const show = async (req: { basicAuthorized?: boolean, user?: unknown }): Promise<unknown> => ({ authorized: req.basicAuthorized ?? null, user: req.user ?? null })
    app.get('/fixed', { onRequest: withUserPasswd('admin', 'admin-secret') }, show)
    app.get('/uni', { onRequest: withUserPasswd(UNI_USER, UNI_PASS) }, show)
    app.get('/prompt', { onRequest: withPrompt('admin', 'admin-secret', 'Gate house') }, show)
    app.get('/bcrypt', { preHandler: withBcryptHash('admin', bcrypt) }, show)
    app.get('/argon', { onRequest: withArgon2Hash('admin', argon.hash, argon.salt) }, show)
    app.get('/checker', {
      onRequest: basicAuth(async (user, passwd, req) => {
        checked.push(`${user}:${passwd}:${req.method}`)
        return user === 'bob' && passwd === 'pw' ? { ok: true, user: { name: 'bob', id: 'basic_bob' } } : false
      })
    }, show)
  })
  t.teardown(() => app.close())
  const get = (path: string, authorization?: string): Promise<Response> =>
    fetch(base + path, { headers: authorization === undefined ? {} : { authorization } })

  let r = await get('/fixed')
  t.equal(r.status, 401)
  t.equal(r.headers.get('www-authenticate'), null, 'no prompt for the plain variant')
  t.same(await r.json(), { error: 'unauthorized', details: 'basic auth credentials required', code: 'GATEHOUSE_UNAUTHORIZED' })

  r = await get('/fixed', basic('admin', 'admin-secret'))
  t.equal(r.status, 200)
  t.same(await r.json(), { authorized: true, user: null })
  r = await get('/fixed', `bAsIc   ${b64('admin:admin-secret')}`)
  t.equal(r.status, 200, 'scheme is case-insensitive, extra spaces allowed')

  for (const [user, pass] of [['admin', 'wrong'], ['root', 'admin-secret'], ['admin', 'admin-secret '], ['admin', '']]) {
    r = await get('/fixed', basic(user!, pass!))
    t.equal(r.status, 403, `${user}:${pass} refused`)
    t.same(await r.json(), REFUSED)
  }
  r = await get('/fixed', basic('', 'admin-secret'))
  t.equal(r.status, 403, 'empty user refused')
  t.same(await r.json(), REFUSED)

  const malformed: Array<[string, RegExp]> = [
    ['Basic !!!!', /not valid base64/],
    [`Basic ${b64('admin:admin-secre').replace(/=+$/, '')}`, /not valid base64/], // padding missing
    ['Basic YWRt aW4=', /not valid base64/],
    ['Basic ', /not valid base64/],
    ['Basic', /not valid base64/],
    [`Basic ${b64('admin-no-colon')}`, /no colon/],
    [`Basic ${b64(Buffer.from([0xff, 0xfe, 0x3a, 0x61]))}`, /not valid UTF-8/]
  ]
  for (const [header, re] of malformed) {
    r = await get('/fixed', header)
    t.equal(r.status, 401, `malformed: ${JSON.stringify(header)}`)
    const body = await r.json() as { details: string, code: string }
    t.match(body.details, re)
    t.equal(body.code, 'GATEHOUSE_UNAUTHORIZED')
  }
  for (const header of ['Bearer abc', 'Basicx YWJj', 'Digest username="a"']) {
    r = await get('/fixed', header)
    t.equal(r.status, 401, `other scheme: ${header}`)
    t.same(await r.json(), { error: 'unauthorized', details: 'basic auth credentials required', code: 'GATEHOUSE_UNAUTHORIZED' })
  }

  r = await get('/uni', basic(UNI_USER, UNI_PASS))
  t.equal(r.status, 200, 'unicode credentials (UTF-8) and colons in the password')
  r = await get('/uni', basic(UNI_USER.normalize('NFD'), UNI_PASS.normalize('NFD')))
  t.equal(r.status, 200, 'decomposed form of the same characters is the same credential')
  r = await get('/uni', `Basic ${Buffer.from(`${UNI_USER}:${UNI_PASS}`, 'latin1').toString('base64')}`)
  t.equal(r.status, 401, 'latin1 bytes are not UTF-8')

  r = await get('/prompt')
  t.equal(r.status, 401)
  t.equal(r.headers.get('www-authenticate'), 'Basic realm="Gate house", charset="UTF-8"')
  t.same(await r.json(), { error: 'unauthorized', details: 'basic auth credentials required', code: 'GATEHOUSE_UNAUTHORIZED' })
  r = await get('/prompt', basic('admin', 'nope'))
  t.equal(r.status, 403)
  t.equal(r.headers.get('www-authenticate'), null, 'no new prompt for wrong credentials')
  t.same(await r.json(), REFUSED)
  r = await get('/prompt', basic('admin', 'admin-secret'))
  t.equal(r.status, 200)

  r = await get('/bcrypt', basic('admin', 'bcrypt-secret'))
  t.equal(r.status, 200, 'bcrypt')
  r = await get('/bcrypt', basic('admin', 'bcrypt-secreT'))
  t.equal(r.status, 403)
  t.same(await r.json(), REFUSED)
  r = await get('/bcrypt', basic('admin', 'bcrypt-secret' + 'x'.repeat(80)))
  t.equal(r.status, 403, 'over-long password is not truncated into a match')
  r = await get('/bcrypt', basic('other', 'bcrypt-secret'))
  t.equal(r.status, 403)

  r = await get('/argon', basic('admin', 'argon-secret'))
  t.equal(r.status, 200, 'argon2id')
  r = await get('/argon', basic('admin', 'argon-secreT'))
  t.equal(r.status, 403)
  t.same(await r.json(), REFUSED)
  r = await get('/argon')
  t.equal(r.status, 401)

  r = await get('/checker', basic('bob', 'pw'))
  t.same(await r.json(), { authorized: true, user: { name: 'bob', id: 'basic_bob' } }, 'checker user lands in request.user')
  r = await get('/checker', basic('bob', 'nope'))
  t.equal(r.status, 403)
  t.same(await r.json(), REFUSED)
  r = await get('/checker', basic('', 'pw'))
  t.equal(r.status, 403)
  t.same(checked, ['bob:pw:GET', 'bob:nope:GET'], 'checker never sees an empty user')
})

t.test('fixed credentials: the exact header is accepted as bytes, every other spelling goes through the parser', async (t) => {
  const app = Fastify()
  app.get('/fixed', { onRequest: withUserPasswd('admin', 'admin-secret') }, async (req) => ({ authorized: req.basicAuthorized ?? null }))
  app.get('/uni', { onRequest: withUserPasswd(UNI_USER, UNI_PASS) }, async (req) => ({ authorized: req.basicAuthorized ?? null }))
  t.teardown(() => app.close())
  const get = async (url: string, authorization: string): Promise<{ status: number, body: unknown }> => {
    const r = await app.inject({ url, headers: { authorization } })
    return { status: r.statusCode, body: r.json() }
  }
  const exact = basic('admin', 'admin-secret')
  t.same(await get('/fixed', exact), { status: 200, body: { authorized: true } })
  t.same(await get('/uni', basic(UNI_USER, UNI_PASS)), { status: 200, body: { authorized: true } }, 'non-ASCII credentials')
  // Characters above U+00FF whose low byte is the expected ASCII byte: a latin1 copy would turn the header into
  // the exact one. Only in-process callers (inject, another plugin) can hand such a string over.
  for (const i of [0, 6, exact.length - 1]) {
    const forged = exact.slice(0, i) + String.fromCharCode(exact.charCodeAt(i) + 0x100) + exact.slice(i + 1)
    const r = await get('/fixed', forged)
    t.equal(r.status, 401, `wide character at ${i} is not its low byte`)
    t.equal((r.body as { code: string }).code, 'GATEHOUSE_UNAUTHORIZED')
  }
  const refused = [
    basic('admin', 'admin-secreT'), // same length, last character differs
    basic('admiN', 'admin-secret'),
    `${exact}A`, exact.slice(0, -1), `${exact} x`
  ]
  for (const header of refused) {
    const r = await get('/fixed', header)
    t.ok(r.status === 401 || r.status === 403, `refused: ${header}`)
    t.not((r.body as { authorized?: unknown }).authorized, true)
  }
})

t.test('plugin form is scoped and validates its options', async (t) => {
  const { app, base, fetch } = await injectApp(async (app) => {
    await app.register(async (scope) => {
      await scope.register(basicAuthPlugin, { user: 'admin', passwd: 'pw', realm: 'admin area' })
      scope.get('/inside', async (req) => ({ authorized: req.basicAuthorized }))
    })
    app.get('/outside', async (req) => ({ authorized: req.basicAuthorized ?? null }))
  })
  t.teardown(() => app.close())
  let r = await fetch(`${base}/inside`)
  t.equal(r.status, 401)
  t.equal(r.headers.get('www-authenticate'), 'Basic realm="admin area", charset="UTF-8"')
  r = await fetch(`${base}/inside`, { headers: { authorization: basic('admin', 'pw') } })
  t.same(await r.json(), { authorized: true })
  r = await fetch(`${base}/outside`)
  t.same(await r.json(), { authorized: null })

  const bad: Array<[object, string]> = [
    [{}, 'basicAuth.checker'],
    [{ user: 'a', passwd: 'b', bcryptHash: '$2b$04$' + 'a'.repeat(53) }, 'basicAuth.checker'],
    [{ passwd: 'b' }, 'basicAuth.user'],
    [{ user: '', passwd: 'b' }, 'basicAuth.user'],
    [{ user: 'a:b', passwd: 'b' }, 'basicAuth.user'],
    [{ user: 'a', passwd: '' }, 'basicAuth.passwd'],
    [{ user: 'a', bcryptHash: 'plain' }, 'basicAuth.bcryptHash'],
    [{ user: 'a', argon2Hash: 'not base64!', argon2Salt: b64('saltsalt') }, 'basicAuth.argon2Hash'],
    [{ user: 'a', argon2Hash: b64('hashhashhash'), argon2Salt: b64('short') }, 'basicAuth.argon2Salt'],
    [{ user: 'a', argon2Hash: b64('hashhashhash') }, 'basicAuth.argon2Salt'],
    [{ user: 'a', argon2Hash: b64('hashhashhash'), argon2Salt: b64('saltsalt'), argon2Params: { memoryCost: 1 } }, 'basicAuth.argon2Params.memoryCost'],
    [{ user: 'a', argon2Hash: b64('hashhashhash'), argon2Salt: b64('saltsalt'), argon2Params: 'fast' }, 'basicAuth.argon2Params'],
    [{ checker: 'yes' }, 'basicAuth.checker'],
    [{ user: 'a', passwd: 'b', realm: 'say "hi"' }, 'basicAuth.realm'],
    [{ user: 'a', passwd: 'b', stage: 'onSend' }, 'basicAuth.stage']
  ]
  for (const [opts, option] of bad) {
    const a = Fastify()
    a.register(basicAuthPlugin, opts)
    await t.rejects(async () => { await a.ready() }, { name: 'OptionsError', code: 'GATEHOUSE_OPTION', option }, JSON.stringify(opts))
    await a.close()
  }
  const option = (name: string): { name: string, code: string, option: string } => ({ name: 'OptionsError', code: 'GATEHOUSE_OPTION', option: name })
  t.throws(() => basicAuth(null as never), option('basicAuth.checker'))
  t.throws(() => withPrompt('a', 'b', ''), option('basicAuth.realm'))
  t.throws(() => withUserPasswd('', 'b'), option('basicAuth.user'))
  t.throws(() => withUserPasswd('a', ''), option('basicAuth.passwd'))
  t.throws(() => withBcryptHash('a', 'plain'), option('basicAuth.bcryptHash'))
  t.throws(() => withArgon2Hash('a', 'not base64!', b64('saltsalt')), option('basicAuth.argon2Hash'))
})

t.test('hash generators', async (t) => {
  const option = (name: string): { name: string, code: string, option: string } => ({ name: 'OptionsError', code: 'GATEHOUSE_OPTION', option: name })
  await t.rejects(bcryptHash(''), option('bcryptHash.passwd'))
  await t.rejects(bcryptHash('x'.repeat(73)), { ...option('bcryptHash.passwd'), message: /longer than bcrypt's 72 bytes/ })
  await t.rejects(bcryptHash('ok', 3), option('bcryptHash.cost'))
  await t.rejects(bcryptHash('ok', 32), option('bcryptHash.cost'))
  t.match(await bcryptHash('ok', 4), /^\$2b\$04\$/)
  const a = await argon2Hash('pw', { memoryCost: 1024 })
  t.equal(Buffer.from(a.hash, 'base64').length, 32)
  t.equal(Buffer.from(a.salt, 'base64').length, 16)
  const b = await argon2Hash('pw', { memoryCost: 1024 })
  t.not(a.salt, b.salt, 'fresh salt each time')
  await t.rejects(argon2Hash(''), option('argon2Hash.passwd'))
  await t.rejects(argon2Hash('pw', { timeCost: 0 }), option('argon2Hash.params.timeCost'))
})

t.test('parseBasicCredentials', async (t) => {
  t.same(parseBasicCredentials(undefined), { status: 'missing' })
  t.same(parseBasicCredentials(`Basic ${b64('u:')}`), { status: 'ok', user: 'u', passwd: '' })
  t.same(parseBasicCredentials(`Basic ${b64(':p')}`), { status: 'ok', user: '', passwd: 'p' })
})
