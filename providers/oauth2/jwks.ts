/**
 * A provider's JSON Web Key Set (the keys its ID tokens are signed with), fetched and cached here rather than
 * by jose's remote key set, which reads the whole document with no size limit and whose deadline is an
 * AbortSignal: the document comes through the same capped, deadline-bound call as every other provider
 * answer (upstream.ts) and is then handed to jose as a local key set.
 *
 * Refetching: the set is fetched on first use and again once it is older than `JWKS_MAX_AGE_MS`; an ID token
 * naming a key the set does not hold (a rotation) fetches it again, unless the set was fetched for this very
 * token, and such fetches are at most one per `JWKS_REFETCH_COOLDOWN_MS`, so tokens with made-up key ids cannot
 * make us hammer the provider. The cooldown counts from the last of these fetches only: the next login after a
 * rotation fetches the new key however recently the set was read. Concurrent logins share one fetch.
 *
 * With `keepLastGood` (Apple's, as go-pkgz/auth v2.1.7 does), a failed refetch keeps the last good set (see `fetch`);
 * other providers' failed refetch is the login's 502/504, so a provider answering garbage is seen, not masked.
 *
 * A token without `kid` is taken only while the set holds one signing key (OIDC Core §10.1: with several, the
 * `kid` is required), even when only one of them could verify it.
 */
import { createLocalJWKSet, errors as joseErrors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose'
import { HttpError } from '../../lib/errors.js'
import { callProvider, jsonObject, upstreamError } from './upstream.js'

/** Age after which a cached key set is fetched again at its next use. */
export const JWKS_MAX_AGE_MS = 10 * 60_000
/** Least time between two fetches caused by a token naming an unknown key. */
export const JWKS_REFETCH_COOLDOWN_MS = 5 * 60_000

type LocalKeySet = ReturnType<typeof createLocalJWKSet>

/** A fetched key set: jose's resolver over it, and how many of its keys may verify signatures. */
interface KeySet { resolve: LocalKeySet; signingKeys: number }

export class ProviderKeys {
  private keys: KeySet | undefined
  private fetchedAt = 0
  /** When a token naming an unknown key last made us fetch the set. */
  private unknownKeyFetchAt = -Infinity
  private fetching: Promise<KeySet> | undefined
  /** Number of documents fetched (for tests and diagnostics). */
  fetches = 0

  constructor (private readonly url: string, private readonly timeoutMs: number, private readonly keepLastGood = false) {}

  /** jose's key resolver for `jwtVerify`. Failures to fetch are HttpErrors (502/504); jose's own errors pass through. */
  readonly getKey: JWTVerifyGetKey = async (header, token) => {
    const stale = this.keys === undefined || Date.now() - this.fetchedAt >= JWKS_MAX_AGE_MS
    const keys = stale ? await this.refetch() : this.keys!
    try {
      return await resolveIn(keys, header, token)
    } catch (err) {
      if (!(err instanceof joseErrors.JWKSNoMatchingKey) || stale) throw err
      // A fetch already under way (another login's) is shared; a new one only past the cooldown.
      if (this.fetching === undefined) {
        if (Date.now() - this.unknownKeyFetchAt < JWKS_REFETCH_COOLDOWN_MS) throw err
        this.unknownKeyFetchAt = Date.now()
      }
      return await resolveIn(await this.refetch(), header, token)
    }
  }

  private async refetch (): Promise<KeySet> {
    this.fetching ??= this.fetch().finally(() => { this.fetching = undefined })
    return await this.fetching
  }

  /**
   * Fetches the set. When the provider fails (no answer, an error status, a malformed or empty set), a set was
   * fetched before and `keepLastGood` is on, that last good set is kept and asked for again after the cooldown: a provider's bad minute
   * (go-pkgz/auth v2.1.7 for Apple) must not sign everybody out of logging in, nor empty our keys.
   */
  private async fetch (): Promise<KeySet> {
    this.fetches++
    try {
      const keys = await this.download()
      this.keys = keys
      this.fetchedAt = Date.now()
      return keys
    } catch (err) {
      if (!this.keepLastGood || this.keys === undefined) throw err
      this.fetchedAt = Date.now() - JWKS_MAX_AGE_MS + JWKS_REFETCH_COOLDOWN_MS
      return this.keys
    }
  }

  private async download (): Promise<KeySet> {
    const ans = await callProvider(this.url, { headers: { accept: 'application/jwk-set+json, application/json' } }, 'provider keys', this.timeoutMs)
    if (ans.status !== 200) throw upstreamError('provider keys unusable', `status ${ans.status}`)
    const doc = (jsonObject(ans.body) ?? {}) as unknown as JSONWebKeySet
    let keys: KeySet
    try {
      keys = { resolve: createLocalJWKSet(doc), signingKeys: doc.keys.filter((k) => k.use === undefined || k.use === 'sig').length }
    } catch (err) {
      throw upstreamError('provider keys unusable', 'the JWKS document is malformed', err)
    }
    if (keys.signingKeys === 0) throw upstreamError('provider keys unusable', 'the JWKS document holds no signing key')
    return keys
  }
}

/** The key of `keys` the token's header names; a token without `kid` only while the set holds one signing key. */
async function resolveIn (keys: KeySet, header: Parameters<JWTVerifyGetKey>[0], token: Parameters<JWTVerifyGetKey>[1]): Promise<Awaited<ReturnType<JWTVerifyGetKey>>> {
  if (header.kid === undefined && keys.signingKeys > 1) {
    throw new HttpError(401, 'id token rejected', 'the id token names no key (kid) and the provider publishes several')
  }
  return await keys.resolve(header, token)
}
