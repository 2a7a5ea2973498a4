/**
 * Start-up options of the dev and local OAuth2 servers: clear errors naming the option, a busy port, and
 * misbehaving user functions (e-mail, login page) that must not crash the server.
 */
import t from 'tap'
import { createServer as createNetServer } from 'node:net'
import { createHash } from 'node:crypto'
import { startDevServer, startLocalOAuth2Server, DEV_CLIENT, DEV_SERVER_PORT, type LocalOAuth2ServerOptions } from '../../servers/index.js'
import { OptionsError } from '../../lib/errors.js'
import { funcLogger } from '../../lib/logging/logger.js'
import { publicHostOf } from '../../servers/dev-server.js'

// RFC 7636 Appendix B: the servers require PKCE, and these requests are about other things.
const PKCE = '&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256'
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'

t.test('bad options are refused before anything listens, naming the option', async (t) => {
  const L = 'startLocalOAuth2Server'
  const bad: Array<[string, unknown, string]> = [
    ['no options', undefined, L],
    ['no url', {}, `${L}.url`],
    ['bad url', { url: 'not a url' }, `${L}.url`],
    ['https url', { url: 'https://localhost:0' }, `${L}.url`],
    ['url with path', { url: 'http://localhost:0/oauth' }, `${L}.url`],
    ['url with query', { url: 'http://localhost:0/?a=1' }, `${L}.url`],
    ['port out of range', { url: 'http://localhost:70000' }, `${L}.url`],
    ['empty host', { url: 'http://127.0.0.1:0', host: '' }, `${L}.host`],
    ['handler without page', { url: 'http://127.0.0.1:0', loginPageHandler: () => '' }, `${L}.loginPageHandler`],
    ['handler not a function', { url: 'http://127.0.0.1:0', withLoginPage: true, loginPageHandler: 'x' }, `${L}.loginPageHandler`],
    ['withLoginPage not boolean', { url: 'http://127.0.0.1:0', withLoginPage: 'yes' }, `${L}.withLoginPage`],
    ['emailFn not a function', { url: 'http://127.0.0.1:0', emailFn: 'a@b' }, `${L}.emailFn`],
    ['logger without logf', { url: 'http://127.0.0.1:0', logger: {} }, `${L}.logger`],
    ['empty auto-login user', { url: 'http://127.0.0.1:0', autoLoginUser: ' ' }, `${L}.autoLoginUser`],
    ['redirect URI with fragment', { url: 'http://127.0.0.1:0', redirectUris: ['http://x/cb#f'] }, `${L}.redirectUris`],
    // An empty list once meant "any redirect URI": a code could be sent anywhere.
    ['empty redirect URI list', { url: 'http://127.0.0.1:0', redirectUris: [] }, `${L}.redirectUris`],
    ['client without secret', { url: 'http://127.0.0.1:0', client: { cid: 'a' } }, `${L}.client`],
    ['zero code lifetime', { url: 'http://127.0.0.1:0', codeTtl: 0 }, `${L}.codeTtl`],
    ['negative token lifetime', { url: 'http://127.0.0.1:0', tokenTtl: -1 }, `${L}.tokenTtl`],
    ['infinite login lifetime', { url: 'http://127.0.0.1:0', loginTtl: Infinity }, `${L}.loginTtl`],
    ['login lifetime in words', { url: 'http://127.0.0.1:0', loginTtl: 'ten minutes' }, `${L}.loginTtl`]
  ]
  for (const [name, opts, option] of bad) {
    const err = await startLocalOAuth2Server(opts as LocalOAuth2ServerOptions).then(() => undefined, (e: unknown) => e)
    t.type(err, OptionsError, `${name}: an OptionsError`)
    t.match(err, { code: 'GATEHOUSE_OPTION', option }, `${name}: names ${option}`)
  }
  const dev: Array<[string, Parameters<typeof startDevServer>[0], string]> = [
    ['port out of range', { port: 70000 }, 'startDevServer.port'],
    ['fractional port', { port: 1.5 }, 'startDevServer.port'],
    ['empty host', { host: '' }, 'startDevServer.host'],
    ['client without id', { client: { cid: '', csecret: 'x' } }, 'startDevServer.client'],
    ['withLoginPage not boolean', { withLoginPage: 1 as never }, 'startDevServer.withLoginPage'],
    ['empty redirect URI list', { redirectUris: [] }, 'startDevServer.redirectUris']
  ]
  for (const [name, opts, option] of dev) {
    await t.rejects(startDevServer(opts), { name: 'OptionsError', code: 'GATEHOUSE_OPTION', option }, `dev server, ${name}: names ${option}`)
  }
})

t.test('dev server defaults: port 8084, the well-known dev client, login page on', async (t) => {
  t.equal(DEV_SERVER_PORT, 8084)
  t.same(DEV_CLIENT, { cid: 'dev', csecret: 'dev-secret' })
  t.ok(Object.isFrozen(DEV_CLIENT))
  const dev = await startDevServer({ port: 0, redirectUris: ['http://127.0.0.1:1/cb'] })
  t.teardown(dev.close)
  t.same({ cid: dev.providerOptions.cid, csecret: dev.providerOptions.csecret }, DEV_CLIENT)
  const page = await fetch(`${dev.url}/login/oauth/authorize?response_type=code&client_id=dev&redirect_uri=http://127.0.0.1:1/cb${PKCE}`)
  t.equal(page.status, 200)
  t.match(page.headers.get('content-type'), /^text\/html/)
})

t.test('a busy port makes the start reject; the first server keeps working', async (t) => {
  const first = await startDevServer({ port: 0 })
  t.teardown(first.close)
  const port = Number(new URL(first.url).port)
  await t.rejects(startDevServer({ port }), { code: 'EADDRINUSE' })
  await t.rejects(startLocalOAuth2Server({ url: `http://127.0.0.1:${port}` }), { code: 'EADDRINUSE' })
  t.equal((await fetch(`${first.url}/`)).status, 200)
})

t.test('a localhost url listens on 127.0.0.1 and reports localhost', async (t) => {
  const local = await startLocalOAuth2Server({ url: 'http://localhost:0' })
  t.teardown(local.close)
  const port = new URL(local.url).port
  t.equal(local.url, `http://localhost:${port}`)
  t.equal((await fetch(`http://127.0.0.1:${port}/`)).status, 200)
})

t.test('a failing emailFn costs the e-mail, not the login; it is logged', async (t) => {
  const lines: string[] = []
  const local = await startLocalOAuth2Server({
    url: 'http://127.0.0.1:0', client: { cid: 'a', csecret: 'b' }, redirectUris: ['http://127.0.0.1:1/cb'], logger: funcLogger((l) => lines.push(l)),
    emailFn: () => { throw new Error('directory down') }
  })
  t.teardown(local.close)
  const res = await fetch(`${local.url}/login/oauth/authorize?response_type=code&client_id=a&redirect_uri=http://127.0.0.1:1/cb${PKCE}`, { redirect: 'manual' })
  const code = new URL(res.headers.get('location')!).searchParams.get('code')!
  const tok = await fetch(`${local.url}/login/oauth/access_token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'authorization_code', code, redirect_uri: 'http://127.0.0.1:1/cb', client_id: 'a', client_secret: 'b', code_verifier: VERIFIER })
  })
  const { access_token: at } = await tok.json() as { access_token: string }
  const info = await fetch(`${local.url}/user`, { headers: { authorization: `Bearer ${at}` } })
  t.equal(info.status, 200)
  t.same(await info.json(), { id: 'dev_user', name: 'dev_user', picture: `${local.url}/picture/${createHash('sha1').update('dev_user').digest('hex')}.png` })
  t.ok(lines.some((l) => l.includes('emailFn failed for user dev_user: directory down')))
  t.notOk(lines.some((l) => l.includes(at) || l.includes(code) || l.includes('"b"')), 'no token, code or secret in the logs')
})

t.test('a loginPageHandler that neither replies nor returns HTML gets a logged 500, not a hang', async (t) => {
  const lines: string[] = []
  const local = await startLocalOAuth2Server({
    url: 'http://127.0.0.1:0', withLoginPage: true, redirectUris: ['http://127.0.0.1:1/cb'], loginPageHandler: () => undefined, logger: funcLogger((l) => lines.push(l))
  })
  t.teardown(local.close)
  const res = await fetch(`${local.url}/login/oauth/authorize?response_type=code&client_id=${local.providerOptions.cid}&redirect_uri=http://127.0.0.1:1/cb${PKCE}`)
  t.equal(res.status, 500)
  t.same(await res.json(), { error: 'server_error', error_description: 'internal error', details: 'internal error' })
  t.ok(lines.some((l) => l.includes('loginPageHandler neither sent a reply nor returned HTML')))
})

t.test('an async loginPageHandler returning HTML is served', async (t) => {
  const local = await startLocalOAuth2Server({
    url: 'http://127.0.0.1:0', withLoginPage: true, redirectUris: ['http://127.0.0.1:1/cb'], loginPageHandler: async (_req, _reply, page) => `<p>${page.scopes.join(',')}</p>`
  })
  t.teardown(local.close)
  const res = await fetch(`${local.url}/login/oauth/authorize?response_type=code&client_id=${local.providerOptions.cid}&redirect_uri=http://127.0.0.1:1/cb&scope=a%20b%20a${PKCE}`)
  t.equal(res.status, 200)
  t.equal(await res.text(), '<p>a,b</p>', 'scopes de-duplicated')
})

/** Why this machine cannot listen on ::1 (no IPv6 loopback), or undefined when it can. */
async function ipv6LoopbackMissing (): Promise<string | undefined> {
  const probe = createNetServer()
  try {
    await new Promise<void>((resolve, reject) => { probe.once('error', reject); probe.listen(0, '::1', resolve) })
    return undefined
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'EADDRNOTAVAIL' || code === 'EAFNOSUPPORT') return `no IPv6 loopback on this machine (${code})`
    throw err
  } finally {
    probe.close()
  }
}

t.test('IPv6 loopback: the url brackets the address', async (t) => {
  // Skipped only when the machine has no IPv6 loopback; any other failure to start the server fails the test.
  const missing = await ipv6LoopbackMissing()
  if (missing !== undefined) return t.skip(missing)
  const server = await startDevServer({ port: 0, host: '::1' })
  t.teardown(server.close)
  t.match(server.url, /^http:\/\/\[::1\]:\d+$/)
  t.equal((await fetch(`${server.url}/`)).status, 200)
  t.equal(server.providerOptions.infoURL, `${server.url}/user`)
})

t.test('wildcard listen addresses are reached through loopback', async (t) => {
  t.equal(publicHostOf('0.0.0.0'), '127.0.0.1')
  t.equal(publicHostOf('::'), '::1')
  t.equal(publicHostOf('127.0.0.1'), '127.0.0.1')
})
