/**
 * Key rings of the token service. Session tokens are signed with the first key of their audience's ring and
 * verified with the key their `kid` names in that same ring (a ring of one key also takes a token without `kid`);
 * so a key of another audience, or one removed from the ring, never verifies anything.
 *
 * - HMAC (default): the `secret` reader returns, per audience, a secret or a list `{ kid, secret }[]` (first signs).
 *   Tokens of other purposes (OAuth2 handshake, confirmation) use keys derived from the same secrets per purpose.
 * - Asymmetric (opt-in, `session.signingKeys`): session tokens are signed with EdDSA or ES256 keys shared by every
 *   audience, and their public halves are published as a JWKS; other purposes keep their HMAC keys.
 */
import type { JsonWebKey } from 'node:crypto'
import { OptionsError } from '../../../lib/errors.js'
import type { MaybePromise } from '../../../lib/user.js'
import { asymmetricKey, hmacKey, type JwsKey } from '../base/jws.js'
import type { SecretKeyEntry, SecretValue, SessionKey, TokenPurpose } from '../base/types.js'

/** The key id a plain string secret gets. */
export const DEFAULT_KID = 'default'
const KID_RE = /^[A-Za-z0-9._-]{1,64}$/

/** The keys of one audience and purpose. */
export class KeyRing {
  private readonly byKid = new Map<string, JwsKey>()
  constructor (readonly keys: readonly JwsKey[]) {
    for (const k of keys) this.byKid.set(k.kid, k)
  }

  /** The key that signs new tokens. */
  get signer (): JwsKey { return this.keys[0]! }

  /** The key a token header names, or undefined. Without a `kid`, only a ring of one key answers. */
  pick (kid: unknown): JwsKey | undefined {
    if (kid === undefined) return this.keys.length === 1 ? this.keys[0] : undefined
    return typeof kid === 'string' ? this.byKid.get(kid) : undefined
  }
}

/** The published JWKS document (asymmetric session keys only). */
export interface Jwks { keys: JsonWebKey[] }

export interface KeyRings {
  /** The ring of an audience for a purpose; sync when the secret reader is. Throws HttpError 401 for no secret. */
  ring (aud: string, purpose: TokenPurpose): MaybePromise<KeyRing>
  /** What the secret reader answered when `key` was made (undefined for `session.signingKeys`' keys). */
  originOf (key: JwsKey): unknown
  /**
   * Whether `key` is still in `aud`'s session ring. The reader is asked every time; when it answers `origin` (the
   * `originOf(key)` the caller kept) again, nothing else is looked up: the same secret (or the same key list) makes
   * the same keys. Sync when the reader is. Throws HttpError 401 for no secret.
   */
  holds (aud: string, key: JwsKey, origin: unknown): MaybePromise<boolean>
  /** The JWKS of the session keys, or null when sessions are HMAC-signed. */
  readonly jwks: Jwks | null
}

interface Memo { value: SecretValue; rings: Map<TokenPurpose, KeyRing> }

/**
 * Audiences whose rings are remembered. A reader answering what it answered before (the same value, or a list of the
 * same keys) keeps the ring and its key objects, which is how the session cache knows a key is still there.
 */
const MEMO_SIZE = 256

/**
 * Builds the key rings. `reader` is the `secret` option; `sessionKeys` (`session.signingKeys`) the validated asymmetric keys or undefined.
 * `onBadSecret` builds the error thrown when the reader has no usable secret for an audience.
 */
export function createKeyRings (
  reader: (aud: string) => MaybePromise<SecretValue>,
  sessionKeys: readonly JwsKey[] | undefined,
  onBadSecret: (reason: string) => Error
): KeyRings {
  const memo = new Map<string, Memo>()
  const sessionRing = sessionKeys === undefined ? undefined : new KeyRing(sessionKeys)
  const origins = new WeakMap<JwsKey, SecretValue>()

  function fromValue (aud: string, value: SecretValue, purpose: TokenPurpose): KeyRing {
    let m = memo.get(aud)
    if (m === undefined || (m.value !== value && !sameKeys(m.value, value))) {
      checkSecretValue(value, onBadSecret)
      if (memo.size >= MEMO_SIZE && m === undefined) memo.delete(memo.keys().next().value!)
      m = { value, rings: new Map() }
      memo.set(aud, m)
    }
    let ring = m.rings.get(purpose)
    if (ring === undefined) {
      const entries: readonly SecretKeyEntry[] = typeof value === 'string' ? [{ kid: DEFAULT_KID, secret: value }] : value
      // Other purposes get derived keys, so that no bug in a purpose check can let one kind of token pass as another.
      ring = new KeyRing(entries.map((e) => hmacKey(e.kid, purpose === 'session' ? e.secret : `${purpose}:${e.secret}`)))
      for (const k of ring.keys) origins.set(k, value)
      m.rings.set(purpose, ring)
    }
    return ring
  }

  return {
    ring (aud, purpose) {
      if (purpose === 'session' && sessionRing !== undefined) return sessionRing
      const value = reader(aud)
      if (value !== null && typeof value === 'object' && typeof (value as Promise<SecretValue>).then === 'function') {
        return (value as Promise<SecretValue>).then((v) => fromValue(aud, v, purpose))
      }
      return fromValue(aud, value as SecretValue, purpose)
    },
    originOf: (key) => origins.get(key),
    holds (aud, key, origin) {
      if (sessionRing !== undefined) return sessionRing.pick(key.kid) === key
      const value = reader(aud)
      if (value === origin && origin !== undefined) return true
      if (value !== null && typeof value === 'object' && typeof (value as Promise<SecretValue>).then === 'function') {
        return (value as Promise<SecretValue>).then((v) => (v === origin && origin !== undefined) || fromValue(aud, v, 'session').pick(key.kid) === key)
      }
      return fromValue(aud, value as SecretValue, 'session').pick(key.kid) === key
    },
    jwks: sessionKeys === undefined ? null : { keys: sessionKeys.map((k) => k.publicJwk!) }
  }
}

function sameKeys (a: SecretValue, b: unknown): boolean {
  if (typeof a === 'string' || !Array.isArray(b) || a.length !== b.length) return false
  return a.every((e, i) => e.kid === (b[i] as SecretKeyEntry)?.kid && e.secret === (b[i] as SecretKeyEntry)?.secret)
}

function checkSecretValue (value: unknown, onBad: (reason: string) => Error): void {
  if (typeof value === 'string') {
    if (value === '') throw onBad('no secret for this audience')
    return
  }
  if (!Array.isArray(value) || value.length === 0) throw onBad('no secret for this audience')
  const seen = new Set<string>()
  for (const e of value as unknown[]) {
    const { kid, secret } = (e ?? {}) as Partial<SecretKeyEntry>
    if (typeof kid !== 'string' || !KID_RE.test(kid) || seen.has(kid) || typeof secret !== 'string' || secret === '') {
      throw onBad('the secret reader returned a key list that is not [{ kid, secret }] with unique key ids')
    }
    seen.add(kid)
  }
}

/** Validates the `session.signingKeys` option and builds its keys (OptionsError naming the option on any mistake). */
export function sessionKeysOption (value: unknown): JwsKey[] | undefined {
  if (value === undefined) return undefined
  if (!Array.isArray(value) || value.length === 0) throw new OptionsError('session.signingKeys', 'must be a non-empty list of { kid, alg, privateKey }')
  const seen = new Set<string>()
  return value.map((k: Partial<SessionKey>, i) => {
    const name = `session.signingKeys[${i}]`
    if (k === null || typeof k !== 'object') throw new OptionsError(name, 'must be { kid, alg, privateKey }')
    if (typeof k.kid !== 'string' || !KID_RE.test(k.kid)) throw new OptionsError(`${name}.kid`, 'must be 1-64 letters, digits, ".", "_" or "-"')
    if (seen.has(k.kid)) throw new OptionsError(`${name}.kid`, `"${k.kid}" is used twice`)
    seen.add(k.kid)
    if (k.alg !== 'EdDSA' && k.alg !== 'ES256') throw new OptionsError(`${name}.alg`, 'must be "EdDSA" or "ES256"')
    try {
      return asymmetricKey(k.kid, k.alg, k.privateKey as string)
    } catch (err) {
      // The key material itself never goes into the message.
      throw new OptionsError(`${name}.privateKey`, err instanceof TypeError ? err.message : 'is not a readable private key (PEM, JWK or KeyObject)')
    }
  })
}
