/**
 * Compact JWS (RFC 7515) on node:crypto for the token service: HS256 (the default), EdDSA (Ed25519) and ES256.
 * The key is chosen by the caller (by `kid` and audience, never by anything else in the header), its algorithm
 * is pinned, and a token is accepted only in its one canonical form, so that one token has exactly one string:
 * the signature segment must be what encoding its bytes gives (no stray characters, no set padding bits) and an
 * ES256 signature must be the low-S one of its two valid forms.
 */
import {
  createHmac, createPrivateKey, createPublicKey, createSecretKey, sign as cryptoSign, timingSafeEqual,
  verify as cryptoVerify, type JsonWebKey, type KeyObject
} from 'node:crypto'

export type Alg = 'HS256' | 'EdDSA' | 'ES256'
export type AsymmetricAlg = Exclude<Alg, 'HS256'>

/** One key of a key ring: signs and verifies with its one algorithm. */
export interface JwsKey {
  readonly kid: string
  readonly alg: Alg
  /** `base64url(header).` for this key, ready to prepend to an encoded payload. */
  readonly headerPrefix: string
  /** Signature of `input` (`header.payload`), base64url. */
  sign (input: string): string
  /**
   * True when `signature` (base64url, canonical) is this key's signature of `input` (a JWS signing input is text;
   * bytes are taken too, as the standards' test vectors give their messages).
   */
  verify (input: string | Uint8Array, signature: string): boolean
  /** The public key as a JWK, for asymmetric keys (what a JWKS publishes). */
  readonly publicJwk?: JsonWebKey | undefined
}

/** Longest token accepted; anything longer is refused before any decoding. */
export const MAX_TOKEN_LENGTH = 8192

const HS256_SIG_BYTES = 32
const ASYM_SIG_BYTES = 64
// Order of the P-256 group; an ES256 signature (r, s) is also valid as (r, n - s).
const P256_N = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551')
const P256_HALF_N = P256_N >> 1n

function headerPrefix (alg: Alg, kid: string): string {
  return Buffer.from(JSON.stringify({ alg, typ: 'JWT', kid })).toString('base64url') + '.'
}

/** Each base64url character's 6 bits, by character code (-1: not of the alphabet). */
const B64URL = new Int8Array(128).fill(-1)
for (const [i, c] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'].entries()) B64URL[c.charCodeAt(0)] = i

/**
 * Decodes a base64url signature, or null unless the text is exactly the canonical encoding of `bytes` bytes: the
 * right length, every character of the alphabet (Buffer.from would skip others), no padding, and the last
 * character's unused low bits zero (what re-encoding the bytes would give back, checked without encoding them).
 */
function signatureBytes (signature: string, bytes: number): Buffer | null {
  const length = Math.ceil(bytes * 4 / 3)
  if (signature.length !== length) return null
  for (let i = 0; i < length; i++) {
    const c = signature.charCodeAt(i)
    if (c > 127 || B64URL[c]! < 0) return null
  }
  const spareBits = length * 6 - bytes * 8
  if ((B64URL[signature.charCodeAt(length - 1)]! & ((1 << spareBits) - 1)) !== 0) return null
  return Buffer.from(signature, 'base64url')
}

/** An HS256 key: a secret string's UTF-8 bytes (what the `secret` option gives), or the key's bytes. */
export function hmacKey (kid: string, secret: string | Uint8Array): JwsKey {
  const key = createSecretKey(typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret)
  return {
    kid,
    alg: 'HS256',
    headerPrefix: headerPrefix('HS256', kid),
    sign: (input) => createHmac('sha256', key).update(input).digest('base64url'),
    verify (input, signature) {
      const given = signatureBytes(signature, HS256_SIG_BYTES)
      if (given === null) return false
      // Constant time: comparing the encoded strings would tell an attacker how much of a forged MAC is right.
      return timingSafeEqual(createHmac('sha256', key).update(input).digest(), given)
    }
  }
}

/**
 * An EdDSA (Ed25519) or ES256 (P-256) key from a private key (PEM, JWK or KeyObject). Throws TypeError when the
 * key is not a private key of the algorithm's curve.
 */
export function asymmetricKey (kid: string, alg: AsymmetricAlg, privateKey: string | JsonWebKey | KeyObject): JwsKey {
  const priv = toPrivateKey(privateKey)
  if (priv.type !== 'private') throw new TypeError('is not a private key')
  const isEd = priv.asymmetricKeyType === 'ed25519'
  const isP256 = priv.asymmetricKeyType === 'ec' && priv.asymmetricKeyDetails?.namedCurve === 'prime256v1'
  if (alg === 'EdDSA' && !isEd) throw new TypeError('must be an Ed25519 private key for EdDSA')
  if (alg === 'ES256' && !isP256) throw new TypeError('must be a P-256 (prime256v1) private key for ES256')
  const pub = createPublicKey(priv)
  // A private JWK carries its public half (x, y) beside d, and node:crypto takes the two without checking that they
  // belong together: such a key would sign tokens no verification accepts and publish another key's public half.
  // One signature made and checked here refuses it when the key is configured.
  const probe = Buffer.from('gatehouse key check')
  if (!cryptoVerify(null, probe, { key: pub, ...dsaOptions(alg) }, cryptoSign(null, probe, { key: priv, ...dsaOptions(alg) }))) {
    throw new TypeError('is a private key whose public part (JWK x, y) is not its own')
  }
  const publicJwk = { ...pub.export({ format: 'jwk' }), kid, alg, use: 'sig' }
  return {
    kid,
    alg,
    headerPrefix: headerPrefix(alg, kid),
    publicJwk,
    sign (input) {
      const sig = cryptoSign(null, Buffer.from(input, 'utf8'), { key: priv, ...dsaOptions(alg) })
      return (alg === 'ES256' ? lowS(sig) : sig).toString('base64url')
    },
    verify: asymmetricVerifier(alg, pub)
  }
}

/** ES256 signatures are r ‖ s (IEEE P1363, as JWS encodes them), not DER. */
function dsaOptions (alg: AsymmetricAlg): { dsaEncoding?: 'ieee-p1363' | undefined } {
  return alg === 'ES256' ? { dsaEncoding: 'ieee-p1363' } : {}
}

/**
 * The signature check of an EdDSA or ES256 key, from its public half (what `asymmetricKey` verifies with): 64
 * bytes in their canonical base64url, an ES256 one in its low-S form only, then the curve's verification.
 */
export function asymmetricVerifier (alg: AsymmetricAlg, publicKey: KeyObject): JwsKey['verify'] {
  const dsa = dsaOptions(alg)
  return (input, signature) => {
    const sig = signatureBytes(signature, ASYM_SIG_BYTES)
    if (sig === null) return false
    if (alg === 'ES256' && readS(sig) > P256_HALF_N) return false
    return cryptoVerify(null, typeof input === 'string' ? Buffer.from(input, 'utf8') : input, { key: publicKey, ...dsa }, sig)
  }
}

/** Throws only its own TypeError: crypto's messages may quote what they were given. */
function toPrivateKey (k: string | JsonWebKey | KeyObject): KeyObject {
  if (k !== null && typeof k === 'object' && 'asymmetricKeyType' in k && typeof (k as KeyObject).export === 'function') return k as KeyObject
  try {
    if (typeof k === 'string') return createPrivateKey(k)
    if (k !== null && typeof k === 'object') return createPrivateKey({ key: k as JsonWebKey, format: 'jwk' })
  } catch { /* reported below */ }
  throw new TypeError('is not a readable private key (PEM, JWK or KeyObject)')
}

function readS (sig: Buffer): bigint {
  return BigInt('0x' + sig.subarray(32).toString('hex'))
}

/** The low-S form of an ES256 signature (r, s): s is replaced by n - s when above n/2. */
function lowS (sig: Buffer): Buffer {
  const s = readS(sig)
  if (s <= P256_HALF_N) return sig
  const out = Buffer.from(sig)
  Buffer.from((P256_N - s).toString(16).padStart(64, '0'), 'hex').copy(out, 32)
  return out
}

/** Signs `payload` with `key`: `header.payload.signature`. */
export function signJws (key: JwsKey, payload: object): string {
  const input = key.headerPrefix + Buffer.from(JSON.stringify(payload)).toString('base64url')
  return input + '.' + key.sign(input)
}

/** A token split and parsed, not yet verified. */
export interface DecodedJws {
  /** Shared by every token with the same header text: read-only. */
  header: Readonly<Record<string, unknown>>
  payload: Record<string, unknown>
  /** `header.payload`, the signed text. */
  input: string
  signature: string
}

/**
 * Splits and parses a compact JWS; null when it is not one (too long, not three segments, not JSON objects, or a
 * `crit` header, which names extensions this verifier does not implement). Nothing here is trusted yet: the header
 * and payload texts are covered by the signature the caller verifies next, so any other spelling of them fails
 * there.
 */
export function decodeJws (token: string): DecodedJws | null {
  if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH) return null
  const first = token.indexOf('.')
  const last = token.lastIndexOf('.')
  if (first <= 0 || last === first || last === token.length - 1 || token.indexOf('.', first + 1) !== last) return null
  const header = headerOf(token.slice(0, first))
  const payload = parseSegment(token.slice(first + 1, last))
  if (header === null || payload === null || 'crit' in header) return null
  return { header, payload, input: token.slice(0, last), signature: token.slice(last + 1) }
}

// Every token a key signs carries the same header text, so parsed headers are kept by their text: a verification
// then decodes and parses only the payload. Bounded: past HEADER_MEMO_MAX distinct headers (forged ones, say) the
// rest are parsed each time, as without the memo. Frozen, because every token with that header shares the object.
const HEADER_MEMO_MAX = 64
const headerMemo = new Map<string, Readonly<Record<string, unknown>>>()

function headerOf (segment: string): Readonly<Record<string, unknown>> | null {
  const known = headerMemo.get(segment)
  if (known !== undefined) return known
  const header = parseSegment(segment)
  if (header === null) return null
  Object.freeze(header)
  if (headerMemo.size < HEADER_MEMO_MAX) headerMemo.set(segment, header)
  return header
}

function parseSegment (segment: string): Record<string, unknown> | null {
  // A JSON object encodes to "eyJ" (`{"`): anything else is refused before JSON.parse, whose errors are costly.
  if (!segment.startsWith('eyJ')) return null
  try {
    const v: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'))
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v as Record<string, unknown> : null
  } catch {
    return null
  }
}
