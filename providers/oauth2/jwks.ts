/**
 * A provider's JSON Web Key Set (the keys its ID tokens are signed with), fetched and cached here rather than
 * by jose's remote key set, which reads the whole document with no size limit and whose deadline is an
 * AbortSignal: the document comes through the same capped, deadline-bound call as every other provider
 * answer (upstream.ts) and is then handed to jose as a local key set.
 *
 * Refetching: the set is fetched on first use and again once it is older than `JWKS_MAX_AGE_MS`; an ID token
 * naming a key the set does not hold (a rotation) fetches it again at most once per `JWKS_REFETCH_COOLDOWN_MS`,
 * so tokens with made-up key ids cannot make us hammer the provider. Concurrent logins share one fetch.
 */
import { createLocalJWKSet, errors as joseErrors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose'
import { callProvider, jsonObject, upstreamError } from './upstream.js'

/** Age after which a cached key set is fetched again at its next use. */
export const JWKS_MAX_AGE_MS = 10 * 60_000
/** Least time between two fetches caused by a token naming an unknown key. */
export const JWKS_REFETCH_COOLDOWN_MS = 5 * 60_000

type LocalKeySet = ReturnType<typeof createLocalJWKSet>

export class ProviderKeys {
  private keys: LocalKeySet | undefined
  private fetchedAt = 0
  private fetching: Promise<LocalKeySet> | undefined
  /** Number of documents fetched (for tests and diagnostics). */
  fetches = 0

  constructor (private readonly url: string, private readonly timeoutMs: number) {}

  /** jose's key resolver for `jwtVerify`. Failures to fetch are HttpErrors (502/504); jose's own errors pass through. */
  readonly getKey: JWTVerifyGetKey = async (header, token) => {
    const stale = this.keys === undefined || Date.now() - this.fetchedAt >= JWKS_MAX_AGE_MS
    const keys = stale ? await this.refetch() : this.keys!
    try {
      return await keys(header, token)
    } catch (err) {
      if (!(err instanceof joseErrors.JWKSNoMatchingKey) || Date.now() - this.fetchedAt < JWKS_REFETCH_COOLDOWN_MS) throw err
      return await (await this.refetch())(header, token)
    }
  }

  private async refetch (): Promise<LocalKeySet> {
    this.fetching ??= this.fetch().finally(() => { this.fetching = undefined })
    return await this.fetching
  }

  private async fetch (): Promise<LocalKeySet> {
    this.fetches++
    const ans = await callProvider(this.url, { headers: { accept: 'application/jwk-set+json, application/json' } }, 'provider keys', this.timeoutMs)
    if (ans.status !== 200) throw upstreamError('provider keys unusable', `status ${ans.status}`)
    let keys: LocalKeySet
    try {
      keys = createLocalJWKSet((jsonObject(ans.body) ?? {}) as unknown as JSONWebKeySet)
    } catch (err) {
      throw upstreamError('provider keys unusable', 'the JWKS document is malformed', err)
    }
    this.keys = keys
    this.fetchedAt = Date.now()
    return keys
  }
}
