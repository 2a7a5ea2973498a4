/**
 * A provider's key set (Apple's, any OIDC provider's) keeps its last good set when a refetch fails: an error
 * status, no answer, a malformed document or an empty set (go-pkgz/auth v2.1.7). Real HTTP against a local JWKS
 * server whose answer the test changes; the clock is faked (Date only) to age the set.
 */
import t from 'tap'
import { createServer, type Server } from 'node:http'
import { once } from 'node:events'
import FakeTimers from '@sinonjs/fake-timers'
import { exportJWK, generateKeyPair, jwtVerify, SignJWT } from 'jose'
import { JWKS_MAX_AGE_MS, JWKS_REFETCH_COOLDOWN_MS, ProviderKeys } from '../../../providers/oauth2/jwks.js'

const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true })
const jwk = { ...await exportJWK(publicKey), kid: 'k1', alg: 'ES256', use: 'sig' }
const good = JSON.stringify({ keys: [jwk] })

/** What the server answers next: a status and a body. */
let answer: { status: number; body: string } = { status: 200, body: good }
let requests = 0
const server: Server = createServer((_req, res) => {
  requests++
  res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body)
})
server.listen(0, '127.0.0.1')
await once(server, 'listening')
const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/jwks`
t.teardown(() => { server.close() })

const token = await new SignJWT({ sub: 'u1' }).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuedAt().setExpirationTime('1d').sign(privateKey)
const verifies = async (keys: ProviderKeys): Promise<string | undefined> => (await jwtVerify(token, keys.getKey)).payload.sub

t.test('a failed refetch keeps the last good set, and asks again after the cooldown', async (t) => {
  const clock = FakeTimers.install({ now: Date.now(), toFake: ['Date'] })
  t.teardown(() => { clock.uninstall(); answer = { status: 200, body: good } })
  const keys = new ProviderKeys(url, 2000, true)
  t.equal(await verifies(keys), 'u1', 'first fetch')
  const failures: Array<[string, { status: number; body: string }]> = [
    ['a 500', { status: 500, body: '{}' }],
    ['an empty set', { status: 200, body: '{"keys":[]}' }],
    ['a malformed document', { status: 200, body: '{"keys":"no"}' }],
    ['not JSON', { status: 200, body: '<html>' }],
    ['only encryption keys', { status: 200, body: JSON.stringify({ keys: [{ ...jwk, use: 'enc' }] }) }]
  ]
  for (const [what, bad] of failures) {
    answer = bad
    clock.tick(JWKS_MAX_AGE_MS)
    const before = requests
    t.equal(await verifies(keys), 'u1', `${what}: the last good set still verifies`)
    t.equal(requests, before + 1, `${what}: the provider was asked`)
    const again = requests
    t.equal(await verifies(keys), 'u1')
    t.equal(requests, again, `${what}: not asked again at once`)
    clock.tick(JWKS_REFETCH_COOLDOWN_MS)
    await verifies(keys)
    t.equal(requests, again + 1, `${what}: asked again after the cooldown`)
  }
  answer = { status: 200, body: good }
  clock.tick(JWKS_REFETCH_COOLDOWN_MS)
  t.equal(await verifies(keys), 'u1', 'recovered')
})

t.test('with no good set yet, a failing provider is an error (502), not an empty set', async (t) => {
  t.teardown(() => { answer = { status: 200, body: good } })
  for (const bad of [{ status: 503, body: '' }, { status: 200, body: '{"keys":[]}' }]) {
    answer = bad
    await t.rejects(verifies(new ProviderKeys(url, 2000)), { statusCode: 502, code: 'GATEHOUSE_UPSTREAM' }, JSON.stringify(bad))
  }
})

t.test('without keepLastGood (every provider but Apple), a failed refetch of a stale set is the 502', async (t) => {
  const clock = FakeTimers.install({ now: Date.now(), toFake: ['Date'] })
  t.teardown(() => { clock.uninstall(); answer = { status: 200, body: good } })
  const keys = new ProviderKeys(url, 2000)
  t.equal(await verifies(keys), 'u1', 'first fetch')
  clock.tick(JWKS_MAX_AGE_MS)
  answer = { status: 500, body: '{}' }
  await t.rejects(verifies(keys), { statusCode: 502, code: 'GATEHOUSE_UPSTREAM' }, 'the stale set is not used')
})

t.test('Apple keeps its last good key set; the other OpenID Connect providers do not', async (t) => {
  const { appleConfig } = await import('../../../providers/oauth2/apple.js')
  const { builtinConfig } = await import('../../../providers/oauth2/builtins.js')
  const { exportPKCS8 } = await import('jose')
  const { privateKey } = await generateKeyPair('ES256', { extractable: true })
  const pem = await exportPKCS8(privateKey)
  const apple = await appleConfig({ clientId: 'com.example.web', teamId: 'TEAM123456', keyId: 'KEY1234567' }, async () => pem)
  t.equal(apple.oidc?.keepLastGoodKeys, true)
  t.not(builtinConfig('google', 'cid', 'secret').oidc?.keepLastGoodKeys, true)
})
