/**
 * Startup checks: option mistakes that would otherwise show only on the first request fail `app.ready()` (and
 * `app.listen()`) with an OptionsError naming the option; legal but weakening settings are logged as warnings.
 */
import t from 'tap'
import Fastify from 'fastify'
import cookie from '@fastify/cookie'
import { authPlugin } from '../../../auth.js'
import { corePlugin } from '../../../plugins/core/plugin.js'
import { funcLogger } from '../../../lib/logging/logger.js'
import { client, listen } from '../../helpers/client.js'

const GOOD = 'a-session-secret-of-thirty-two-by'
const url = 'http://127.0.0.1'

async function readyError (opts: Record<string, unknown>): Promise<unknown> {
  const app = Fastify()
  try {
    await app.register(authPlugin, { url, ...opts } as never)
    await app.ready()
    return undefined
  } catch (err) {
    return err
  } finally {
    await app.close()
  }
}

t.test('the tutorial\'s secret reader over an unset variable fails at startup, naming secret', async (t) => {
  delete process.env.GATEHOUSE_TEST_UNSET_SECRET
  const app = Fastify()
  await app.register(authPlugin, { secret: () => process.env.GATEHOUSE_TEST_UNSET_SECRET!, url })
  const err = await app.listen({ port: 0, host: '127.0.0.1' }).then(() => undefined, (e: unknown) => e)
  await app.close()
  t.match(err, { name: 'OptionsError', code: 'GATEHOUSE_OPTION', option: 'secret' })
  t.match((err as Error).message, /option "secret" returned no secret for the default audience/)
  t.match((err as Error).message, /openssl rand -base64 48/, 'says how to make one')
  t.equal(app.server.listening, false, 'nothing listens')
})

t.test('missing, empty, short, non-string and throwing secrets are refused; 32 bytes pass', async (t) => {
  const refused: Array<[string, unknown, RegExp]> = [
    ['undefined', () => undefined, /returned no secret/],
    ['null', () => null, /returned no secret/],
    ['empty', () => '', /returned no secret/],
    ['one character', () => 's', /is 1 bytes; at least 32/],
    ['31 bytes', () => 'x'.repeat(31), /is 31 bytes; at least 32/],
    ['async short', async () => 'short', /is 5 bytes/],
    ['a reader object', { get: () => 'x'.repeat(12) }, /is 12 bytes/],
    ['a Buffer', () => Buffer.alloc(64), /must return a string/],
    ['a throwing reader', () => { throw new Error('vault sealed') }, /failed for the default audience: vault sealed/],
    ['a rejecting reader', async () => { throw new Error('vault down') }, /vault down/],
    ['an empty key list', () => [], /empty key list/],
    ['a key list with one short key', () => [{ kid: 'new', secret: 'x'.repeat(40) }, { kid: 'old', secret: 'short' }], /\(key "old"\) is 5 bytes/],
    ['a key list with a non-string secret', () => [{ kid: 'k1', secret: 42 }], /\(key "k1"\), got number/]
  ]
  for (const [what, secret, message] of refused) {
    const err = await readyError({ secret })
    t.match(err, { code: 'GATEHOUSE_OPTION', option: 'secret' }, what)
    t.match((err as Error)?.message, message, what)
  }
  t.equal(await readyError({ secret: () => 'x'.repeat(32) }), undefined, '32 ASCII bytes')
  t.equal(await readyError({ secret: () => [{ kid: 'new', secret: 'n'.repeat(32) }, { kid: 'old', secret: 'o'.repeat(32) }] }), undefined, 'a key list of 32-byte keys')
  t.equal(await readyError({ secret: () => 'é'.repeat(16) }), undefined, '16 two-byte characters are 32 bytes')
  t.match(await readyError({ secret: () => 'é'.repeat(15) }), { option: 'secret' }, '30 bytes in 15 characters')
})

t.test('every configured audience is asked; the one without a secret is named', async (t) => {
  const asked: string[] = []
  const secrets: Record<string, string> = { blog: GOOD, shop: GOOD }
  const err = await readyError({ audiences: ['blog', 'shop', 'forum'], secret: (aud: string) => { asked.push(aud); return secrets[aud] ?? '' } })
  t.same(asked, ['blog', 'shop', 'forum'])
  t.match(err, { option: 'secret', message: /audience "forum"/ })
  secrets.forum = 'forum-secret'
  t.match(await readyError({ audiences: ['blog', 'shop', 'forum'], secret: (aud: string) => secrets[aud] }), { option: 'secret', message: /audience "forum" is 12 bytes/ })
  secrets.forum = GOOD
  t.equal(await readyError({ audiences: ['blog', 'shop', 'forum'], secret: (aud: string) => secrets[aud] }), undefined)
})

t.test('the core plugin alone checks too', async (t) => {
  const app = Fastify()
  await app.register(cookie)
  await app.register(corePlugin, { secret: () => 'tiny', url })
  await t.rejects(app.ready(), { code: 'GATEHOUSE_OPTION', option: 'secret' })
  await app.close()
})

t.test('cookie and header names no client can send, and redirect hosts written as URLs, fail at startup', async (t) => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ cookies: { sessionName: 'my session' } }, 'cookies.sessionName'],
    [{ cookies: { sessionName: 'jwt;path=/' } }, 'cookies.sessionName'],
    [{ cookies: { xsrfName: 'xsrf=token' } }, 'cookies.xsrfName'],
    [{ cookies: { xsrfName: 'JWT' } }, 'cookies.xsrfName'],
    [{ tokenSources: { header: 'X JWT' } }, 'tokenSources.header'],
    [{ xsrf: { headerName: 'X-XSRF:TOKEN' } }, 'xsrf.headerName'],
    [{ allowedRedirectHosts: ['partner.example', 'https://app.example.com'] }, 'allowedRedirectHosts[1]'],
    [{ allowedRedirectHosts: ['app.example.com/path'] }, 'allowedRedirectHosts[0]']
  ]
  for (const [opts, option] of cases) {
    t.match(await readyError({ secret: () => GOOD, ...opts }), { name: 'OptionsError', code: 'GATEHOUSE_OPTION', option }, option)
  }
  t.equal(await readyError({
    secret: () => GOOD,
    cookies: { sessionName: 'app.session_v2', xsrfName: 'csrf_token' },
    xsrf: { headerName: 'X-CSRF' },
    allowedRedirectHosts: ['partner.example', 'app.example.com:8443', '[::1]:8080']
  }), undefined, 'valid names pass')
})

t.test('settings that weaken protection are logged as warnings at startup', async (t) => {
  const lines: Array<[string, string]> = []
  const app = Fastify()
  await app.register(authPlugin, {
    secret: () => GOOD,
    url: 'http://example.com',
    xsrf: { disable: true, ignoreMethods: ['GET', 'POST'] },
    logger: funcLogger((line, level) => { lines.push([level, line]) })
  })
  await app.ready()
  await app.close()
  const warnings = lines.filter(([level]) => level === 'warn').map(([, line]) => line)
  t.match(warnings, [/xsrf\.disable is true/, /xsrf\.ignoreMethods lists POST/, /without Secure \(url uses http on example\.com\)/])

  const quiet: string[] = []
  const local = Fastify()
  await local.register(authPlugin, { secret: () => GOOD, url: 'http://localhost:8080', logger: funcLogger((l) => { quiet.push(l) }) })
  await local.ready()
  await local.close()
  t.same(quiet, [], 'a loopback url in development warns about nothing')
})

t.test('a lifetime written as a bare number below one second is warned about: it is milliseconds', async (t) => {
  const lines: Array<[string, string]> = []
  const app = Fastify({ logger: { level: 'warn', stream: { write: (line: string) => { const { level, msg } = JSON.parse(line) as { level: number; msg: string }; lines.push([String(level), msg]) } } } })
  await app.register(authPlugin, { secret: () => GOOD, url: 'http://localhost:8080', session: { tokenDuration: 60, maxAge: 900, idleTimeout: '1h' } })
  app.auth.addVerifProvider('email', '{{.Token}}', { send: async () => {} }, { tokenTtl: 30 })
  await app.ready()
  await app.close()
  t.same(lines, [
    ['40', "auth options: session.tokenDuration is 60: a bare number is milliseconds, so this lasts 60 ms; write '60s' (or 60000) for 60 seconds"],
    ['40', "auth options: session.maxAge is 900: a bare number is milliseconds, so this lasts 900 ms; write '900s' (or 900000) for 900 seconds"],
    ['40', "verify.email.tokenTtl is 30: a bare number is milliseconds, so this lasts 30 ms; write '30s' (or 30000) for 30 seconds"]
  ], "through Fastify's log by default, at warn")

  const quiet: string[] = []
  const fine = Fastify()
  await fine.register(authPlugin, { secret: () => GOOD, url: 'http://localhost:8080', session: { tokenDuration: 60_000, maxAge: '900s', idleTimeout: 7_200_000 }, logger: funcLogger((l) => { quiet.push(l) }) })
  await fine.ready()
  await fine.close()
  t.same(quiet.filter((l) => l.includes('bare number')), [], 'milliseconds of a minute and more, and any string, are what they say')
})

t.test('a good configuration still serves logins after the check', async (t) => {
  const { app, base } = await listen(async (a) => {
    await a.register(authPlugin, { secret: () => GOOD, url, providers: [{ kind: 'direct', name: 'local', checker: () => true }] })
  })
  t.teardown(() => app.close())
  const r = await client(base).fetch('/auth/local/login', { method: 'POST', json: { user: 'ann', passwd: 'pw' } })
  t.equal(r.status, 200)
})

t.test("the providers' lifetimes and the re-authentication window get the same warning", async (t) => {
  const { oauth2Provider, passkeyProvider, totpProvider } = await import('../../../providers/index.js')
  const { resolveTelegramOptions } = await import('../../../providers/telegram/options.js')
  const lines: string[] = []
  const app = Fastify()
  await app.register(authPlugin, {
    secret: () => GOOD,
    url: 'http://localhost:8080',
    reauthentication: { within: 120 },
    logger: funcLogger((line, level) => { if (level === 'warn') lines.push(line) })
  })
  await app.register(totpProvider, { encryptionKey: 'a'.repeat(43) + '=', pendingTtl: 300, recentWithin: '5m' })
  await app.register(passkeyProvider, { challengeTtl: 60, pendingTtl: 300_000 })
  await app.register(oauth2Provider, { name: 'github', cid: 'cid', csecret: 'csecret', handshakeTtl: 600 })
  await app.ready()
  await app.close()
  const bare = lines.filter((l) => l.includes('a bare number is milliseconds')).map((l) => l.replace(/ is \d+:.*$/, '')).map((l) => l.replace(/^.*?(\S+)$/, '$1'))
  t.same(bare.sort(), ['oauth2.github.handshakeTtl', 'passkey.challengeTtl', 'reauthentication.within', 'totp.pendingTtl'],
    'each bare number below a second is named once; strings and whole seconds in ms are not')

  const told: string[] = []
  resolveTelegramOptions({ token: '123456:' + 'A'.repeat(35), requestTtl: 600 }, (text) => { told.push(text) })
  t.match(told, [/^telegram\.requestTtl is 600: a bare number is milliseconds/], "the Telegram request's lifetime too")
})
