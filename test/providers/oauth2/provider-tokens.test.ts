/**
 * The provider's own tokens (issue 36 item 2) over real HTTP, against a local stand-in of an OAuth2 provider that
 * issues expiring access tokens and rotating refresh tokens and records revocations: kept sealed for the signed-in
 * user (never in the session, the store's plain text, logs or events), refreshed once when expired however many
 * requests ask at once, revoked at the provider and dropped at logout; a refresh the provider refuses or fails is
 * a clear 401 or 502.
 */
import t, { type Test } from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import Fastify, { type FastifyInstance } from 'fastify'
import { authPlugin } from '../../../auth.js'
import { MemoryStateStore } from '../../../stores/state/index.js'
import { oauth2Provider } from '../../../providers/index.js'
import { client, type Client } from '../../helpers/client.js'
import type { StateStore } from '../../../lib/state-store.js'
import { acmeToken as token, CID, CSECRET, KEY, signInWithAcme, startAcme, startAcmeApp, xsrf, type Acme } from '../../helpers/acme-tokens.js'

interface Setup { acme: Acme; c: Client; store: MemoryStateStore; logs: string[]; events: unknown[]; app: FastifyInstance }

async function setup (t: Test): Promise<Setup> {
  const acme = await startAcme()
  t.teardown(() => acme.app.close())
  const store = new MemoryStateStore()
  const { app, base, logs, events } = await startAcmeApp(t, acme, store)
  const c = await signInWithAcme(base)
  return { acme, c, store, logs, events, app }
}

t.test('kept sealed for the user, never in the session, the store in plain text, logs or events', async (t) => {
  const { c, store, logs, events } = await setup(t)
  const r = await token(c)
  t.equal(r.status, 200)
  t.equal(r.body.accessToken, 'acme-at-1')
  t.equal(r.body.scope, 'read')
  t.type(r.body.expiresAt, 'number')
  const jwt = c.jar.get('JWT')!
  const claims = Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')
  t.notMatch(claims, /acme-(at|rt)/, 'not in the session token')
  const kept = await store.get(`provider-tokens:acme:${JSON.parse(claims).user.id as string}`)
  t.ok(kept, 'kept under the provider and user')
  t.notMatch(kept!, /acme-/, 'sealed: no token in the store in plain text')
  t.notMatch(logs.join('\n'), /acme-(at|rt)/, 'not in a log line')
  t.notMatch(JSON.stringify(events), /acme-(at|rt)/, 'not in an event')
})

t.test('an expired token is refreshed once however many requests ask at once', async (t) => {
  const clock = FakeTimers.install({ now: Date.now(), toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const { c, acme } = await setup(t)
  t.equal((await token(c)).body.accessToken, 'acme-at-1')
  t.equal(acme.refreshes, 0, 'a live token is not refreshed')
  clock.tick(61_000)
  // The provider holds the refresh until the test lets it go: the five requests are all sent meanwhile.
  acme.hold()
  const arrived = acme.refreshArrived()
  const asking = Promise.all(Array.from({ length: 5 }, async () => await token(c)))
  await arrived
  acme.release()
  const answers = await asking
  t.same(answers.map((a) => a.body.accessToken), Array(5).fill('acme-at-2'))
  t.equal(acme.refreshes, 1, 'one refresh at the provider')
  t.equal((await token(c)).body.accessToken, 'acme-at-2', 'the refreshed token is kept')
  t.equal(acme.refreshes, 1)
})

t.test('an instance that read the expired token just before another refreshed it does not refresh again', async (t) => {
  const clock = FakeTimers.install({ now: Date.now(), toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const acme = await startAcme()
  t.teardown(() => acme.app.close())
  const shared = new MemoryStateStore()
  t.teardown(() => shared.close())
  // Instance B's first read of the kept tokens is held until A has refreshed and released its lock: B then holds
  // the old (spent) refresh token and finds the lock free.
  let releaseB: () => void = () => {}
  const bHeld = new Promise<void>((resolve) => { releaseB = resolve })
  let bReadStarted: () => void = () => {}
  const bRead = new Promise<void>((resolve) => { bReadStarted = resolve })
  let holdNext = false
  const onB = new Proxy(shared, {
    get (target, prop) {
      if (prop === 'get') {
        return async (key: string) => {
          const value = await target.get(key)
          if (holdNext && key.startsWith('provider-tokens:')) { holdNext = false; bReadStarted(); await bHeld }
          return value
        }
      }
      const v = Reflect.get(target, prop) as unknown
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v
    }
  }) as StateStore
  const a = await startAcmeApp(t, acme, shared)
  const b = await startAcmeApp(t, acme, onB)
  const onA = await signInWithAcme(a.base)
  clock.tick(61_000)
  holdNext = true
  const fromB = token(client(b.base, onA.jar))
  await bRead
  t.equal((await token(onA)).body.accessToken, 'acme-at-2', 'A refreshed')
  releaseB()
  const late = await fromB
  t.equal(late.status, 200, JSON.stringify(late.body))
  t.equal(late.body.accessToken, 'acme-at-2', 'B answers the token A kept')
  t.equal(acme.refreshes, 1, 'B did not spend the old refresh token again')
  t.ok(acme.live.has('acme-rt-2'), 'the grant is alive')
})

t.test('logout revokes the grant at the provider and drops the tokens', async (t) => {
  const { c, acme, store } = await setup(t)
  const claims = JSON.parse(Buffer.from(c.jar.get('JWT')!.split('.')[1]!, 'base64url').toString('utf8')) as { user: { id: string } }
  const out = await c.fetch('/auth/logout', { method: 'POST', headers: xsrf(c) })
  t.equal(out.status, 200)
  t.same(acme.revoked, [{ token: 'acme-rt-1', hint: 'refresh_token' }], 'the stand-in recorded the revocation')
  t.equal(await store.get(`provider-tokens:acme:${claims.user.id}`), undefined, 'dropped')
})

t.test('revokeProviderToken: revoked at the provider, then none is kept', async (t) => {
  const { c, acme } = await setup(t)
  const r = await c.fetch('/acme-disconnect', { method: 'POST', headers: xsrf(c) })
  t.same(await r.json(), { revoked: true })
  t.same(acme.revoked.map((x) => x.token), ['acme-rt-1'])
  const after = await token(c)
  t.equal(after.status, 404)
  t.equal(after.body.code, 'GATEHOUSE_NOT_FOUND')
})

t.test('a refresh the provider fails or refuses', async (t) => {
  const clock = FakeTimers.install({ now: Date.now(), toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const { c, acme } = await setup(t)
  clock.tick(61_000)
  acme.refresh = 'down'
  const down = await token(c)
  t.equal(down.status, 502, 'the provider down: 502, the tokens kept')
  t.equal(down.body.code, 'GATEHOUSE_UPSTREAM')
  t.notMatch(JSON.stringify(down.body), /acme-/)
  acme.refresh = 'wrong_types'
  const typed = await token(c)
  t.equal(typed.status, 502, 'an answer whose fields have the wrong types: 502, the tokens kept')
  t.equal(typed.body.code, 'GATEHOUSE_UPSTREAM')
  acme.refresh = 'error_object'
  const object = await token(c)
  t.equal(object.status, 401, 'a 200 carrying an error object is a refusal')
  t.equal(object.body.code, 'GATEHOUSE_TOKEN_EXPIRED')
  t.equal((await token(c)).status, 404, 'a refused refresh token is dropped: sign in again')
})

t.test('a refresh token the provider revoked', async (t) => {
  const clock = FakeTimers.install({ now: Date.now(), toFake: ['Date'] })
  t.teardown(() => clock.uninstall())
  const { c, acme } = await setup(t)
  acme.live.clear()
  clock.tick(61_000)
  const r = await token(c)
  t.equal(r.status, 401)
  t.equal(r.body.code, 'GATEHOUSE_TOKEN_EXPIRED', JSON.stringify(r.body))
})

t.test('keepTokens is checked at registration', async (t) => {
  for (const [keepTokens, option] of [
    [{ key: 'short' }, 'oauth2.acme.keepTokens.key'],
    [{ key: KEY, revocationURL: 'ftp://x' }, 'oauth2.acme.keepTokens.revocationURL'],
    [{ key: KEY, keepFor: 'soon' }, 'oauth2.acme.keepTokens.keepFor'],
    [{ key: KEY, store: 'x' }, 'oauth2.acme.keepTokens.store']
  ] as const) {
    const app = Fastify()
    await app.register(authPlugin, { secret: () => 'x'.repeat(40), url: 'http://127.0.0.1' })
    app.register(oauth2Provider, {
      name: 'acme', cid: CID, csecret: CSECRET, endpoint: { authURL: 'http://127.0.0.1/a', tokenURL: 'http://127.0.0.1/t' }, infoURL: 'http://127.0.0.1/u', mapUser: () => ({ id: 'x' }), keepTokens: keepTokens as never
    })
    await t.rejects(app.ready(), { name: 'OptionsError', option }, option)
    await app.close()
  }
})

t.test('a built-in provider takes keepTokens too', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(authPlugin, { secret: () => 'x'.repeat(40), url: 'http://127.0.0.1' })
  app.register(oauth2Provider, { name: 'github', cid: CID, csecret: CSECRET, keepTokens: { key: 'not-hex' } })
  await t.rejects(app.ready(), { name: 'OptionsError', option: 'oauth2.github.keepTokens.key' })
  const ok = Fastify()
  t.teardown(() => ok.close())
  await ok.register(authPlugin, { secret: () => 'x'.repeat(40), url: 'http://127.0.0.1' })
  await ok.register(oauth2Provider, { name: 'github', cid: CID, csecret: CSECRET, keepTokens: { key: KEY } })
  await ok.ready()
  t.same(ok.auth.providers(), ['github'])
})
