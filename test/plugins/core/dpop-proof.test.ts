/**
 * The DPoP proof verifier on its own (plugins/core/dpop-proof.ts): the RFC 7638 thumbprint (RFC 7638 §3.1's example,
 * and jose's for EC, OKP and RSA keys), the key types each algorithm takes, and proofs whose signature verifies but
 * whose claims are not of their types: each refused with its reason, never anything else.
 */
import t from 'tap'
import { generateKeyPairSync, sign } from 'node:crypto'
import { calculateJwkThumbprint, CompactSign } from 'jose'
import { DPOP_ALGORITHMS, ProofRefused, thumbprint, verifyProof } from '../../../plugins/core/dpop-proof.js'
import { jktOf, proof, proofKey, unsigned } from '../../helpers/dpop.js'

const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url')

const ALL = new Set(DPOP_ALGORITHMS)

t.test('the thumbprint of RFC 7638 §3.1\'s example key, and jose\'s of every key type', async (t) => {
  const n = '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw'
  t.equal(thumbprint({ e: 'AQAB', kty: 'RSA', n }), 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs')
  for (const alg of ['ES256', 'ES384', 'ES512', 'EdDSA', 'PS256']) {
    const key = await proofKey(alg)
    const verified = await verifyProof(await proof(key, { htm: 'GET', htu: 'https://a.example/r' }), ALL)
    t.equal(verified.jkt, await calculateJwkThumbprint(key.publicJwk, 'sha256'), `${alg}: jose's thumbprint`)
    t.equal(verified.jkt, jktOf(key.publicJwk))
  }
})

async function refused (t: Tap.Test, value: string | Promise<string>, reason: RegExp, name: string): Promise<void> {
  const err = await verifyProof(await value, ALL).then(() => undefined, (e: unknown) => e)
  t.ok(err instanceof ProofRefused, `${name}: refused`)
  t.match((err as ProofRefused).details, reason, name)
}

t.test('signed, but claims of another type or another shape: refused with their reason', async (t) => {
  const key = await proofKey('ES256')
  const at = { htm: 'GET', htu: 'https://a.example/r' }
  await refused(t, proof(key, { ...at, payload: { iat: 'now' } }), /numeric iat/, 'iat a string')
  await refused(t, proof(key, { ...at, payload: { htm: 1 } }), /needs htm and htu/, 'htm a number')
  await refused(t, proof(key, { ...at, payload: { ath: 5 } }), /ath must be a string/, 'ath a number')
  await refused(t, proof(key, { ...at, payload: { nonce: [] } }), /nonce must be a string/, 'nonce a list')
  await refused(t, proof(key, { ...at, jti: 'j'.repeat(257) }), /jti of 1-256/, 'a jti too long')
  const sign = async (payload: Uint8Array): Promise<string> => await new CompactSign(payload).setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk: key.publicJwk }).sign(key.privateKey)
  await refused(t, sign(new TextEncoder().encode('[1,2]')), /not a JSON object/, 'a JSON list')
  await refused(t, sign(new TextEncoder().encode('not json')), /not a JSON object/, 'not JSON')
})

t.test('keys: of the algorithm\'s type and curve, with their members, of a usable size', async (t) => {
  const es = await proofKey('ES256')
  const ed = await proofKey('EdDSA')
  const at = { htm: 'GET', htu: 'https://a.example/r' }
  await refused(t, proof(es, { ...at, header: { jwk: { ...es.publicJwk, crv: 'P-384' } } }), /not a P-256 key/, 'another curve')
  await refused(t, unsigned({ typ: 'dpop+jwt', alg: 'ES256', jwk: ed.publicJwk }, { jti: 'j', ...at, iat: 1 }, 'AAAA'), /not a P-256 key/, 'an OKP key under ES256')
  await refused(t, proof(es, { ...at, header: { jwk: { kty: 'EC', crv: 'P-256', x: es.publicJwk.x } } }), /lacks its "y"/, 'no y')
  await refused(t, proof(es, { ...at, header: { jwk: { ...es.publicJwk, x: 'not base64url!' } } }), /lacks its "x"/, 'x not base64url')
  await refused(t, proof(es, { ...at, header: { jwk: { ...es.publicJwk, x: 'AAAA' } } }), /not a usable key/, 'a point not on the curve')
  // An RSA key under 2048 bits (signed with node:crypto: jose signs with none): jose does not take it.
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 })
  const { n, e } = publicKey.export({ format: 'jwk' })
  const input = `${b64({ typ: 'dpop+jwt', alg: 'RS256', jwk: { kty: 'RSA', n, e } })}.${b64({ jti: 'j', ...at, iat: Math.floor(Date.now() / 1000) })}`
  await refused(t, `${input}.${sign('sha256', Buffer.from(input), privateKey).toString('base64url')}`, /signature does not verify|not a usable key/, 'a 1024-bit RSA key')
  await refused(t, proof(es, { ...at, header: { jwk: [1] } }), /needs a jwk/, 'a jwk that is a list')
  await refused(t, 'abc.def.ghi', /typ must be dpop\+jwt/, 'a header that is not JSON')
  await refused(t, proof(es, { ...at, header: { jwk: { ...es.publicJwk, k: 'secret' } } }), /private key/, 'a symmetric member')
})
