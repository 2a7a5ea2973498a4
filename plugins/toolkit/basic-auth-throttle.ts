/**
 * Opt-in lockout for the basic-auth family (`{ throttle: … }` on `basicAuth`, `withBcryptHash`,
 * `withArgon2Hash`, `basicAuthPlugin`): failed checks per user name and per client address, with backoff; while
 * locked, every attempt (the right password included) is answered 429 `GATEHOUSE_RATE_LIMITED` with
 * `Retry-After`, and the hash is not computed. Unknown and known user names are counted alike.
 *
 * Off unless asked for: the toolkit's basic auth guards machine-to-machine routes too, where the host may prefer
 * its own limits. Counts live in the given `store` (a Redis state store shares them between instances), else in
 * an in-memory store of this hook.
 */
import type { FastifyRequest } from 'fastify'
import { HttpError, OptionsError, sendHttpError } from '../../lib/errors.js'
import { named } from '../../lib/options.js'
import { parseBasicCredentials } from '../../lib/basic-credentials.js'
import { MemoryStateStore } from '../../stores/state/memory.js'
import { isStateStore } from '../../stores/state/resolve.js'
import type { StateStore } from '../../lib/state-store.js'
import { defaultClientKey } from '../../lib/throttle/client.js'
import { Lockout, type CountingStore } from '../../lib/throttle/lockout.js'
import { resolveLockout, type FailureOptions } from '../../lib/throttle/options.js'
import type { ToolkitHook } from './hook.js'

/** Lockout settings of the basic-auth family (defaults as the auth core's `rateLimit.failures`). */
export interface BasicAuthThrottleOptions extends FailureOptions {
  /** Where counts live (anything with `increment`, e.g. a `RedisStateStore` shared by instances). Default in-memory. */
  store?: StateStore | undefined
  /** The client a request counts for. Default `request.ip` (set Fastify's `trustProxy` behind a proxy), IPv6 by /64. */
  clientKey?: ((request: FastifyRequest) => string) | undefined
}

/** `throttle: true` takes the defaults. */
export type BasicAuthThrottle = BasicAuthThrottleOptions | true

/** Wraps a basic-auth hook with the lockout the options describe. */
export function throttleBasicAuth (hook: ToolkitHook, throttle: BasicAuthThrottle, label: string): ToolkitHook {
  const name = named(label, 'throttle')
  const o = throttle === true ? {} : throttle
  const settings = resolveLockout(o, name, ['store', 'clientKey'])
  const store = o.store ?? new MemoryStateStore()
  if (!isStateStore(store) || typeof store.increment !== 'function') throw new OptionsError(named(name, 'store'), 'must be a state store with increment()')
  if (o.clientKey !== undefined && typeof o.clientKey !== 'function') throw new OptionsError(named(name, 'clientKey'), 'must be a function')
  const clientKey = o.clientKey ?? defaultClientKey
  const lockout = new Lockout(store as CountingStore, settings)

  return async function throttledBasicAuth (request, reply) {
    const creds = parseBasicCredentials(request.headers.authorization)
    // Without credentials there is nothing to count: the hook answers 401 as usual.
    if (creds.status !== 'ok' || creds.user === '') return await hook.call(this, request, reply)
    try {
      await lockout.guard(clientKey(request), `basic:${creds.user}`, async () => {
        await hook.call(this, request, reply)
        return request.basicAuthorized === true
      }, (ok) => ok)
    } catch (err) {
      // Locked (429), or the store down (503); the hook's own answer, when it gave one, stands.
      if (!(err instanceof HttpError) || reply.sent) throw err
      await sendHttpError(reply, err)
    }
  }
}
