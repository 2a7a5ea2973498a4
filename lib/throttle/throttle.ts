/**
 * Throttling of the login routes (`fastify.auth.throttle`), built once by the auth core from the `rateLimit`
 * option. Providers call it at the points only they know: a login request starts, a credential check begins and
 * ends, a confirmation is sent. Every count lives in the state store, so instances sharing a Redis store share
 * every limit.
 *
 * - Login requests per client address: @fastify/rate-limit (`createRateLimit`), counting in the state store.
 * - Failed credential checks per account name and per address, with lockout and backoff: `Lockout`.
 * - Confirmation sends per destination address and per client address.
 */
import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { OptionsError, RateLimitedError } from '../errors.js'
import type { StateStore } from '../state-store.js'
import { defaultClientKey, type ClientKey } from './client.js'
import { Lockout, LockedOutError, accountNamer, normaliseAccountName, type CountingStore, type LockNotice } from './lockout.js'
import { silentAudit, type Audit } from '../audit/audit.js'
import type { ResolvedRateLimit } from './options.js'
import { stateStoreCounters } from './rate-limit-store.js'

export interface Throttle {
  /** Whether any limit is on (`rateLimit` is not `false`). */
  readonly enabled: boolean
  /** The client a request counts for (its address; IPv6 by /64). Also the state store's per-client share. */
  clientKey: ClientKey
  /** Counts one login request of the client; 429 with `Retry-After` past `rateLimit.login`. */
  loginRequest(request: FastifyRequest): Promise<void>
  /**
   * Runs a credential check for `account` (realm-qualified, e.g. `direct/local:alice`) under the lockout: 429
   * with `Retry-After` (and no check) while the account or the client is locked out. A `GATEHOUSE_CREDENTIALS` (or `GATEHOUSE_CAPTCHA`)
   * error thrown by `check` counts as a failure; returning counts as a success.
   */
  guard<T>(request: FastifyRequest, account: string, check: () => Promise<T>): Promise<T>
  /**
   * Runs one request of the registered clients' token endpoints under the address lockout of refused requests
   * (`rateLimit.grants`): 429 with `Retry-After` while the client's address is locked. `refused` tells whether the
   * run's outcome (what it answered, or the error it threw) was a refusal that counts. The lock is read while `run`
   * starts: `run` must await `admitted()` (which rejects with the 429 when the address is locked) before it changes
   * anything, calls the app's code or answers; it may parse and read before (the refresh grant reads its token's
   * record meanwhile: one round trip fewer). Whatever `run` does, a locked address gets the 429.
   */
  tokenRequest<T>(request: FastifyRequest, run: (admitted: () => Promise<void>) => Promise<T>, refused: (outcome: { result: T } | { error: unknown }) => boolean): Promise<T>
  /** Counts a confirmation message to `address`; 429 past `rateLimit.sends` (per address or per client). */
  send(request: FastifyRequest, address: string): Promise<void>
  /**
   * A typed account name as the lockout counts it (`rateLimit.failures.accountKey`, default
   * `normaliseAccountName`; the default also with `rateLimit: false`): the name and id of a direct login whose
   * checker answers only true or false.
   */
  accountName(name: string): string
}

type Limiter = (request: FastifyRequest) => Promise<{ isAllowed: boolean; isExceeded?: boolean | undefined; ttl?: number | undefined }>

/**
 * Builds the throttle on `store`. With limits on, the store must count (`increment`): an OptionsError naming
 * `stateStore` otherwise. @fastify/rate-limit is loaded here, only when limits are on.
 */
export async function createThrottle (fastify: FastifyInstance, store: StateStore, settings: ResolvedRateLimit | false, clientKey: ClientKey = defaultClientKey, audit: Audit = silentAudit): Promise<Throttle> {
  if (settings === false) return disabledThrottle(clientKey)
  if (typeof store.increment !== 'function') {
    throw new OptionsError('stateStore', 'needs increment(key, ttlMs, opts) for throttling (rateLimit); add it to the store, or set rateLimit: false')
  }
  const counting = store as CountingStore
  const lockout = new Lockout(counting, settings.failures)
  const lockoutOn = settings.failures.perAccount > 0 || settings.failures.perIp > 0
  const grantLockout = new Lockout(counting, settings.grants, 'grant:')
  const { default: rateLimit } = await import('@fastify/rate-limit')
  let login: Limiter | undefined
  let sendsFromIp: Limiter | undefined
  // In a scope of its own, so that neither its decorators nor any hook reach the host's routes.
  await fastify.register(async (scope) => {
    await scope.register(rateLimit, { global: false, store: stateStoreCounters(counting), keyGenerator: (request) => clientKey(request) })
    const limiter = (nameSpace: string, max: number, timeWindow: number): Limiter | undefined => {
      if (max === 0) return undefined
      const opts = { max, timeWindow, nameSpace }
      return scope.createRateLimit(opts)
    }
    login = limiter('login:', settings.login.max, settings.login.windowMs)
    sendsFromIp = limiter('send:', settings.sends.perIp, settings.sends.windowMs)
  })

  return {
    enabled: true,
    clientKey,
    accountName: accountNamer(settings.failures.accountKey),
    async loginRequest (request) {
      await limit(login, request, 'too many login requests from this address', audit, 'login')
    },
    async guard (request, account, check) {
      if (!lockoutOn) return await check()
      try {
        return await lockout.guard(clientKey(request), account, check, () => true, audit.on ? lockNotice(audit, request) : undefined)
      } catch (err) {
        if (err instanceof LockedOutError) refused(audit, request, err, 'locked')
        throw err
      }
    },
    async tokenRequest (request, run, refused) {
      if (settings.grants.perIp === 0) return await run(admittedAlready)
      const begun = grantLockout.begin(clientKey(request), 'grant', audit.on ? lockNotice(audit, request) : undefined).catch((err: unknown) => {
        throw err instanceof LockedOutError ? tooMany(audit, request, err) : err
      })
      // Awaited below in any case; this only keeps a refusal that `run` never asked for from being unhandled meanwhile.
      begun.catch(() => {})
      const admitted = async (): Promise<void> => { await begun }
      let result
      try {
        result = await run(admitted)
      } catch (error) {
        // A locked address gets the 429, whatever else went wrong (as when the lock was read before the run).
        const attempt = await begun
        if (refused({ error })) await grantLockout.failed(attempt)
        throw error
      }
      const attempt = await begun
      if (refused({ result })) await grantLockout.failed(attempt)
      return result
    },
    async send (request, address) {
      await limit(sendsFromIp, request, 'too many confirmation messages from this address', audit, 'sends')
      const { perAddress, windowMs } = settings.sends
      if (perAddress === 0) return
      const key = `throttle:send:${createHash('sha256').update(address.trim().toLowerCase()).digest('base64url').slice(0, 27)}`
      const c = await counting.increment(key, windowMs, { client: clientKey(request) })
      if (c.count > perAddress) throw refused(audit, request, new RateLimitedError('too many confirmation messages to this address', c.ttlMs), 'sends_to_address')
    }
  }
}

async function limit (limiter: Limiter | undefined, request: FastifyRequest, details: string, audit: Audit, reason: string): Promise<void> {
  if (limiter === undefined) return
  const r = await limiter(request)
  if (!r.isAllowed && r.isExceeded === true) throw refused(audit, request, new RateLimitedError(details, r.ttl ?? 1000), reason)
}

/** `rate_limited` for a 429 of the throttle (`reason` names the limit); gives the error back to be thrown. */
function refused (audit: Audit, request: FastifyRequest, err: RateLimitedError, reason: string): RateLimitedError {
  if (audit.on) audit.emit(request, 'rate_limited', { reason, retryAfterMs: err.retryAfterSec * 1000 })
  return err
}

/** The 429 of a locked-out address at the token endpoints: not a login lockout, so audited as `token_requests`. */
function tooMany (audit: Audit, request: FastifyRequest, err: LockedOutError): RateLimitedError {
  return refused(audit, request, new RateLimitedError('too many refused token requests from this address; try again later', err.retryAfterSec * 1000), 'token_requests')
}

/** `lockout.started` for each lock a credential check sets. */
function lockNotice (audit: Audit, request: FastifyRequest): LockNotice {
  return (scope, durationMs) => { audit.emit(request, 'lockout.started', { reason: scope === 'ip' ? 'failures_from_ip' : 'failures_on_account', scope, durationMs }) }
}

/** `admitted` where no lock is read. */
const admittedAlready = async (): Promise<void> => {}

function disabledThrottle (clientKey: ClientKey): Throttle {
  const none = async (): Promise<undefined> => undefined
  return {
    enabled: false,
    clientKey,
    loginRequest: none,
    guard: async (_request, _account, check) => await check(),
    tokenRequest: async (_request, run) => await run(admittedAlready),
    send: none,
    accountName: normaliseAccountName
  }
}
