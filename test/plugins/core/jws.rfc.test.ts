/**
 * The JOSE standards' own examples through the session tokens' verifier, at its signature layer: `decodeJws`
 * (jws.ts) reads the compact token, `checkSignature` (verify.ts) picks the key its `kid` names in a key ring (a
 * ring of one key also takes a token without `kid`), pins that key's algorithm and checks the signature: exactly
 * what a session token goes through before its claims. The claims layer is not run: the examples carry no `aud`,
 * `iat` or `auth_time`, which a session token must (test/plugins/core/claims*.test.ts). Where the product signs
 * with the example's key, its signature must be the RFC's (HMAC and Ed25519 are deterministic).
 *
 * The session tokens take HS256, EdDSA and ES256. RFC 7520 §4 examples of other algorithms (§4.1 RS256, §4.2
 * PS384, §4.3 ES512) are refused at the algorithm pin (shown with §4.3's); §4.5 (detached content) and §4.7 (no
 * protected header) have no compact form the verifier reads; §4.8 (several signatures) is JSON serialization
 * only, which the session tokens never use.
 */
import t from 'tap'
import { HttpError } from '../../../lib/errors.js'
import { asymmetricKey, decodeJws, hmacKey, type JwsKey } from '../../../plugins/core/base/jws.js'
import { KeyRing } from '../../../plugins/core/keys/keys.js'
import { checkSignature, UNKNOWN_KEY } from '../../../plugins/core/keys/verify.js'

/** The signature layer's verdict on a compact token: the key that verified it, or the 401's details. */
function verdict (token: string, ...keys: JwsKey[]): JwsKey | string {
  const d = decodeJws(token)
  if (d === null) return 'malformed token'
  try {
    return checkSignature(new KeyRing(keys), d)
  } catch (err) {
    if (err instanceof HttpError && err.statusCode === 401) return err.details!
    throw err
  }
}

const otherHmac = hmacKey('other', 'another-secret-0123456789abcdef-0123')
/** The token with one more claim in its payload, header and signature kept: well formed, not signed. */
function tamper (token: string): string {
  const [h, p, s] = token.split('.') as [string, string, string]
  const claims = { ...JSON.parse(Buffer.from(p, 'base64url').toString()), admin: true }
  return `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`
}

// RFC 8037 Appendix A.1 (the Ed25519 private key as a JWK; A.2 is its public half) and A.4 (the JWS of the text
// "Example of Ed25519 signing" under {"alg":"EdDSA"}); A.5 verifies the same.
const ED_JWK = { kty: 'OKP', crv: 'Ed25519', d: 'nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' }

// RFC 7515 Appendix A.1: HS256. The key (A.1.1, JWK `k`), the compact token (A.1.1's result) and its claims.
const A1_K = 'AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow'
const A1_JWS = 'eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9' +
  '.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ' +
  '.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'

t.test('RFC 7515 A.1 (HS256): accepted by a ring holding its key; the product signs it alike', async (t) => {
  // The key is 64 bytes that are not UTF-8 text: the `secret` option (a string, used as its UTF-8) cannot hold
  // it, so the key is given as bytes to hmacKey, the constructor the `secret` reader's strings go through.
  const key = hmacKey('default', Buffer.from(A1_K, 'base64url'))
  t.equal(verdict(A1_JWS, key), key, 'no kid: the ring\'s one key verifies it')
  const d = decodeJws(A1_JWS)!
  t.same(d.header, { typ: 'JWT', alg: 'HS256' })
  t.same(d.payload, { iss: 'joe', exp: 1300819380, 'http://example.com/is_root': true })
  t.equal(key.sign(d.input), d.signature, 'the product\'s HS256 of the signing input is the RFC\'s')

  t.equal(verdict(tamper(A1_JWS), key), 'invalid token', 'payload changed')
  t.equal(verdict(A1_JWS, otherHmac), 'invalid token', 'another key')
  t.equal(verdict(A1_JWS, key, otherHmac), UNKNOWN_KEY, 'no kid and a ring of two keys: no key is guessed')
  t.equal(verdict(A1_JWS, asymmetricKey('default', 'EdDSA', ED_JWK)), 'algorithm not allowed', 'HS256 never verified by an EdDSA key')
})

// RFC 8037 A.4: the compact JWS (its key is ED_JWK above).
const A4_JWS = 'eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc' +
  '.hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg'

t.test('RFC 8037 A.4 (EdDSA): the product signs the RFC\'s signature and accepts it', async (t) => {
  const key = asymmetricKey('a1', 'EdDSA', ED_JWK)
  t.equal(key.publicJwk?.x, ED_JWK.x, 'A.2: the public key')
  const [header, payload, signature] = A4_JWS.split('.') as [string, string, string]
  t.equal(Buffer.from(payload, 'base64url').toString(), 'Example of Ed25519 signing')
  t.equal(key.sign(`${header}.${payload}`), signature, 'Ed25519 is deterministic: the RFC\'s signature')
  // decodeJws reads JSON-object payloads only (a session token's claims): the RFC's text payload is signed
  // under the same key through the layer that takes bytes.
  t.equal(decodeJws(A4_JWS), null, 'a payload that is not a JSON object is not a session token')
  t.equal(key.verify(`${header}.${payload}`, signature), true, 'A.5: the signature verifies')
  t.equal(key.verify(`${header}.${payload}x`, signature), false, 'another text')
  // The same key and header over a JSON payload, through the whole signature layer.
  const claims = Buffer.from(JSON.stringify({ sub: 'rfc8037' })).toString('base64url')
  const token = `${header}.${claims}.${key.sign(`${header}.${claims}`)}`
  t.equal(verdict(token, key), key)
  t.equal(verdict(tamper(token), key), 'invalid token')
})

// RFC 7515 Appendix A.3: ES256. The P-256 key (A.3.1, JWK) and the compact token (A.3.1's result).
const ES_JWK = { kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0', d: 'jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI' }
const A3_JWS = 'eyJhbGciOiJFUzI1NiJ9' +
  '.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ' +
  '.DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q'
const P256_N = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551')

t.test('RFC 7515 A.3 (ES256): its high-S signature is refused, its low-S twin accepted', async (t) => {
  const key = asymmetricKey('a3', 'ES256', ES_JWK)
  const [header, payload, signature] = A3_JWS.split('.') as [string, string, string]
  const sig = Buffer.from(signature, 'base64url')
  const s = BigInt('0x' + sig.subarray(32).toString('hex'))
  t.ok(s > P256_N >> 1n, 'the RFC\'s s is above n/2')
  // The product's documented choice (docs/guide/sessions.md): an ES256 token is accepted in its low-S form only,
  // so that one token has one string. The RFC's signature is valid ECDSA, and refused for that rule alone:
  t.equal(verdict(A3_JWS, key), 'invalid token', 'the RFC\'s high-S signature: refused')
  const twin = Buffer.concat([sig.subarray(0, 32), Buffer.from((P256_N - s).toString(16).padStart(64, '0'), 'hex')]).toString('base64url')
  t.equal(verdict(`${header}.${payload}.${twin}`, key), key, '(r, n − s): accepted')
  t.equal(verdict(tamper(`${header}.${payload}.${twin}`), key), 'invalid token')
  const own = key.sign(`${header}.${payload}`)
  t.ok(BigInt('0x' + Buffer.from(own, 'base64url').subarray(32).toString('hex')) <= P256_N >> 1n, 'the product signs in low-S form')
  t.equal(verdict(`${header}.${payload}.${own}`, key), key)
})

// RFC 7520 §3.5: the symmetric key of the HMAC examples; §4: the payload (Figure 7, "It’s a dangerous
// business, Frodo, …", base64url) and the §4.4, §4.5, §4.6 and §4.7 results.
const C_KID = '018c0ae5-4d9b-471b-bfd6-eef314bc7037'
const C_K = 'hJtXIZ2uSN5kbQfbtTNWbpdmhkV8FJG-Onbc6mxCcYg'
const C_PAYLOAD = 'SXTigJlzIGEgZGFuZ2Vyb3VzIGJ1c2luZXNzLCBGcm9kbywgZ29pbmcgb3V0IHlvdXIgZG9vci4gWW91IHN0ZXAgb250byB0aGUgcm9hZCwgYW5kIGlmIHlvdSBkb24ndCBrZWVwIHlvdXIgZmVldCwgdGhlcmXigJlzIG5vIGtub3dpbmcgd2hlcmUgeW91IG1pZ2h0IGJlIHN3ZXB0IG9mZiB0by4'
const C44_HEADER = 'eyJhbGciOiJIUzI1NiIsImtpZCI6IjAxOGMwYWU1LTRkOWItNDcxYi1iZmQ2LWVlZjMxNGJjNzAzNyJ9'
const C44_SIG = 's0h6KThzkfBBBkLspW1h84VsJZFTsPPqMDA7g1Md7p0'
const C46_HEADER = 'eyJhbGciOiJIUzI1NiJ9'
const C46_SIG = 'bWUSVaxorn7bEF1djytBd0kHv70Ly5pvbomzMWSOr20'
const C47_SIG = 'xuLifqLGiblpv9zBpuZczWhNj1gARaLV3UxvxhJxZuk'
// §4.3 (ES512 with the P-521 key of §3.2): header and signature.
const C43_HEADER = 'eyJhbGciOiJFUzUxMiIsImtpZCI6ImJpbGJvLmJhZ2dpbnNAaG9iYml0b24uZXhhbXBsZSJ9'
const C43_SIG = 'AE_R_YZCChjn4791jSQCrdPZCNYqHXCTZH0-JZGYNlaAjP2kqaluUIIUnC9qvbu9Plon7KRTzoNEuT4Va2cmL1eJAQy3mtPBu_u_sDDyYjnAMDxXPn7XrT0lw-kvAD890jl8e2puQens_IEKBpHABlsbEPX6sFY8OcGDqoRuBomu9xQ2'

t.test('RFC 7520 §4 (JOSE cookbook), the HS256 examples and the ones the session tokens do not take', async (t) => {
  const key = hmacKey(C_KID, Buffer.from(C_K, 'base64url'))
  t.equal(Buffer.from(C_PAYLOAD, 'base64url').toString(), 'It\u2019s a dangerous business, Frodo, going out your door. You step onto the road, and if you don\'t keep your feet, there\u2019s no knowing where you might be swept off to.')

  // §4.4 has a text payload too: its signature is checked by the key (the product signs it alike), and the
  // whole layer runs on the same header and key over a JSON payload.
  t.equal(key.sign(`${C44_HEADER}.${C_PAYLOAD}`), C44_SIG, '§4.4: the product\'s signature is the RFC\'s')
  t.equal(key.verify(`${C44_HEADER}.${C_PAYLOAD}`, C44_SIG), true, '§4.4 verifies')
  const claims = Buffer.from(JSON.stringify({ sub: 'frodo' })).toString('base64url')
  t.same(decodeJws(`${C44_HEADER}.${claims}.x`)?.header, { alg: 'HS256', kid: C_KID })
  const token = `${C44_HEADER}.${claims}.${key.sign(`${C44_HEADER}.${claims}`)}`
  t.equal(verdict(token, otherHmac, key), key, '§4.4\'s kid picks its key out of a ring of two')
  t.equal(verdict(token, otherHmac), UNKNOWN_KEY, 'a ring without that kid')

  t.equal(decodeJws(`${C44_HEADER}..${C44_SIG}`), null, '§4.5: detached content is not read (no empty payload)')
  // §4.6: the protected header holds only "alg" (the kid was unprotected, JSON serialization); its compact form
  // is the protected header, the payload and the signature.
  t.equal(key.verify(`${C46_HEADER}.${C_PAYLOAD}`, C46_SIG), true, '§4.6 verifies')
  t.equal(key.verify(`${C44_HEADER}.${C_PAYLOAD}`, C46_SIG), false, '§4.6\'s signature covers its own header only')
  t.equal(key.verify(`.${C_PAYLOAD}`, C47_SIG), true, '§4.7: the signature over an empty protected header, as the RFC gives it')
  t.equal(decodeJws(`.${C_PAYLOAD}.${C47_SIG}`), null, '§4.7: a token without a protected header is not read')

  // §4.3's header and signature over a JSON payload (the RFC's is text): the verdict comes from the header alone.
  const es512 = `${C43_HEADER}.${claims}.${C43_SIG}`
  t.same(decodeJws(es512)?.header, { alg: 'ES512', kid: 'bilbo.baggins@hobbiton.example' })
  const bilbo = asymmetricKey('bilbo.baggins@hobbiton.example', 'ES256', ES_JWK)
  t.equal(verdict(es512, bilbo), 'algorithm not allowed', '§4.3 ES512: refused even by a key of its kid')
})
