/**
 * A DPoP proof (RFC 9449 §4): a JWT the client signs with its own key for one request, carrying that key's public
 * half in its header. This module reads and verifies one proof, on its own: the header (`typ` dpop+jwt, an
 * asymmetric `alg` of the allow-list, a public `jwk` of the matching key type, no `crit`), the signature (node:crypto's
 * synchronous `verify`, with the key the header carries: WebCrypto, jose's way, would hop to the thread pool and back
 * for every request), and the shape of the claims. What the claims must say about this request (method, URL, age,
 * token hash, nonce, replay) is the caller's (dpop.ts), which knows the request.
 *
 * The key's RFC 7638 thumbprint (`jkt`) is what tokens are bound to (`cnf.jkt`, RFC 9449 §6), computed here with
 * node:crypto over the key's required members only, so a proof whose key differs in any of them has another `jkt`.
 */
import { constants, createHash, createPublicKey, verify, type KeyObject } from 'node:crypto'

/** The longest proof read (RFC 9449 leaves it open; a proof with an RSA-4096 key is about 1.5 KB). */
export const MAX_PROOF_BYTES = 8 * 1024
/** The longest `jti` taken (RFC 9449 §4.2 asks for 96 bits of randomness: 16 bytes of base64url and more). */
const MAX_JTI = 256
/** RFC 7518 §3.3, §3.5: no RSA key under 2048 bits. */
const MIN_RSA_BITS = 2048

/**
 * How each asymmetric algorithm is verified (RFC 7518 §3.3-3.5, RFC 8037 §3.1, RFC 9864 for `Ed25519`): the key it
 * needs, the hash (none for EdDSA, which hashes itself), and the signature's form: ECDSA's is R || S of fixed
 * length (`ieee-p1363`, not DER), RSA's PKCS #1 v1.5 or PSS with a salt as long as the hash.
 */
interface AlgorithmUse { kty: string; crv?: string | undefined; hash: string | null; ecdsaBytes?: number | undefined; pss?: boolean | undefined }
const KEY_OF_ALG: Readonly<Record<string, AlgorithmUse>> = {
  ES256: { kty: 'EC', crv: 'P-256', hash: 'sha256', ecdsaBytes: 64 },
  ES384: { kty: 'EC', crv: 'P-384', hash: 'sha384', ecdsaBytes: 96 },
  ES512: { kty: 'EC', crv: 'P-521', hash: 'sha512', ecdsaBytes: 132 },
  EdDSA: { kty: 'OKP', crv: 'Ed25519', hash: null },
  Ed25519: { kty: 'OKP', crv: 'Ed25519', hash: null },
  PS256: { kty: 'RSA', hash: 'sha256', pss: true },
  PS384: { kty: 'RSA', hash: 'sha384', pss: true },
  PS512: { kty: 'RSA', hash: 'sha512', pss: true },
  RS256: { kty: 'RSA', hash: 'sha256' },
  RS384: { kty: 'RSA', hash: 'sha384' },
  RS512: { kty: 'RSA', hash: 'sha512' }
}
/** Every algorithm a proof may use (the `dpop.algorithms` option picks among them). */
export const DPOP_ALGORITHMS: readonly string[] = Object.keys(KEY_OF_ALG)
/** The required members of each key type (RFC 7638 §3.2), in lexicographic order: the thumbprint's input. */
const REQUIRED: Readonly<Record<string, readonly string[]>> = { EC: ['crv', 'kty', 'x', 'y'], OKP: ['crv', 'kty', 'x'], RSA: ['e', 'kty', 'n'] }
/** Members only a private (or symmetric) key has: a proof carrying one has given its key away, and is refused. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']
const B64URL = /^[A-Za-z0-9_-]+$/

/** A proof whose signature verified: its key's thumbprint and its claims, shapes checked. */
export interface Proof {
  /** The RFC 7638 thumbprint of the proof's key (base64url SHA-256). */
  readonly jkt: string
  readonly jti: string
  readonly htm: string
  readonly htu: string
  /** Seconds since the epoch. */
  readonly iat: number
  readonly ath: string | undefined
  readonly nonce: string | undefined
}

/** Why a proof is refused (the caller turns it into the RFC 9449 error of its endpoint). */
export class ProofRefused extends Error {
  constructor (readonly details: string) {
    super(details)
    this.name = 'ProofRefused'
  }
}

/**
 * What a proof's header says, by the header's exact bytes: a client signs every proof with one header (its `typ`,
 * `alg` and `jwk`), so its key is checked, hashed and imported once, not at every request. Only headers that
 * passed every check get in; bounded (the oldest goes first).
 */
interface KnownHeader { readonly alg: string; readonly jkt: string; readonly check: (input: Buffer, signature: Buffer) => boolean }
const HEADERS_KEPT = 1000
const headers = new Map<string, KnownHeader>()

/**
 * Reads and verifies one proof with the algorithms `allowed`. Throws ProofRefused with the reason; never anything
 * else for any input.
 */
export function verifyProof (value: string, allowed: ReadonlySet<string>): Proof {
  if (value.length > MAX_PROOF_BYTES) throw new ProofRefused(`the DPoP proof is larger than ${MAX_PROOF_BYTES / 1024} KB`)
  const parts = value.split('.')
  // An empty signature is a JWS's shape too (alg none): refused below by its alg, like any other outside the list.
  if (parts.length !== 3 || !B64URL.test(parts[0]!) || !B64URL.test(parts[1]!) || !/^[A-Za-z0-9_-]*$/.test(parts[2]!)) throw new ProofRefused('the DPoP proof is not a compact JWS')
  const known = headers.get(parts[0]!) ?? readHeader(parts[0]!, allowed)
  // The allow-list is the app's (`dpop.algorithms`): asked every time, the header's checks being everyone's.
  if (!allowed.has(known.alg)) throw new ProofRefused(`the DPoP proof's alg must be one of ${[...allowed].join(', ')}`)
  // The signing input is the first two segments as they came (RFC 7515 §5.2), the signature the third, decoded.
  const input = Buffer.from(value.slice(0, parts[0]!.length + 1 + parts[1]!.length), 'latin1')
  if (!known.check(input, Buffer.from(parts[2]!, 'base64url'))) throw new ProofRefused('the DPoP proof\'s signature does not verify with its jwk')
  return { jkt: known.jkt, ...claimsOf(Buffer.from(parts[1]!, 'base64url')) }
}

/** A header not met before: `typ`, an allowed `alg`, a public `jwk` of its type, imported; then kept. */
function readHeader (segment: string, allowed: ReadonlySet<string>): KnownHeader {
  const header = jsonOf(segment)
  if (header?.typ !== 'dpop+jwt') throw new ProofRefused('the DPoP proof\'s typ must be dpop+jwt')
  const alg = header.alg
  if (typeof alg !== 'string' || !allowed.has(alg)) throw new ProofRefused(`the DPoP proof's alg must be one of ${[...allowed].join(', ')}`)
  // RFC 7515 §4.1.11: a JWS naming extensions in `crit` is invalid to a recipient that supports none of them (this
  // one supports none; `b64: false` of RFC 7797 among them).
  if ('crit' in header) throw new ProofRefused('the DPoP proof\'s crit names an extension this server does not support')
  const jwk = publicJwk(header.jwk, alg)
  const known = { alg, jkt: thumbprint(jwk), check: checkerOf(jwk, KEY_OF_ALG[alg]!) }
  if (headers.size >= HEADERS_KEPT) headers.delete(headers.keys().next().value!)
  headers.set(segment, known)
  return known
}

/** The claims of a verified proof, each of its type (RFC 9449 §4.2). */
function claimsOf (payload: Buffer): Omit<Proof, 'jkt'> {
  let claims: Record<string, unknown> | undefined
  try {
    const parsed: unknown = JSON.parse(payload.toString('utf8'))
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) claims = parsed as Record<string, unknown>
  } catch {}
  if (claims === undefined) throw new ProofRefused('the DPoP proof\'s payload is not a JSON object')
  const { jti, htm, htu, iat, ath, nonce } = claims
  if (typeof jti !== 'string' || jti === '' || jti.length > MAX_JTI) throw new ProofRefused(`the DPoP proof needs a jti of 1-${MAX_JTI} characters`)
  if (typeof htm !== 'string' || typeof htu !== 'string') throw new ProofRefused('the DPoP proof needs htm and htu')
  if (typeof iat !== 'number' || !Number.isFinite(iat)) throw new ProofRefused('the DPoP proof needs a numeric iat')
  if (ath !== undefined && typeof ath !== 'string') throw new ProofRefused('the DPoP proof\'s ath must be a string')
  if (nonce !== undefined && typeof nonce !== 'string') throw new ProofRefused('the DPoP proof\'s nonce must be a string')
  return { jti, htm, htu, iat, ath, nonce }
}

/** The header's `jwk`: a public key of the type `alg` needs, reduced to its required members. */
function publicJwk (value: unknown, alg: string): Record<string, string> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new ProofRefused('the DPoP proof needs a jwk header (the public key)')
  const jwk = value as Record<string, unknown>
  if (PRIVATE_MEMBERS.some((m) => m in jwk)) throw new ProofRefused('the DPoP proof\'s jwk holds a private key: that key is compromised, make a new one')
  const need = KEY_OF_ALG[alg]!
  if (jwk.kty !== need.kty || (need.crv !== undefined && jwk.crv !== need.crv)) throw new ProofRefused(`the DPoP proof's jwk is not a${need.crv === undefined ? 'n' : ''} ${need.crv ?? need.kty} key, as ${alg} needs`)
  const members: Record<string, string> = {}
  for (const name of REQUIRED[need.kty]!) {
    const v = jwk[name]
    if (typeof v !== 'string' || v === '' || (name !== 'kty' && name !== 'crv' && !B64URL.test(v))) throw new ProofRefused(`the DPoP proof's jwk lacks its "${name}"`)
    members[name] = v
  }
  return members
}

/** The signature check of one key and algorithm: the key imported once (node:crypto), its size checked. */
function checkerOf (jwk: Record<string, string>, use: AlgorithmUse): KnownHeader['check'] {
  let key: KeyObject
  try {
    // node:crypto refuses an EC point off its curve here, and a key it cannot use at all.
    key = createPublicKey({ key: jwk, format: 'jwk' })
  } catch {
    throw new ProofRefused('the DPoP proof\'s jwk is not a usable key for its alg')
  }
  if (use.kty === 'RSA' && (key.asymmetricKeyDetails?.modulusLength ?? 0) < MIN_RSA_BITS) throw new ProofRefused(`the DPoP proof's jwk is an RSA key under ${MIN_RSA_BITS} bits`)
  const options = use.ecdsaBytes !== undefined
    ? { key, dsaEncoding: 'ieee-p1363' as const }
    : use.pss === true ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST } : { key }
  return (input, signature) => {
    // R || S of the curve's exact length; any other length is no ECDSA signature of this key.
    if (use.ecdsaBytes !== undefined && signature.length !== use.ecdsaBytes) return false
    try {
      return verify(use.hash, input, options, signature)
    } catch {
      return false
    }
  }
}

/** RFC 7638: SHA-256 over the required members, in lexicographic order, without white space. */
export function thumbprint (jwk: Readonly<Record<string, string>>): string {
  return createHash('sha256').update(JSON.stringify(jwk)).digest('base64url')
}

/** The JSON object a base64url segment holds, or undefined. */
function jsonOf (segment: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'))
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
}
