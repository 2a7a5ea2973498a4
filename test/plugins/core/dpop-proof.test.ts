/**
 * The DPoP proof verifier on its own (plugins/core/base/dpop-proof.ts): the RFC 7638 thumbprint (RFC 7638 §3.1's example,
 * and jose's for EC, OKP and RSA keys), the key types each algorithm takes, each algorithm's signature form (node:crypto
 * verifies what jose signs, and nothing of another form), and proofs whose signature verifies but whose claims are not
 * of their types: each refused with its reason, never anything else.
 */
import t from 'tap'
import { constants, createPrivateKey, generateKeyPairSync, sign, type JsonWebKey } from 'node:crypto'
import { calculateJwkThumbprint, CompactSign } from 'jose'
import { DPOP_ALGORITHMS, ProofRefused, thumbprint, verifyProof } from '../../../plugins/core/base/dpop-proof.js'
import { jktOf, proof, proofKey, unsigned } from '../../helpers/dpop.js'

const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url')

const ALL = new Set(DPOP_ALGORITHMS)

t.test('the thumbprint of RFC 7638 §3.1\'s example key, and jose\'s of every key type', async (t) => {
  const n = '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw'
  t.equal(thumbprint({ e: 'AQAB', kty: 'RSA', n }), 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs')
  for (const alg of ['ES256', 'ES384', 'ES512', 'EdDSA', 'PS256']) {
    const key = await proofKey(alg)
    const verified = verifyProof(await proof(key, { htm: 'GET', htu: 'https://a.example/r' }), ALL)
    t.equal(verified.jkt, await calculateJwkThumbprint(key.publicJwk, 'sha256'), `${alg}: jose's thumbprint`)
    t.equal(verified.jkt, jktOf(key.publicJwk))
  }
})

async function refused (t: Tap.Test, value: string | Promise<string>, reason: RegExp, name: string): Promise<void> {
  let err: unknown
  try {
    verifyProof(await value, ALL)
  } catch (e) {
    err = e
  }
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
  // An RSA key under 2048 bits (signed with node:crypto: jose signs with none).
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 })
  const { n, e } = publicKey.export({ format: 'jwk' })
  const input = `${b64({ typ: 'dpop+jwt', alg: 'RS256', jwk: { kty: 'RSA', n, e } })}.${b64({ jti: 'j', ...at, iat: Math.floor(Date.now() / 1000) })}`
  await refused(t, `${input}.${sign('sha256', Buffer.from(input), privateKey).toString('base64url')}`, /an RSA key under 2048 bits/, 'a 1024-bit RSA key')
  await refused(t, proof(es, { ...at, header: { jwk: [1] } }), /needs a jwk/, 'a jwk that is a list')
  await refused(t, 'abc.def.ghi', /typ must be dpop\+jwt/, 'a header that is not JSON')
  await refused(t, proof(es, { ...at, header: { jwk: { ...es.publicJwk, k: 'secret' } } }), /private key/, 'a symmetric member')
})

t.test('every algorithm: jose\'s proof verifies, the same proof with one bit of its signature changed does not', async (t) => {
  const at = { htm: 'GET', htu: 'https://a.example/r' }
  for (const alg of DPOP_ALGORITHMS) {
    const key = await proofKey(alg)
    const good = await proof(key, at)
    t.equal(verifyProof(good, ALL).htu, at.htu, `${alg}: verifies`)
    const [h, p, sig] = good.split('.') as [string, string, string]
    const bytes = Buffer.from(sig, 'base64url')
    bytes[bytes.length >> 1]! ^= 1
    await refused(t, `${h}.${p}.${bytes.toString('base64url')}`, /signature does not verify/, `${alg}: a changed bit`)
    await refused(t, `${h}.${b64({ jti: 'other', ...at, iat: 1 })}.${sig}`, /signature does not verify/, `${alg}: another payload`)
  }
})

t.test('signatures of another form: RSA PKCS #1 v1.5 under PS256 and PSS under RS256, ECDSA in DER, none at all', async (t) => {
  const at = { htm: 'GET', htu: 'https://a.example/r', iat: Math.floor(Date.now() / 1000), jti: 'j' }
  const rsa = await proofKey('RS256')
  const rsaKey = createPrivateKey({ key: rsa.privateJwk as JsonWebKey, format: 'jwk' })
  const signed = (alg: string, jwk: unknown, signer: (input: Buffer) => Buffer): string => {
    const input = `${b64({ typ: 'dpop+jwt', alg, jwk })}.${b64(at)}`
    return `${input}.${signer(Buffer.from(input)).toString('base64url')}`
  }
  const pkcs1 = (input: Buffer): Buffer => sign('sha256', input, rsaKey)
  const pss = (input: Buffer): Buffer => sign('sha256', input, { key: rsaKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 })
  t.equal(verifyProof(signed('RS256', rsa.publicJwk, pkcs1), ALL).jti, 'j', 'RS256 with PKCS #1 v1.5: taken')
  t.equal(verifyProof(signed('PS256', rsa.publicJwk, pss), ALL).jti, 'j', 'PS256 with PSS, a 32-byte salt: taken')
  await refused(t, signed('PS256', rsa.publicJwk, pkcs1), /signature does not verify/, 'PKCS #1 v1.5 under PS256')
  await refused(t, signed('RS256', rsa.publicJwk, pss), /signature does not verify/, 'PSS under RS256')
  const short = (input: Buffer): Buffer => sign('sha256', input, { key: rsaKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 0 })
  await refused(t, signed('PS256', rsa.publicJwk, short), /signature does not verify/, 'PSS with an empty salt (RFC 7518 §3.5: as long as the hash)')
  const es = await proofKey('ES256')
  const esKey = createPrivateKey({ key: es.privateJwk as JsonWebKey, format: 'jwk' })
  t.equal(verifyProof(signed('ES256', es.publicJwk, (input) => sign('sha256', input, { key: esKey, dsaEncoding: 'ieee-p1363' })), ALL).jti, 'j', 'ES256 as R || S: taken')
  await refused(t, signed('ES256', es.publicJwk, (input) => sign('sha256', input, esKey)), /signature does not verify/, 'ES256 in DER')
  await refused(t, signed('ES256', es.publicJwk, () => Buffer.alloc(0)), /signature does not verify/, 'no signature')
  await refused(t, signed('ES256', es.publicJwk, () => Buffer.alloc(64)), /signature does not verify/, 'R and S zero')
})

t.test('a header naming extensions in crit: refused (RFC 7515 §4.1.11), b64 false among them', async (t) => {
  // Signed with node:crypto (jose signs no crit it does not know): the signature is right, the header is not.
  const key = await proofKey('ES256')
  const privateKey = createPrivateKey({ key: key.privateJwk as JsonWebKey, format: 'jwk' })
  const at = { jti: 'j', htm: 'GET', htu: 'https://a.example/r', iat: Math.floor(Date.now() / 1000) }
  for (const [name, extra] of [['crit exp', { crit: ['exp'], exp: 1 }], ['crit b64', { crit: ['b64'], b64: false }]] as const) {
    const input = `${b64({ typ: 'dpop+jwt', alg: 'ES256', jwk: key.publicJwk, ...extra })}.${b64(at)}`
    await refused(t, `${input}.${sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`, /crit names an extension/, name)
  }
})
