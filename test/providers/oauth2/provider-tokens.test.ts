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
import formbody from '@fastify/formbody'
import { authPlugin } from '../../../auth.js'
import { MemoryStateStore } from '../../../stores/state/index.js'
import { getProviderToken, oauth2Provider, revokeProviderToken } from '../../../providers/index.js'
import { client, listen, type Client } from '../../helpers/client.js'

const KEY = 'c3'.repeat(32)
const CID = 'acme-client'
const CSECRET = 'acme-client-secret-0123456789'

/** The stand-in's state: what it issued, what it was asked, how it misbehaves next. */
interface Acme {
  base: string
  app: FastifyInstance
  refreshes: number
  revoked: Array<{ token: string; hint: string }>
  refresh: 'ok' | 'invalid_grant' | 'error_object' | 'down'
  refreshDelayMs: number
  live: Set<string>
}

async function startAcme (): Promise<Acme> {
  const app = Fastify()
  await app.register(formbody)
  const acme: Acme = { base: '', app, refreshes: 0, revoked: [], refresh: 'ok', refreshDelayMs: 0, live: new Set() }
  let n = 0
  const clientOk = (auth: string | undefined): boolean => auth === `Basic ${Buffer.from(`${CID}:${CSECRET}`).toString('base64')}`
  const issue = (): Record<string, unknown> => {
    n++
    acme.live.add(`acme-rt-${n}`)
    return { access_token: `acme-at-${n}`, refresh_token: `acme-rt-${n}`, expires_in: 60, token_type: 'Bearer', scope: 'read' }
  }
  app.get<{ Querystring: Record<string, string> }>('/authorize', async (request, reply) => {
    const { redirect_uri: to, state } = request.query
    return await reply.redirect(`${to}?code=the-code&state=${encodeURIComponent(state!)}`, 302)
  })
  app.post<{ Body: Record<string, string> }>('/token', async (request, reply) => {
    if (!clientOk(request.headers.authorization)) return await reply.code(401).send({ error: 'invalid_client' })
    const body = request.body
    if (body.grant_type === 'authorization_code') return issue()
    acme.refreshes++
    if (acme.refreshDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, acme.refreshDelayMs))
    if (acme.refresh === 'down') return await reply.code(503).send('maintenance')
    if (acme.refresh === 'error_object') return { error: 'invalid_grant', error_description: 'refresh token expired' }
    if (acme.refresh === 'invalid_grant' || !acme.live.delete(body.refresh_token!)) return await reply.code(400).send({ error: 'invalid_grant' })
    return issue()
  })
  app.post<{ Body: Record<string, string> }>('/revoke', async (request, reply) => {
    if (!clientOk(request.headers.authorization)) return await reply.code(401).send({ error: 'invalid_client' })
    acme.revoked.push({ token: request.body.token!, hint: request.body.token_type_hint! })
    acme.live.delete(request.body.token!)
    return await reply.code(200).send()
  })
  app.get('/user', async (request, reply) => {
    if (!/^Bearer acme-at-\d+$/.test(request.headers.authorization ?? '')) return await reply.code(401).send({ error: 'invalid_token' })
    return { id: 'ann-1', name: 'Ann' }
  })
  acme.base = await app.listen({ port: 0, host: '127.0.0.1' })
  return acme
}

interface Setup { acme: Acme; c: Client; store: MemoryStateStore; logs: string[]; events: unknown[]; app: FastifyInstance }

async function setup (t: Test): Promise<Setup> {
  const acme = await startAcme()
  t.teardown(() => acme.app.close())
  const store = new MemoryStateStore()
  const logs: string[] = []
  const events: unknown[] = []
  const { app, base } = await listen(async (app) => {
    await app.register(authPlugin, {
      secret: () => 'provider-tokens-secret-0123456789-abcdef',
      url: 'http://127.0.0.1',
      stateStore: store,
      logger: { logf: (format: string, ...args: unknown[]) => { logs.push([format, ...args].map(String).join(' ')) } },
      onEvent: (e) => { events.push(e) }
    })
    await app.register(oauth2Provider, {
      name: 'acme',
      cid: CID,
      csecret: CSECRET,
      endpoint: { authURL: `${acme.base}/authorize`, tokenURL: `${acme.base}/token` },
      infoURL: `${acme.base}/user`,
      mapUser: (data) => ({ id: data.id as string, name: data.name as string }),
      keepTokens: { key: KEY, revocationURL: `${acme.base}/revoke` }
    })
    app.get('/acme-token', { preHandler: app.auth.authenticate }, async (request) => await getProviderToken(request, 'acme'))
    app.post('/acme-disconnect', { preHandler: app.auth.authenticate }, async (request) => ({ revoked: await revokeProviderToken(request, 'acme') }))
  })
  t.teardown(() => app.close())
  const c = client(base)
  // The login: to the stand-in's authorize endpoint and back to the callback.
  const start = await c.fetch('/auth/acme/login')
  const back = await fetch(start.headers.get('location')!, { redirect: 'manual' })
  const callback = new URL(back.headers.get('location')!)
  const done = await c.fetch(callback.pathname + callback.search)
  if (done.status !== 200) throw new Error(`login: ${done.status} ${await done.text()}`)
  return { acme, c, store, logs, events, app }
}

const xsrf = (c: Client): Record<string, string> => ({ 'x-xsrf-token': c.jar.get('XSRF-TOKEN')! })

async function token (c: Client): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await c.fetch('/acme-token', { headers: xsrf(c) })
  return { status: r.status, body: await r.json() as Record<string, unknown> }
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
  acme.refreshDelayMs = 50
  const answers = await Promise.all(Array.from({ length: 5 }, async () => await token(c)))
  t.same(answers.map((a) => a.body.accessToken), Array(5).fill('acme-at-2'))
  t.equal(acme.refreshes, 1, 'one refresh at the provider')
  t.equal((await token(c)).body.accessToken, 'acme-at-2', 'the refreshed token is kept')
  t.equal(acme.refreshes, 1)
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
