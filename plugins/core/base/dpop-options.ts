/**
 * The `dpop` option group: how DPoP proofs (RFC 9449) of the registered clients are checked. Which clients use DPoP
 * is each client's `dpop` (`clients[i].dpop`); this group is what every proof must meet.
 */
import { OptionsError } from '../../../lib/errors.js'
import type { Duration } from '../../../lib/duration.js'
import { keyList, optionDuration, optionGroup } from '../../../lib/options.js'
import { DPOP_ALGORITHMS } from './dpop-proof.js'

/** What a DPoP proof must meet (`dpop` group); each client opts in or out with `clients[i].dpop`. */
export interface DPoPOptions {
  /**
   * The JWS algorithms a proof may be signed with: asymmetric ones only (`none` and the HMAC ones never). Default
   * every one the proof verifier knows: ES256, ES384, ES512, EdDSA, Ed25519, PS256, PS384, PS512, RS256, RS384, RS512
   * (RSA keys of 2048 bits or more). Listed in the metadata as `dpop_signing_alg_values_supported`.
   */
  algorithms?: readonly string[] | undefined
  /**
   * How old a proof may be (its `iat`), with 5 seconds of clock skew either way: ms or `'1m'`, at most 5 minutes.
   * A proof's `jti` is remembered (on the state store, for every instance) that long, so a proof is used once.
   * Default 1 minute.
   */
  proofMaxAge?: Duration | undefined
  /**
   * Where a proof must carry a server nonce (`DPoP-Nonce`, RFC 9449 §8–9): `'token'` at the token endpoint,
   * `'all'` at the protected routes too, `false` nowhere. A client without a current nonce is told one with
   * `use_dpop_nonce` and retries once (openid-client does by itself). Default `'token'`.
   */
  nonce?: 'token' | 'all' | false | undefined
}

/** The `dpop` group after validation. */
export interface ResolvedDPoP {
  readonly algorithms: ReadonlySet<string>
  /** The algorithms as the `algs` of a `WWW-Authenticate: DPoP` challenge (space-separated). */
  readonly algs: string
  readonly proofMaxAgeS: number
  readonly nonceAtToken: boolean
  readonly nonceAtResource: boolean
}

const DPOP_KEYS = keyList<DPoPOptions>({ algorithms: true, proofMaxAge: true, nonce: true })
const MAX_AGE_LIMIT_MS = 5 * 60_000

/** Validates the `dpop` group (OptionsError naming the option). */
export function resolveDPoP (value: unknown): ResolvedDPoP {
  const o = optionGroup<DPoPOptions>('dpop', value, DPOP_KEYS)
  const list = o.algorithms ?? DPOP_ALGORITHMS
  if (!Array.isArray(list) || list.length === 0 || list.some((a) => typeof a !== 'string' || !DPOP_ALGORITHMS.includes(a))) {
    throw new OptionsError('dpop.algorithms', `must be a non-empty list of ${DPOP_ALGORITHMS.join(', ')} (asymmetric algorithms only)`)
  }
  const maxAgeMs = optionDuration('dpop.proofMaxAge', o.proofMaxAge, 60_000)
  if (maxAgeMs < 1000 || maxAgeMs > MAX_AGE_LIMIT_MS) throw new OptionsError('dpop.proofMaxAge', 'must be between 1 second and 5 minutes')
  const nonce = o.nonce ?? 'token'
  if (nonce !== 'token' && nonce !== 'all' && nonce !== false) throw new OptionsError('dpop.nonce', 'must be "token", "all" or false')
  const algorithms = new Set(list as string[])
  return { algorithms, algs: [...algorithms].join(' '), proofMaxAgeS: Math.ceil(maxAgeMs / 1000), nonceAtToken: nonce !== false, nonceAtResource: nonce === 'all' }
}
