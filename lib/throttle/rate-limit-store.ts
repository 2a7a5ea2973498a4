/**
 * A @fastify/rate-limit store over the package's state store, so that its counters live where the rest of the
 * login state lives: in memory for one instance, in Redis for several behind one URL (shared by all of them),
 * counted per client like every other entry (see `WriteOptions.client`).
 *
 * Why not its own stores: the in-memory one is an LRU of 5000 keys per limiter, which a client cycling through
 * more keys than that empties (resetting everyone's counts); its Redis one keys manual limiters by route
 * (`…undefinedundefined-<key>` for `createRateLimit`) and bypasses the state store's per-client bounds.
 */
import type { FastifyRateLimitStore } from '@fastify/rate-limit'
import type { CountingStore } from './lockout.js'

/** Limiter settings the store reads: `nameSpace` separates the counters of one limiter from another's. */
interface StoreParams { nameSpace?: string | undefined }

/**
 * The store class to hand to @fastify/rate-limit (`store:`). Keys are client keys; a limiter created with
 * `createRateLimit({ nameSpace })` counts under `throttle:rl:<nameSpace><client>`.
 */
export function stateStoreCounters (store: CountingStore): new (params: StoreParams) => FastifyRateLimitStore {
  class StateStoreCounters implements FastifyRateLimitStore {
    private readonly prefix: string
    constructor (params: StoreParams) {
      this.prefix = `throttle:rl:${params?.nameSpace ?? ''}`
    }

    incr (key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number): void {
      store.increment(this.prefix + key, timeWindow, { client: key }).then(
        (c) => callback(null, { current: c.count, ttl: c.ttlMs }),
        (err: Error) => callback(err)
      )
    }

    child (params: unknown): FastifyRateLimitStore {
      return new StateStoreCounters(params as StoreParams)
    }
  }
  return StateStoreCounters
}
