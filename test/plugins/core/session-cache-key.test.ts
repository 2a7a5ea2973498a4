/**
 * The verified-session cache finds entries by the token's signature tail (plugins/core/sessions/session-cache.ts), but
 * answers only for the exact token: a token that shares a cached token's signature with another payload is
 * verified (and refused), never served from the cache; two tokens with one tail take each other's place.
 */
import t from 'tap'
import Fastify from 'fastify'
import { SessionCache, type CachedSession } from '../../../plugins/core/sessions/session-cache.js'
import { authPlugin } from '../../../auth.js'
import { coreOf } from '../../../plugins/core/signin/internals.js'

const SECRET = 'session-cache-key-tests-secret-0123456789abcdef'

function entry (token: string): CachedSession {
  return { token, expiresAt: Date.now() + 60_000, hit: false, slot: -1 } as unknown as CachedSession
}

t.test('get answers only for the exact token', async (t) => {
  const cache = new SessionCache(10)
  const tail = 'S'.repeat(43)
  const a = entry(`header.payloadA.${tail}`)
  cache.set(a)
  t.equal(cache.get(`header.payloadA.${tail}`), a, 'the same token (another string object) is found')
  t.equal(cache.get(`header.payloadB.${tail}`), undefined, 'same tail, other token: not found')
  cache.delete(`header.payloadB.${tail}`)
  t.equal(cache.get(a.token), a, 'deleting the other token leaves the entry')
  const b = entry(`header.payloadB.${tail}`)
  cache.set(b)
  t.equal(cache.size, 1, 'same tail: one slot')
  t.equal(cache.get(a.token), undefined, 'the newer token took the place')
  t.equal(cache.get(b.token), b)
  const short = entry('short')
  cache.set(short)
  t.equal(cache.get('short'), short, 'tokens shorter than the tail are keyed whole')
  cache.delete(b.token)
  t.equal(cache.get(b.token), undefined)
  t.equal(cache.size, 1)
})

t.test('a token with a cached token\'s signature and another payload is refused', async (t) => {
  const app = Fastify()
  await app.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1', avatar: false })
  app.get('/private', { preHandler: app.auth.authenticate }, async (req) => ({ name: req.user!.name }))
  await app.ready()
  t.teardown(() => app.close())
  const { token } = await app.auth.tokens.create({ user: { name: 'alice', id: 'local_alice' } })
  const get = async (tok: string) => await app.inject({ url: '/private', headers: { 'x-jwt': tok } })
  t.same((await get(token)).json(), { name: 'alice' })
  t.ok(coreOf(app).tokens.cache.get(token), 'cached')
  const [header, payload, signature] = token.split('.') as [string, string, string]
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { user: { name: string } }
  claims.user.name = 'mallory'
  const forged = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`
  const r = await get(forged)
  t.equal(r.statusCode, 401, 'the forged token is verified, not served from the cache')
  t.equal(r.json().code, 'GATEHOUSE_TOKEN_INVALID')
  t.same((await get(token)).json(), { name: 'alice' }, 'the real token is still served')
})
