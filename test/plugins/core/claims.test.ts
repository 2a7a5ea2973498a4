import t from 'tap'
import { coreOf } from '../../../plugins/core/signin/internals.js'
import { client } from '../../helpers/client.js'
import { hs256, sameBytesVariants, sessionClaims } from '../../helpers/forge.js'
import { SECRET, sessionApp, tokenOf } from '../../helpers/session-app.js'

const s = await sessionApp()
t.teardown(s.close)

async function status (token: string): Promise<{ status: number; body: { code?: string; details?: string } }> {
  const r = await s.client().fetch('/private', { headers: { 'x-jwt': token } })
  return { status: r.status, body: await r.json() }
}

t.test('control: a hand-made token with every claim right is accepted', async (t) => {
  t.equal((await status(hs256(sessionClaims(), SECRET))).status, 200)
  t.equal((await status(hs256(sessionClaims(), SECRET, { alg: 'HS256', typ: 'JWT' }))).status, 200, 'no kid: the only key of the audience')
})

t.test('an iat in the future (beyond the 5 s leeway) is refused', async (t) => {
  const now = Math.floor(Date.now() / 1000)
  t.equal((await status(hs256(sessionClaims({ iat: now + 3 }), SECRET))).status, 200, 'within the leeway')
  const r = await status(hs256(sessionClaims({ iat: now + 3600, exp: now + 7200 }), SECRET))
  t.equal(r.status, 401)
  t.same(r.body, { error: 'unauthorized', details: 'token issued in the future', code: 'GATEHOUSE_TOKEN_INVALID' })
  t.equal((await status(hs256(sessionClaims({ auth_time: now + 3600 }), SECRET))).status, 401, 'auth_time in the future')
})

t.test('nbf, iat, exp and auth_time must be numbers', async (t) => {
  const now = Math.floor(Date.now() / 1000)
  for (const [claim, value] of [
    ['nbf', String(now)], ['nbf', undefined], ['iat', String(now)], ['iat', undefined], ['exp', String(now + 600)],
    ['exp', undefined], ['auth_time', String(now)], ['auth_time', null], ['nbf', null], ['exp', 1e400]
  ] as const) {
    const r = await status(hs256(sessionClaims({ [claim]: value }), SECRET))
    t.equal(r.status, 401, `${claim} = ${JSON.stringify(value)}`)
    t.equal(r.body.code, 'GATEHOUSE_TOKEN_INVALID')
  }
})

t.test('a session token without auth_time is refused (it would get a fresh refresh window)', async (t) => {
  const r = await status(hs256(sessionClaims({ auth_time: undefined }), SECRET))
  t.equal(r.status, 401)
  t.match(r.body.details, /auth_time/)
})

t.test('a session token carries exactly one audience', async (t) => {
  for (const aud of [[], ['', 'b'], 'a-string', [42]]) {
    const r = await status(hs256(sessionClaims({ aud }), SECRET))
    t.equal(r.status, 401, JSON.stringify(aud))
  }
})

t.test('per-site secrets: site A cannot mint a token for site B ([A, B] refused everywhere)', async (t) => {
  const secrets: Record<string, string> = { siteA: 'secret-of-site-a-0123456789abcdef0123', siteB: 'secret-of-site-b-0123456789abcdef0123' }
  const sites = await sessionApp({ secret: (aud) => secrets[aud] ?? '', audiences: ['siteA', 'siteB'] })
  t.teardown(sites.close)
  const get = async (token: string): Promise<number> => (await sites.client().fetch('/private', { headers: { 'x-jwt': token } })).status
  t.equal(await get(hs256(sessionClaims({ aud: ['siteA'] }), secrets.siteA!)), 200, 'control: A\'s token with A\'s secret')
  t.equal(await get(hs256(sessionClaims({ aud: ['siteA', 'siteB'] }), secrets.siteA!)), 401, '[A, B] signed by A')
  t.equal(await get(hs256(sessionClaims({ aud: ['siteB', 'siteA'] }), secrets.siteA!)), 401, '[B, A] signed by A')
  t.equal(await get(hs256(sessionClaims({ aud: ['siteB'] }), secrets.siteA!)), 401, 'B\'s audience with A\'s secret')
})

t.test('one token has one string: other spellings of the signature are refused', async (t) => {
  const c = await s.login('alice')
  const token = tokenOf(c)
  const variants = sameBytesVariants(token)
  t.equal(variants.length, 3, 'three other spellings decode to the same signature bytes')
  t.equal((await status(token)).status, 200, 'control: the canonical token')
  for (const v of variants) t.equal((await status(v)).status, 401, `variant ...${v.slice(-3)}`)
  t.equal((await status(token.replace(/(.{10})$/, '+$1'))).status, 401, 'a stray character in the signature')
  t.equal((await status(token + '=')).status, 401, 'padding')
})

t.test('headers: crit, another algorithm or no algorithm are refused', async (t) => {
  for (const header of [
    { alg: 'HS256', typ: 'JWT', kid: 'default', crit: ['exp'] },
    { alg: 'HS512', typ: 'JWT', kid: 'default' },
    { alg: 'none', typ: 'JWT', kid: 'default' },
    { typ: 'JWT', kid: 'default' },
    { alg: 'HS256', kid: 42 }
  ]) {
    t.equal((await status(hs256(sessionClaims(), SECRET, header))).status, 401, JSON.stringify(header))
  }
})

t.test('a key named in the token (jwk, jku, x5u, x5c) is never used: the key comes from the secret reader (ASVS 9.1.3)', async (t) => {
  const attackerKey = 'the-attacker-chose-this-key-0123456789abcdef'
  const named = {
    jwk: { kty: 'oct', k: Buffer.from(attackerKey).toString('base64url') },
    jku: 'http://127.0.0.1:9/keys.json',
    x5u: 'http://127.0.0.1:9/cert.pem',
    x5c: ['MIIBdummy']
  }
  for (const [field, value] of Object.entries(named)) {
    const header = { alg: 'HS256', typ: 'JWT', kid: 'default', [field]: value }
    const r = await status(hs256(sessionClaims(), attackerKey, header))
    t.equal(r.status, 401, `signed with the key its ${field} names: refused`)
    t.equal(r.body.code, 'GATEHOUSE_TOKEN_INVALID')
    t.equal((await status(hs256(sessionClaims(), SECRET, header))).status, 200, `the same header signed with the configured key: accepted (${field} ignored)`)
  }
})

t.test('wrong issuer or purpose signed with the session secret is refused', async (t) => {
  t.equal((await status(hs256(sessionClaims({ iss: 'someone-else' }), SECRET))).status, 401, 'issuer')
  t.equal((await status(hs256(sessionClaims({ purpose: 'handshake' }), SECRET))).status, 401, 'purpose')
  await t.rejects(coreOf(s.app).tokens.verifyPurpose('handshake', hs256(sessionClaims({ purpose: 'handshake' }), SECRET)), { statusCode: 401 }, 'a handshake token signed with the raw session secret is not a handshake token')
})

t.test('the service\'s own optional claims: client_id a string, started_at a date not in the future', async (t) => {
  const now = Math.floor(Date.now() / 1000)
  t.equal((await status(hs256(sessionClaims({ client_id: 'mobile', started_at: now }), SECRET))).status, 200, 'control')
  for (const [claim, value] of [['client_id', 42], ['client_id', ['mobile']], ['started_at', String(now)], ['started_at', now + 3600], ['started_at', -1]] as const) {
    const r = await status(hs256(sessionClaims({ [claim]: value }), SECRET))
    t.equal(r.status, 401, `${claim} = ${JSON.stringify(value)}`)
    t.equal(r.body.code, 'GATEHOUSE_TOKEN_INVALID')
  }
})
