/**
 * Hostile and broken providers, over real HTTP against the local stand-in: answers too large on the wire or
 * once inflated (JWKS, token endpoint, userinfo), ID tokens naming unknown keys, access tokens that could
 * inject a header, token types other than Bearer, provider text where a registered error code belongs, an
 * unreachable endpoint. Each is a bounded-time JSON error with its code, memory stays bounded, no session is
 * made, nothing of the provider (address, text, token) reaches the client, and no token reaches the log.
 */
import t, { type Test } from 'tap'
import { createServer } from 'node:http'
import { once } from 'node:events'
import FakeTimers from '@sinonjs/fake-timers'
import { funcLogger } from '../../../lib/logging/logger.js'
import { oauth2Provider, oidcProvider } from '../../../providers/index.js'
import { JWKS_MAX_AGE_MS, JWKS_REFETCH_COOLDOWN_MS } from '../../../providers/oauth2/jwks.js'
import { BAD_ACCESS_TOKENS, type Faults } from '../../helpers/oauth2-standin.js'
import { startTwoProviders } from '../../helpers/two-providers.js'
import { APP_URL, bootError, currentUser, startApp } from '../../helpers/oauth2-app.js'
import { eventually } from '../../helpers/eventually.js'

// No deadline decides an outcome here (the caps and checks must, on a loaded machine too): the provider calls'
// deadline is far away. test/e2e/sockets/oauth2-deadline-gc.test.ts is about the deadline.
const TIMEOUT_MS = 120_000
const { gh, goo, app: testApp, lines } = await startTwoProviders(t, TIMEOUT_MS)

interface Outcome { status: number; body: Record<string, unknown>; rssGrowthMB: number; signedIn: boolean }

/** One login through `provider` with the stand-in misbehaving as `faults`; measures peak RSS growth. */
async function login (provider: 'github' | 'google', faults: Faults): Promise<Outcome> {
  const standin = provider === 'github' ? gh : goo
  standin.faults = { ...faults }
  const browser = testApp.browser()
  const baseline = process.memoryUsage.rss()
  let peak = baseline
  const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage.rss()) }, 5)
  try {
    const nav = await browser.navigate(`${APP_URL}/auth/${provider}/login`)
    peak = Math.max(peak, process.memoryUsage.rss())
    const body = JSON.parse(nav.body) as Record<string, unknown>
    return { status: nav.res.status, body, rssGrowthMB: Math.round((peak - baseline) / 2 ** 20), signedIn: (await currentUser(browser)).status === 200 }
  } finally {
    clearInterval(sampler)
    standin.faults = {}
  }
}

/** Asserts a refused login: status, the exact body, no session. */
function refused (t: Test, out: Outcome, status: number, body: Record<string, unknown>): void {
  t.equal(out.status, status)
  t.same(out.body, body)
  t.notOk(out.signedIn, 'no session')
}

t.test('a good login first: the keys are fetched once and cached', async (t) => {
  const before = goo.jwksRequests
  const out = await login('google', {})
  t.equal(out.status, 200)
  t.equal(goo.jwksRequests, before + 1)
  t.equal((await login('google', {})).status, 200)
  t.equal(goo.jwksRequests, before + 1, 'the second login uses the cached keys')
})

t.test('oversized answers: 400 MiB on the wire, or 400 KiB of gzip inflating to 400 MiB, stop at the 1 MiB cap', async (t) => {
  const tooLarge = (what: string): Record<string, unknown> => ({ error: `${what} answer too large`, details: 'more than 1048576 bytes', code: 'GATEHOUSE_UPSTREAM' })
  const cases: Array<['github' | 'google', Faults, string]> = [
    ['google', { jwks: 'huge' }, 'provider keys'],
    ['google', { jwks: 'gzip-bomb' }, 'provider keys'],
    ['github', { token: 'huge' }, 'token endpoint'],
    ['github', { token: 'gzip-bomb' }, 'token endpoint'],
    ['github', { info: 'gzip-bomb' }, 'userinfo endpoint']
  ]
  for (const [provider, faults, what] of cases) {
    const name = `${Object.keys(faults)[0]} ${Object.values(faults)[0]}`
    // The keys are cached from the first login: let the cache go stale, so this login fetches them.
    const clock = faults.jwks !== undefined ? FakeTimers.install({ toFake: ['Date'], now: Date.now() + JWKS_MAX_AGE_MS }) : undefined
    try {
      const sentBefore = (provider === 'github' ? gh : goo).hostile.bytes
      const out = await login(provider, faults)
      refused(t, out, 502, tooLarge(what))
      t.ok(out.rssGrowthMB < 50, `${name}: RSS grew ${out.rssGrowthMB} MB (< 50)`)
      const standin = provider === 'github' ? gh : goo
      // Hung up at the cap: the hostile connection closes (were it left open, this would wait for ever).
      while (standin.hostile.open > 0) await once(standin.hostile, 'closed')
      t.equal(standin.hostile.open, 0, `${name}: the provider connection is closed`)
      const sent = standin.hostile.bytes - sentBefore
      if (faults.jwks === 'huge' || faults.token === 'huge') t.ok(sent < 64 * 2 ** 20, `${name}: the provider got to send ${Math.round(sent / 2 ** 20)} MiB of 400 before we hung up`)
    } finally {
      clock?.uninstall()
    }
  }
})

t.test('an ID token naming an unknown key: 401, and the keys are fetched again at most once per cooldown', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() + JWKS_MAX_AGE_MS })
  t.teardown(() => clock.uninstall())
  const rejected = { error: 'id token rejected', details: 'no key of the provider matches the id token', code: 'GATEHOUSE_UNAUTHORIZED' }
  const before = goo.jwksRequests
  refused(t, await login('google', { idToken: 'unknown-kid' }), 401, rejected)
  t.equal(goo.jwksRequests, before + 1, 'the stale set was fetched for this token; the unknown key does not fetch it again')
  // The next token naming a key the set does not hold fetches it once (a rotation since: rp-conformance.test.ts),
  // and then none until the cooldown has passed since that fetch.
  refused(t, await login('google', { idToken: 'unknown-kid' }), 401, rejected)
  t.equal(goo.jwksRequests, before + 2, 'one fetch for a key that may have been rotated in')
  for (let i = 0; i < 5; i++) refused(t, await login('google', { idToken: 'unknown-kid' }), 401, rejected)
  t.equal(goo.jwksRequests, before + 2, 'five more tokens with unknown keys: no fetch')
  clock.tick(JWKS_REFETCH_COOLDOWN_MS - 1000)
  refused(t, await login('google', { idToken: 'unknown-kid' }), 401, rejected)
  t.equal(goo.jwksRequests, before + 2, 'a second before the cooldown ends: still none')
  clock.tick(1000)
  refused(t, await login('google', { idToken: 'unknown-kid' }), 401, rejected)
  t.equal(goo.jwksRequests, before + 3, 'after the cooldown, one fetch again')
  refused(t, await login('google', { idToken: 'unknown-kid' }), 401, rejected)
  t.equal(goo.jwksRequests, before + 3)
  t.equal((await login('google', {})).status, 200, 'a token signed with a known key still signs in')
})

t.test('unusable access tokens never reach a header or the log: 502, userinfo not called', async (t) => {
  for (const fault of Object.keys(BAD_ACCESS_TOKENS) as Array<keyof typeof BAD_ACCESS_TOKENS>) {
    const mark = lines.length
    const infoCalls = gh.infoAuth.length
    const out = await login('github', { token: fault })
    refused(t, out, 502, { error: 'token endpoint answered garbage', details: 'the access_token holds characters an access token cannot have', code: 'GATEHOUSE_UPSTREAM' })
    t.equal(gh.infoAuth.length, infoCalls, `${fault}: the token was never sent`)
    const logged = lines.slice(mark).join('\n')
    t.match(logged, /\[ERROR\] GET \/auth\/github\/callback answered 502 GATEHOUSE_UPSTREAM: token endpoint answered garbage/, `${fault}: the failure is logged`)
    for (const piece of ['X-Injected', 'abc', 'tök', 'ünicode', 'def']) t.notOk(logged.includes(piece), `${fault}: "${piece}" is not in the log`)
  }
})

t.test('a token type other than Bearer, or none, is not used as a Bearer token (RFC 6749 §7.1)', async (t) => {
  for (const [fault, details] of [['mac-type', 'token_type is not Bearer'], ['no-type', 'no token_type']] as const) {
    const infoCalls = gh.infoAuth.length
    refused(t, await login('github', { token: fault }), 502, { error: 'token endpoint answered garbage', details, code: 'GATEHOUSE_UPSTREAM' })
    t.equal(gh.infoAuth.length, infoCalls, `${fault}: userinfo not called`)
  }
})

t.test('provider text where a registered error code belongs does not reach the client', async (t) => {
  const mark = lines.length
  const out = await login('github', { token: 'odd-error' })
  refused(t, out, 502, { error: 'token endpoint refused the exchange', details: 'unrecognised error', code: 'GATEHOUSE_UPSTREAM' })
  t.notMatch(JSON.stringify(out.body), /relay|intranet|internal/)
  t.ok(lines.slice(mark).some((l) => l.includes('refused the exchange')), 'logged')
})

t.test('an unreachable endpoint: 502 naming the endpoint, not its address; the network error is logged once', async (t) => {
  const app = await startApp(async (app) => {
    await app.register(oauth2Provider, { name: 'github', cid: 'gh-cid', csecret: 'gh-secret', authURL: `${gh.url}/authorize`, tokenURL: 'http://127.0.0.1:1/token', infoURL: `${gh.url}/userinfo` })
  }, { logger: funcLogger((l) => lines.push(l)) })
  t.teardown(app.close)
  const mark = lines.length
  const nav = await app.browser().navigate(`${APP_URL}/auth/github/login`)
  t.equal(nav.res.status, 502)
  t.same(JSON.parse(nav.body), { error: 'token endpoint unreachable', details: 'the provider could not be reached', code: 'GATEHOUSE_UPSTREAM' })
  t.notMatch(nav.body, /127\.0\.0\.1|ECONNREFUSED/)
  // This app's url (app.test) is served on loopback here: the url warning of a development machine is not this test's.
  t.same(lines.slice(mark).filter((l) => !l.startsWith('[WARN] auth options: url is')), ['[ERROR] GET /auth/github/callback answered 502 GATEHOUSE_UPSTREAM: token endpoint unreachable (the provider could not be reached): 127.0.0.1:1: ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:1'])
})

t.test('a discovery document that trickles or floods fails registration in bounded time, naming the option', async (t) => {
  // /slow: headers, then a byte every 100 ms; /flood: 64 MiB of JSON-looking bytes.
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    if (req.url?.startsWith('/slow/')) {
      const timer = setInterval(() => res.write(' '), 100)
      res.once('close', () => clearInterval(timer))
      return
    }
    let left = 1024
    const chunk = Buffer.alloc(64 * 1024, 0x20)
    const pump = (): void => { while (left-- > 0) if (!res.write(chunk)) { res.once('drain', pump); return } res.end() }
    res.once('close', () => { left = 0 })
    pump()
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  // /slow ends at its 800 ms deadline (it trickles for ever: the message names the deadline); /flood at the size
  // cap, with the deadline far away so that a loaded machine cannot turn it into a timeout.
  for (const [path, timeout, why] of [['slow', 800, /did not answer in time \(no answer within 800 ms\)/], ['flood', 120_000, /answer too large \(more than 1048576 bytes\)/]] as const) {
    const err = await bootError(async (app) => { await app.register(oidcProvider, { name: 'sso', cid: 'c', csecret: 's', issuer: `${base}/${path}`, timeout }) })
    t.match(err, { name: 'OptionsError', code: 'GATEHOUSE_OPTION', option: 'oidc.issuer', message: why }, path)
    // Hung up: the discovery connection does not stay open (the server announces nothing: polled, no deadline).
    const open = await eventually(async () => await new Promise<number>((resolve) => { server.getConnections((_e, n) => { resolve(n) }) }), (n) => n === 0)
    t.equal(open, 0, `${path}: the connection is closed`)
  }
})
