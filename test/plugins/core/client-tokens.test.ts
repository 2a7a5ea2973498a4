/**
 * Token pairs of the registered clients, driven by a standard OAuth 2 client (openid-client): discovery (RFC 8414),
 * Bearer calls, the refresh grant rotating its token, reuse ending the family with its access tokens (RFC 9700
 * §4.14.2), revocation (RFC 7009), the session machinery (list, revokeSession, revokeUser), lifetimes, and the
 * claims updater and validator on a refresh.
 */
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import * as oidc from 'openid-client'
import { createHash, randomBytes } from 'node:crypto'
import { clientsApp } from '../../helpers/clients-app.js'
import { coreOf } from '../../../plugins/core/signin/internals.js'

const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })

// The bad-input test below sends dozens of refused requests from one address: the address lockout of the token
// endpoints (rateLimit.grants) would answer them 429, so it is set past them here; token-throttle.test.ts tests it.
const s = await clientsApp({ revocation: { sessionList: {} }, rateLimit: { grants: { perIp: 500 } } })
t.teardown(s.close)

async function grantError (t: Tap.Test, promise: Promise<unknown>, error: string): Promise<void> {
  const err = await promise.then(() => undefined, (e: unknown) => e)
  t.ok(err instanceof oidc.ResponseBodyError, 'the client got an RFC 6749 error')
  t.equal((err as oidc.ResponseBodyError).error, error)
  t.equal((err as oidc.ResponseBodyError).status, error === 'invalid_client' ? 401 : 400)
}

t.test('discovery: a standard client finds the token and revocation endpoints and needs nothing else', async (t) => {
  const config = await s.discover()
  const meta = config.serverMetadata()
  t.equal(meta.issuer, `${s.base}/auth`)
  t.equal(meta.token_endpoint, `${s.base}/auth/token`)
  t.equal(meta.revocation_endpoint, `${s.base}/auth/revoke`)
  t.same(meta.code_challenge_methods_supported, ['S256'])
  t.same(meta.token_endpoint_auth_methods_supported, ['none'])
  t.ok(meta.grant_types_supported?.includes('refresh_token'))
})

t.test('a pair: the access token is a Bearer session, the refresh grant rotates, every answer no-store', async (t) => {
  const config = await s.discover()
  const first = await s.pair('ann')
  t.equal(first.expires_in, 900)
  // `<family id>.<32 random bytes>`: the family id is the session's, which the access token carries anyway.
  const family = (await s.app.auth.tokens.parse(first.access_token)).jti
  t.equal(first.refresh_token.split('.')[0], family, 'the refresh token names its family (the access token\'s session id)')
  t.match(first.refresh_token.split('.')[1], /^[\w-]{43}$/, 'and carries 32 random bytes')
  let r = await s.app.inject({ url: '/private', headers: bearer(first.access_token) })
  t.same(r.json(), { name: 'ann' })

  const second = await oidc.refreshTokenGrant(config, first.refresh_token)
  t.equal(second.token_type, 'bearer')
  t.not(second.refresh_token, first.refresh_token, 'rotated')
  const [a, b] = await Promise.all([s.app.auth.tokens.parse(first.access_token), s.app.auth.tokens.parse(second.access_token)])
  t.equal(b.jti, a.jti, 'the access tokens of a family are one session')
  r = await s.app.inject({ url: '/private', headers: bearer(second.access_token) })
  t.same(r.json(), { name: 'ann' })
  const raw = await s.fetch(`${s.base}/auth/token`, { method: 'POST', body: new URLSearchParams({ grant_type: 'refresh_token', client_id: 'mobile', refresh_token: second.refresh_token! }) })
  t.equal(raw.status, 200)
  t.equal(raw.headers.get('cache-control'), 'no-store')
  t.match(await raw.json(), { token_type: 'Bearer', expires_in: 900 })
  t.ok(s.events.some((e) => e.type === 'token.issued' && e.clientId === 'mobile' && e.userId === 'u-ann'))
  t.ok(s.events.some((e) => e.type === 'token.refreshed' && e.clientId === 'mobile'))
})

t.test('a stolen refresh token used after its owner refreshed ends the family: every token of it refused at once', async (t) => {
  const config = await s.discover()
  const first = await s.pair('bob')
  const stolen = first.refresh_token
  const owner = await oidc.refreshTokenGrant(config, first.refresh_token)
  t.equal((await s.app.inject({ url: '/private', headers: bearer(owner.access_token) })).statusCode, 200)

  await grantError(t, oidc.refreshTokenGrant(config, stolen), 'invalid_grant')
  const event = s.events.find((e) => e.type === 'token.reuse_detected')
  t.match(event, { clientId: 'mobile', familyEnded: true, outcome: 'failure' })
  for (const token of [first.access_token, owner.access_token]) {
    const r = await s.app.inject({ url: '/private', headers: bearer(token) })
    t.equal(r.statusCode, 401, 'the family\'s access tokens are refused at once')
    t.equal(r.json().code, 'GATEHOUSE_SESSION_REVOKED')
  }
  await grantError(t, oidc.refreshTokenGrant(config, owner.refresh_token!), 'invalid_grant')
})

t.test('the thief refreshing first ends the family for the thief too', async (t) => {
  const config = await s.discover()
  const first = await s.pair('cat')
  const thief = await oidc.refreshTokenGrant(config, first.refresh_token)
  await grantError(t, oidc.refreshTokenGrant(config, first.refresh_token), 'invalid_grant')
  await grantError(t, oidc.refreshTokenGrant(config, thief.refresh_token!), 'invalid_grant')
  t.equal((await s.app.inject({ url: '/private', headers: bearer(thief.access_token) })).statusCode, 401)
})

t.test('a refresh token of before the family groups (no family id) still refreshes, into the new shape; reused, it ends the family', async (t) => {
  const config = await s.discover()
  const pair = await s.pair('gil')
  const store = coreOf(s.app).stateStore
  const hash = (v: string): string => createHash('sha256').update(v).digest('base64url')
  const family = pair.refresh_token.split('.')[0]!
  // The family's record moved to where a token of before kept it, under a token of before's shape.
  const record = await store.take(`{revoked:${family}}:mobile:${hash(pair.refresh_token)}`)
  t.type(record, 'string', 'the record is under the family\'s group')
  const old = randomBytes(32).toString('base64url')
  await store.set(`rt:mobile:${hash(old)}`, record!, 60_000)
  const next = await oidc.refreshTokenGrant(config, old)
  t.equal(next.refresh_token!.split('.')[0], family, 'the next token has the new shape, in the same family')
  t.equal((await s.app.inject({ url: '/private', headers: bearer(next.access_token) })).statusCode, 200)
  await grantError(t, oidc.refreshTokenGrant(config, old), 'invalid_grant')
  t.ok(s.events.some((e) => e.type === 'token.reuse_detected' && e.userId === undefined && e.familyEnded === true), 'the old token presented again is a reuse')
  t.equal((await s.app.inject({ url: '/private', headers: bearer(next.access_token) })).statusCode, 401, 'the family ended')
  await grantError(t, oidc.refreshTokenGrant(config, next.refresh_token!), 'invalid_grant')
})

t.test('two grants racing with one refresh token: one pair, the other a reuse that ends the family', async (t) => {
  const config = await s.discover()
  const pair = await s.pair('hal')
  const outcomes = await Promise.allSettled([oidc.refreshTokenGrant(config, pair.refresh_token), oidc.refreshTokenGrant(config, pair.refresh_token)])
  t.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1, 'one pair')
  const lost = outcomes.find((o) => o.status === 'rejected')!
  t.equal(((lost as PromiseRejectedResult).reason as oidc.ResponseBodyError).error, 'invalid_grant')
  const won = (outcomes.find((o) => o.status === 'fulfilled') as PromiseFulfilledResult<oidc.TokenEndpointResponse>).value
  t.equal((await s.app.inject({ url: '/private', headers: bearer(won.access_token) })).statusCode, 401, 'the family ended')
  await grantError(t, oidc.refreshTokenGrant(config, won.refresh_token!), 'invalid_grant')
})

t.test('revocation (RFC 7009): the refresh token ends its family; unknown tokens answer 200 too', async (t) => {
  const config = await s.discover()
  const pair = await s.pair('dan')
  await oidc.tokenRevocation(config, pair.refresh_token)
  t.ok(s.events.some((e) => e.type === 'token.revoked' && e.userId === 'u-dan'))
  await grantError(t, oidc.refreshTokenGrant(config, pair.refresh_token), 'invalid_grant')
  t.equal((await s.app.inject({ url: '/private', headers: bearer(pair.access_token) })).statusCode, 401)
  await oidc.tokenRevocation(config, 'no-such-token')

  const other = await s.pair('dan')
  await oidc.tokenRevocation(config, other.access_token, { token_type_hint: 'access_token' })
  t.equal((await s.app.inject({ url: '/private', headers: bearer(other.access_token) })).statusCode, 401, 'an access token revoked ends its family')
  await grantError(t, oidc.refreshTokenGrant(config, other.refresh_token), 'invalid_grant')
})

t.test('families are sessions: listed with their client, ended by revokeSession and revokeUser', async (t) => {
  const config = await s.discover()
  const one = await s.pair('eve')
  const two = await s.pair('eve')
  const listed = await s.app.auth.listSessions('u-eve')
  t.equal(listed.length, 2)
  t.same(listed.map((l) => l.provider), ['client:mobile', 'client:mobile'])
  t.same(listed.map((l) => l.device), ['Demo phone app', 'Demo phone app'], 'listed under the client\'s name')
  const own = await s.app.inject({ url: '/auth/sessions', headers: bearer(two.access_token) })
  t.equal(own.statusCode, 200)
  const families = (own.json() as Array<{ provider: string; device: string }>).filter((l) => l.provider === 'client:mobile')
  t.same(families.map((l) => l.device), ['Demo phone app', 'Demo phone app'], 'the user sees the name in the session list')
  const idOne = (await s.app.auth.tokens.parse(one.access_token)).jti
  await s.app.auth.revokeSession(idOne)
  await grantError(t, oidc.refreshTokenGrant(config, one.refresh_token), 'invalid_grant')
  const still = await oidc.refreshTokenGrant(config, two.refresh_token)
  await s.app.auth.revokeUser('u-eve')
  await grantError(t, oidc.refreshTokenGrant(config, still.refresh_token!), 'invalid_grant')
  t.equal((await s.app.inject({ url: '/private', headers: bearer(still.access_token) })).statusCode, 401)
  const fresh = await s.pair('eve')
  t.ok(await oidc.refreshTokenGrant(config, fresh.refresh_token), 'a family begun after revokeUser lives')
})

t.test('idle and absolute lifetimes of a family', async (t) => {
  const clock = FakeTimers.install({ toFake: ['Date'], now: Date.now() })
  t.teardown(() => clock.uninstall())
  const l = await clientsApp({
    session: { maxAge: '2h' },
    clients: [{ id: 'mobile', kind: 'native', redirectUris: ['com.example.app:/cb'], refreshToken: { maxAge: '1h', idleTimeout: '20m' } }]
  })
  t.teardown(l.close)
  const refresh = async (token: string): Promise<{ status: number; body: Record<string, string> }> => {
    const r = await l.app.inject({ method: 'POST', url: '/auth/token', payload: `grant_type=refresh_token&client_id=mobile&refresh_token=${token}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    return { status: r.statusCode, body: r.json() }
  }
  let pair = await l.pair('fay')
  clock.tick(21 * 60_000)
  t.match(await refresh(pair.refresh_token), { status: 400, body: { error: 'invalid_grant' } }, 'idle past 20 minutes')

  pair = await l.pair('fay')
  let token = pair.refresh_token
  for (let i = 0; i < 3; i++) {
    clock.tick(19 * 60_000)
    const r = await refresh(token)
    t.equal(r.status, 200, `used within the idle timeout (${i + 1})`)
    token = r.body.refresh_token!
  }
  clock.tick(4 * 60_000)
  t.match(await refresh(token), { status: 400, body: { error: 'invalid_grant', error_description: /expired/ } }, 'past the absolute hour')
})

t.test('a refresh runs the claims updater and the validator; a refusal consumes nothing', async (t) => {
  let refuse = false
  const seen: unknown[] = []
  const v = await clientsApp({
    claimsUpdater: (claims) => { seen.push(claims.user?.name); return { ...claims, plan: 'gold' } },
    validator: (_token, claims) => !(refuse && claims.user?.name === 'gil')
  })
  t.teardown(v.close)
  const config = await v.discover()
  const pair = await v.pair('gil')
  refuse = true
  await grantError(t, oidc.refreshTokenGrant(config, pair.refresh_token), 'invalid_grant')
  refuse = false
  const next = await oidc.refreshTokenGrant(config, pair.refresh_token)
  t.ok(next.access_token, 'the refused grant did not consume the token')
  t.equal((await v.app.auth.tokens.parse(next.access_token)).plan, 'gold')
  t.same(seen, ['gil', 'gil', 'gil'], 'the updater ran at issue and at each refresh')
})

t.test('bad token requests: RFC 6749 §5.2 errors, no-store, never a 5xx, nothing consumed', async (t) => {
  const pair = await s.pair('hal')
  const form = 'application/x-www-form-urlencoded'
  const valid = `grant_type=refresh_token&client_id=mobile&refresh_token=${pair.refresh_token}`
  const cases: Array<[string, string, string | Record<string, string>, number, string]> = [
    ['no grant_type', form, `client_id=mobile&refresh_token=${pair.refresh_token}`, 400, 'invalid_request'],
    ['repeated grant_type', form, `${valid}&grant_type=refresh_token`, 400, 'invalid_request'],
    ['repeated refresh_token', form, `${valid}&refresh_token=x`, 400, 'invalid_request'],
    ['oversized refresh_token', form, `grant_type=refresh_token&client_id=mobile&refresh_token=${'a'.repeat(3000)}`, 400, 'invalid_request'],
    ['unknown grant_type', form, 'grant_type=password&client_id=mobile&username=a&password=b', 400, 'unsupported_grant_type'],
    ['unknown client', form, `grant_type=refresh_token&client_id=evil&refresh_token=${pair.refresh_token}`, 401, 'invalid_client'],
    ['no client', form, `grant_type=refresh_token&refresh_token=${pair.refresh_token}`, 400, 'invalid_request'],
    ['a client secret', form, `${valid}&client_secret=s3cr3t`, 401, 'invalid_client'],
    ['another client\'s refresh token', form, `grant_type=refresh_token&client_id=cli&refresh_token=${pair.refresh_token}`, 400, 'invalid_grant'],
    ['no refresh_token', form, 'grant_type=refresh_token&client_id=mobile', 400, 'invalid_request'],
    ['JSON instead of a form', 'application/json', JSON.stringify({ grant_type: 'refresh_token', client_id: 'mobile', refresh_token: pair.refresh_token }), 400, 'invalid_request'],
    ['a 1 MB body', form, `${valid}&pad=${'a'.repeat(1024 * 1024)}`, 400, 'invalid_request'],
    ['a 1 MB JSON body', 'application/json', JSON.stringify({ pad: 'a'.repeat(1024 * 1024) }), 400, 'invalid_request'],
    ['text', 'text/plain', valid, 400, 'invalid_request']
  ]
  for (const [name, type, payload, status, error] of cases) {
    const r = await s.app.inject({ method: 'POST', url: '/auth/token', payload: payload as string, headers: { 'content-type': type } })
    t.equal(r.statusCode, status, `${name}: ${status}`)
    t.equal(r.json().error, error, `${name}: ${error}`)
    t.equal(r.json().code, 'GATEHOUSE_OAUTH')
    t.type(r.json().error_description, 'string')
    t.equal(r.headers['cache-control'], 'no-store', `${name}: no-store`)
  }
  const r = await s.app.inject({ method: 'POST', url: '/auth/token', payload: valid, headers: { 'content-type': form, authorization: 'Basic bW9iaWxlOng=' } })
  t.equal(r.statusCode, 401, 'Basic client authentication is refused')
  t.equal(r.json().error, 'invalid_client')
  const cli = await s.app.inject({ method: 'POST', url: '/auth/revoke', payload: `client_id=cli&token=${pair.refresh_token}`, headers: { 'content-type': form } })
  t.equal(cli.statusCode, 200, 'another client revoking answers 200…')
  const ok = await s.app.inject({ method: 'POST', url: '/auth/token', payload: valid, headers: { 'content-type': form } })
  t.equal(ok.statusCode, 200, '…and revokes nothing: after every refusal the token still works once')
  for (const [payload, error] of [['token=x', 'invalid_request'], ['client_id=nobody&token=x', 'invalid_client'], ['client_id=mobile', 'invalid_request']] as const) {
    const bad = await s.app.inject({ method: 'POST', url: '/auth/revoke', payload, headers: { 'content-type': form } })
    t.equal(bad.json().error, error, `revoke ${payload}`)
    t.equal(bad.headers['cache-control'], 'no-store')
  }
})

t.test('options: clients are validated at registration, naming the option', async (t) => {
  const bad: Array<[unknown, string]> = [
    [{ clients: 'mobile' }, 'clients'],
    [{ clients: [{ id: '', kind: 'native', redirectUris: ['a:/b'] }] }, 'clients[0].id'],
    [{ clients: [{ id: 'a', kind: 'web' }] }, 'clients[0].kind'],
    [{ clients: [{ id: 'a', kind: 'native' }] }, 'clients[0].redirectUris'],
    [{ clients: [{ id: 'a', kind: 'native', redirectUris: ['http://evil.example/cb'] }] }, 'clients[0].redirectUris'],
    [{ clients: [{ id: 'a', kind: 'native', redirectUris: ['app:/cb#x'] }] }, 'clients[0].redirectUris'],
    [{ clients: [{ id: 'a', kind: 'device', redirectUris: ['app:/cb'] }] }, 'clients[0].redirectUris'],
    [{ clients: [{ id: 'a', kind: 'device' }, { id: 'a', kind: 'device' }] }, 'clients[1].id'],
    [{ clients: [{ id: 'a', kind: 'device', secret: 'x' }] }, 'clients[0].secret'],
    [{ clients: [{ id: 'a', kind: 'device', refreshToken: { maxAge: '400d' } }] }, 'clients[0].refreshToken.maxAge'],
    [{ clients: [{ id: 'a', kind: 'device' }], revocation: false }, 'clients'],
    [{ clients: [{ id: 'a', kind: 'device', name: 42 }] }, 'clients[0].name'],
    [{ clients: [{ id: 'a', kind: 'device', name: '   ' }] }, 'clients[0].name'],
    [{ clients: [{ id: 'a', kind: 'device', name: 'x'.repeat(65) }] }, 'clients[0].name'],
    [{ clients: [{ id: 'a', kind: 'device', name: 'My\nCLI' }] }, 'clients[0].name'],
    [{ clients: [{ id: 'a', kind: 'device', name: 'My\u202eILC' }] }, 'clients[0].name'],
    [{ clients: [{ id: 'a', kind: 'device', name: 'Zero\u200bwidth' }] }, 'clients[0].name'],
    [{ clients: [{ id: 'a', kind: 'device', name: 'Bell\u0007' }] }, 'clients[0].name']
  ]
  for (const [opts, option] of bad) {
    await t.rejects(clientsApp(opts as never), { code: 'GATEHOUSE_OPTION', option }, option)
  }
})
