import t from 'tap'
import { spawn } from 'node:child_process'
import { createPublicKey, generateKeyPairSync, sign as cryptoSign } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import Fastify from 'fastify'
import { authPlugin } from '../../../auth.js'
import { sessionKeysOption } from '../../../plugins/core/keys/keys.js'
import type { SecretValue } from '../../../plugins/core/base/types.js'
import { client } from '../../helpers/client.js'
import { hs256, sessionClaims } from '../../helpers/forge.js'
import { SECRET, sessionApp, tokenOf, type SessionApp } from '../../helpers/session-app.js'

const S1 = 'rotation-secret-one-0123456789abcdef0123'
const S2 = 'rotation-secret-two-0123456789abcdef0123'
const headerOf = (token: string): Record<string, unknown> => JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString('utf8'))
const byHeader = async (s: SessionApp, token: string): Promise<Response> => await s.client().fetch('/private', { headers: { 'x-jwt': token } })

t.test('key rotation: old tokens keep working until their key is removed', async (t) => {
  let keys: SecretValue = [{ kid: 'k1', secret: S1 }]
  const s = await sessionApp({ secret: () => keys })
  t.teardown(s.close)
  const alice = await s.login('alice')
  t.equal(headerOf(tokenOf(alice)).kid, 'k1', 'tokens carry the key id')
  t.equal((await s.get(alice)).status, 200)

  keys = [{ kid: 'k2', secret: S2 }, { kid: 'k1', secret: S1 }]
  const bob = await s.login('bob')
  t.equal(headerOf(tokenOf(bob)).kid, 'k2', 'the first key signs new sessions')
  t.equal((await s.get(alice)).status, 200, 'the old key still verifies its sessions')
  t.equal((await s.get(bob)).status, 200)

  keys = [{ kid: 'k2', secret: S2 }]
  const r = await s.get(alice)
  t.equal(r.status, 401, 'removing the key ends its sessions, although the session was cached')
  t.equal((await byHeader(s, tokenOf(alice))).status, 401, 'from every source')
  t.equal((await s.get(bob)).status, 200, 'sessions of the remaining key go on')
})

t.test('a plain string secret is the key "default"; a list may keep it while a new key takes over', async (t) => {
  let secret: SecretValue = S1
  const s = await sessionApp({ secret: () => secret })
  t.teardown(s.close)
  const c = await s.login('carol')
  t.equal(headerOf(tokenOf(c)).kid, 'default')
  secret = [{ kid: 'next', secret: S2 }, { kid: 'default', secret: S1 }]
  t.equal((await s.get(c)).status, 200)
})

t.test('bad key ids: unknown, another audience\'s key, none with several keys: 401, nothing cached', async (t) => {
  const rings: Record<string, SecretValue> = {
    siteA: [{ kid: 'a1', secret: 'site-a-key-0123456789abcdef0123456789' }, { kid: 'a0', secret: 'site-a-old-0123456789abcdef0123456789' }],
    siteB: [{ kid: 'b1', secret: 'site-b-key-0123456789abcdef0123456789' }]
  }
  const s = await sessionApp({ secret: (aud) => rings[aud] ?? '', audiences: ['siteA', 'siteB'] })
  t.teardown(s.close)
  const claimsA = sessionClaims({ aud: ['siteA'] })
  const header = (kid?: string): Record<string, unknown> => kid === undefined ? { alg: 'HS256', typ: 'JWT' } : { alg: 'HS256', typ: 'JWT', kid }
  t.equal((await byHeader(s, hs256(claimsA, 'site-a-key-0123456789abcdef0123456789', header('a1')))).status, 200, 'control')
  for (const [label, token] of [
    ['unknown kid', hs256(claimsA, 'site-a-key-0123456789abcdef0123456789', header('zz'))],
    ['kid of site B\'s key, signed with it', hs256(claimsA, 'site-b-key-0123456789abcdef0123456789', header('b1'))],
    ['no kid while site A has two keys', hs256(claimsA, 'site-a-key-0123456789abcdef0123456789', header())],
    ['kid a0 but signed with a1', hs256(claimsA, 'site-a-key-0123456789abcdef0123456789', header('a0'))]
  ] as const) {
    const r = await byHeader(s, token)
    t.equal(r.status, 401, label)
    t.equal((await r.json()).code, 'GATEHOUSE_TOKEN_INVALID')
    t.equal(s.tokens.cache.get(token), undefined, `${label}: not cached`)
  }
})

t.test('key lists from the secret reader are checked', async (t) => {
  for (const bad of [[], [{ kid: 'bad id', secret: S1 }], [{ kid: 'a', secret: S1 }, { kid: 'a', secret: S2 }], [{ kid: 'a', secret: '' }]]) {
    // The startup check asks once and gets a good secret; the bad list comes later (a rotated vault entry).
    let calls = 0
    const s = await sessionApp({ secret: () => (calls++ === 0 ? S1 : bad) as SecretValue })
    const r = await s.client().fetch('/auth/local/login', { method: 'POST', form: { user: 'x', passwd: 'x' } })
    t.equal(r.status, 401, `login refused with ${JSON.stringify(bad)}`)
    await s.close()
  }
})

/** Verifies `token` in a separate Node process that knows only the JWKS address (jose's createRemoteJWKSet). */
async function verifyElsewhere (jwksUrl: string, token: string): Promise<{ ok: boolean; payload?: Record<string, unknown>; error?: string }> {
  const script = `
    import { createRemoteJWKSet, jwtVerify } from 'jose'
    const [url, token] = process.argv.slice(1)
    try {
      const { payload, protectedHeader } = await jwtVerify(token, createRemoteJWKSet(new URL(url)), { issuer: 'fastify-gatehouse', audience: 'shop' })
      console.log(JSON.stringify({ ok: true, payload, alg: protectedHeader.alg }))
    } catch (err) { console.log(JSON.stringify({ ok: false, error: err.code ?? err.message })) }`
  const cwd = fileURLToPath(new URL('../../..', import.meta.url))
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, jwksUrl, token], { cwd, stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => { out += d })
  await new Promise((resolve) => child.on('close', resolve))
  return JSON.parse(out)
}

for (const [alg, pair] of [
  ['EdDSA', generateKeyPairSync('ed25519')],
  ['ES256', generateKeyPairSync('ec', { namedCurve: 'P-256' })]
] as const) {
  t.test(`${alg} sessions: signed with the key pair, verified by another process from the JWKS alone`, async (t) => {
    const pem = pair.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()
    // On a port: another process fetches the JWKS.
    const s = await sessionApp({ session: { signingKeys: [{ kid: `${alg}-1`, alg, privateKey: pem }] }, audiences: ['shop'] }, undefined, { listen: true })
    t.teardown(s.close)
    const c = s.client()
    const login = await c.fetch('/auth/local/login', { method: 'POST', form: { user: 'dora', passwd: 'x', aud: 'shop' } })
    t.equal(login.status, 200)
    const token = tokenOf(c)
    t.same(headerOf(token), { alg, typ: 'JWT', kid: `${alg}-1` })
    t.equal((await c.fetch('/private', { headers: { 'x-xsrf-token': c.jar.get('XSRF-TOKEN')! } })).status, 200)

    const jwks = await s.client().fetch('/auth/.well-known/jwks.json')
    t.equal(jwks.status, 200)
    const doc = await jwks.json() as { keys: Array<Record<string, unknown>> }
    t.equal(doc.keys.length, 1)
    t.match(doc.keys[0], { kid: `${alg}-1`, alg, use: 'sig' })
    t.notOk('d' in doc.keys[0]!, 'no private part published')

    const elsewhere = await verifyElsewhere(`${s.base}/auth/.well-known/jwks.json`, token)
    t.equal(elsewhere.ok, true, `verified by a separate process (${elsewhere.error ?? ''})`)
    t.match(elsewhere.payload, { aud: ['shop'], user: { name: 'dora' } })

    // Algorithm confusion: the public key used as an HMAC secret, under the asymmetric key's id.
    const publicPem = createPublicKey(pair.privateKey).export({ format: 'pem', type: 'spki' }).toString()
    const x = String(doc.keys[0]!.x)
    for (const [label, key] of [['public PEM', publicPem], ['public JWK x', x], ['raw public bytes', Buffer.from(x, 'base64url')], ['session secret', SECRET]] as const) {
      const forged = hs256(sessionClaims({ aud: ['shop'] }), key, { alg: 'HS256', typ: 'JWT', kid: `${alg}-1` })
      t.equal((await byHeader(s, forged)).status, 401, `HS256 header with the ${label}`)
    }
    const hmacSession = hs256(sessionClaims({ aud: ['shop'] }), SECRET, { alg: 'HS256', typ: 'JWT', kid: 'default' })
    t.equal((await byHeader(s, hmacSession)).status, 401, 'HMAC sessions are refused once sessions are asymmetric')
    t.equal((await verifyElsewhere(`${s.base}/auth/.well-known/jwks.json`, hmacSession)).ok, false, 'and elsewhere')

    // A signature of our own, re-made by hand over other claims, with the right key: accepted (the control for
    // the confusion cases above); its ES256 twin (r, n - s) is refused: one token, one string.
    const input = `${token.split('.')[0]}.${Buffer.from(JSON.stringify(sessionClaims({ aud: ['shop'] }))).toString('base64url')}`
    const sig = cryptoSign(null, Buffer.from(input), alg === 'ES256' ? { key: pair.privateKey, dsaEncoding: 'ieee-p1363' } : pair.privateKey)
    if (alg === 'ES256') {
      const n = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551')
      const sv = BigInt('0x' + sig.subarray(32).toString('hex'))
      const low = Buffer.from(sig)
      const high = Buffer.from(sig)
      const lowS = sv > n / 2n ? n - sv : sv
      Buffer.from(lowS.toString(16).padStart(64, '0'), 'hex').copy(low, 32)
      Buffer.from((n - lowS).toString(16).padStart(64, '0'), 'hex').copy(high, 32)
      t.equal((await byHeader(s, `${input}.${low.toString('base64url')}`)).status, 200, 'control: low-S form accepted')
      t.equal((await byHeader(s, `${input}.${high.toString('base64url')}`)).status, 401, 'high-S twin refused')
    } else {
      t.equal((await byHeader(s, `${input}.${sig.toString('base64url')}`)).status, 200, 'control: signed with the private key')
    }
  })
}

t.test('session.signingKeys: rotation by list, and mistakes are OptionsErrors naming the key', async (t) => {
  const ed = generateKeyPairSync('ed25519')
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' })
  const pem = (k: typeof ed.privateKey): string => k.export({ format: 'pem', type: 'pkcs8' }).toString()
  // The public half of another P-256 key beside this key's d: node:crypto builds a key of it without a word.
  const otherEc = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' })
  for (const [keys, option] of [
    [[], 'session.signingKeys'],
    [[{ kid: 'a', alg: 'RS256', privateKey: pem(ed.privateKey) }], 'session.signingKeys[0].alg'],
    [[{ kid: 'a', alg: 'EdDSA', privateKey: pem(ec.privateKey) }], 'session.signingKeys[0].privateKey'],
    [[{ kid: 'a', alg: 'ES256', privateKey: pem(p384.privateKey) }], 'session.signingKeys[0].privateKey'],
    [[{ kid: 'a', alg: 'ES256', privateKey: 'not a key' }], 'session.signingKeys[0].privateKey'],
    [[{ kid: 'a', alg: 'EdDSA', privateKey: ed.publicKey }], 'session.signingKeys[0].privateKey'],
    [[{ kid: 'a', alg: 'ES256', privateKey: { ...ec.privateKey.export({ format: 'jwk' }), x: otherEc.x, y: otherEc.y } }], 'session.signingKeys[0].privateKey'],
    [[{ kid: 'a b', alg: 'EdDSA', privateKey: pem(ed.privateKey) }], 'session.signingKeys[0].kid'],
    [[{ kid: 'a', alg: 'EdDSA', privateKey: pem(ed.privateKey) }, { kid: 'a', alg: 'ES256', privateKey: pem(ec.privateKey) }], 'session.signingKeys[1].kid']
  ] as const) {
    const app = Fastify()
    app.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1', session: { signingKeys: keys as never } })
    await t.rejects(app.ready(), { code: 'GATEHOUSE_OPTION', option }, `${option}: ${JSON.stringify(keys).slice(0, 60)}`)
    await app.close()
  }
  t.throws(() => sessionKeysOption([{ kid: 'a', alg: 'ES256', privateKey: { ...ec.privateKey.export({ format: 'jwk' }), x: otherEc.x, y: otherEc.y } as never }]),
    { option: 'session.signingKeys[0].privateKey', message: /public part \(JWK x, y\) is not its own/ }, 'a JWK whose x, y are another key\'s: said so')

  // Rotation: a token of the old key verifies while the key is listed second, and the JWKS lists both.
  const first = await sessionApp({ session: { signingKeys: [{ kid: 'old', alg: 'EdDSA', privateKey: ed.privateKey }] } })
  const c = await first.login('eve')
  await first.close()
  const both = await sessionApp({ session: { signingKeys: [{ kid: 'new', alg: 'ES256', privateKey: ec.privateKey }, { kid: 'old', alg: 'EdDSA', privateKey: ed.privateKey }] } })
  t.teardown(both.close)
  t.equal((await byHeader(both, tokenOf(c))).status, 200, 'old key still verifies')
  const jwks = await (await both.client().fetch('/auth/.well-known/jwks.json')).json() as { keys: Array<{ kid: string }> }
  t.same(jwks.keys.map((k) => k.kid), ['new', 'old'])
  const onlyNew = await sessionApp({ session: { signingKeys: [{ kid: 'new', alg: 'ES256', privateKey: ec.privateKey }] } })
  t.teardown(onlyNew.close)
  t.equal((await byHeader(onlyNew, tokenOf(c))).status, 401, 'removed key: its sessions end')
  t.equal((await onlyNew.client().fetch('/auth/.well-known/jwks.json')).status, 200)
  const hmacOnly = await sessionApp()
  t.teardown(hmacOnly.close)
  t.equal((await hmacOnly.client().fetch('/auth/.well-known/jwks.json')).status, 404, 'no JWKS for HMAC sessions')
})
