/**
 * The deadline of every call to a provider fires whatever the garbage collector does. A provider that sends
 * `200` headers and then one byte a second (token endpoint, userinfo, JWKS) gets a 504 at the deadline, with
 * full garbage collections forced while the call waits, and its connection is closed by us; no session.
 *
 * The file needs `node --expose-gc`. Run as usual (`npx tap`), it runs itself again in a child process with
 * that flag (and the TypeScript loader only), and the child's results are its results.
 */
import t from 'tap'
import { fileURLToPath } from 'node:url'
import { once } from 'node:events'

const gc = (globalThis as { gc?: () => void }).gc

if (gc === undefined) {
  const loader = process.execArgv.filter((a) => a.includes('ts-loader'))
  t.spawn(process.execPath, ['--expose-gc', ...loader, fileURLToPath(import.meta.url)], {}, 'the same tests under node --expose-gc')
} else {
  await gcTests(gc)
}

async function gcTests (collect: () => void): Promise<void> {
  const { default: FakeTimers } = await import('@sinonjs/fake-timers')
  const { APP_URL, currentUser } = await import('../../helpers/oauth2-app.js')
  const { startTwoProviders } = await import('../../helpers/two-providers.js')

  // The calls before the trickling one (the token exchange) must answer within it, forced collections and a loaded
  // machine included: generous for a loopback call, short enough for three deadlines.
  const TIMEOUT_MS = 3000
  const { gh, goo, app, lines } = await startTwoProviders(t, TIMEOUT_MS)

  /** Login and the provider's authorize step; the callback URL the provider sends the browser to. */
  async function beginLogin (browser: ReturnType<typeof app.browser>, provider: string): Promise<URL> {
    const login = await browser.request(`${APP_URL}/auth/${provider}/login`)
    const authz = await browser.request(login.headers.get('location')!)
    return new URL(authz.headers.get('location')!)
  }

  t.test('a good login through each provider first (everything loaded, keys cached)', async (t) => {
    for (const provider of ['github', 'google']) t.equal((await app.browser().navigate(`${APP_URL}/auth/${provider}/login`)).res.status, 200, provider)
  })

  const cases = [
    ['github', gh, { token: 'trickle' }, 'token endpoint did not answer in time'],
    ['github', gh, { info: 'trickle' }, 'userinfo endpoint did not answer in time'],
    ['google', goo, { jwks: 'trickle' }, 'provider keys did not answer in time']
  ] as const
  for (const [provider, standin, faults, error] of cases) {
    t.test(`${Object.values(faults)[0]} ${Object.keys(faults)[0]}: 504 at the deadline despite forced garbage collections`, async (t) => {
      standin.faults = { ...faults }
      t.teardown(() => { standin.faults = {} })
      if ('jwks' in faults) {
        // The keys are cached from the first login: let the cache go stale, so this login fetches them.
        const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
        t.teardown(() => clock.uninstall())
        clock.tick(11 * 60_000)
      }
      const browser = app.browser()
      const callback = await beginLogin(browser, provider)
      // Full collections while the call waits for the trickling body, and garbage to collect.
      const collector = setInterval(() => { void Array.from({ length: 10_000 }, (_, i) => ({ i })); collect() }, 200)
      t.teardown(() => clearInterval(collector))
      // The stand-in trickles for ever: a deadline lost to a collection never answers, and the test fails on its
      // time limit; the 504 naming the deadline is the deadline's own answer.
      const started = performance.now()
      const res = await browser.request(callback.href)
      const took = Math.round(performance.now() - started)
      clearInterval(collector)
      t.equal(res.status, 504)
      t.same(await res.json(), { error, details: `no answer within ${TIMEOUT_MS} ms`, code: 'GATEHOUSE_UPSTREAM_TIMEOUT' })
      // A lower bound only (load makes it later, never earlier).
      t.ok(took >= TIMEOUT_MS - 50, `answered at the deadline (${took} ms for a ${TIMEOUT_MS} ms deadline)`)
      // The trickling connection is ours to close: it must not stay open after the answer.
      while (standin.hostile.open > 0) await once(standin.hostile, 'closed')
      t.pass('the provider connection is closed')
      t.equal((await currentUser(browser)).status, 401, 'no session')
    })
  }
  t.test('the failures are logged once each, with the deadline', async (t) => {
    for (const [provider, , , error] of cases) {
      t.equal(lines.filter((l) => l.startsWith(`[ERROR] GET /auth/${provider}/callback answered 504 GATEHOUSE_UPSTREAM_TIMEOUT: ${error}`)).length, 1, error)
    }
  })
}
