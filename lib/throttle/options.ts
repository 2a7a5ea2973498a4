/**
 * The `rateLimit` option: throttling and lockout of login routes, on by default. `false` turns it off.
 */
import type { FastifyRequest } from 'fastify'
import type { Duration } from '../duration.js'
import { OptionsError } from '../errors.js'
import { keyList, named, optionDuration, optionFunction, optionGroup, optionInt } from '../options.js'

/** Lockout after failed credential checks (direct login, basic auth). */
export interface FailureOptions {
  /** Failed checks of one account name (existing or not) before it is locked. 0: no account lockout. Default 5. */
  perAccount?: number | undefined
  /** Failed checks from one client address before it is locked. 0: no address lockout. Default 20. */
  perIp?: number | undefined
  /** Failures are forgotten this long after the last one: ms or `'1h'`. Default 1 hour. */
  window?: Duration | undefined
  /** First lockout; each further failure doubles it. Default 1 minute. */
  lockout?: Duration | undefined
  /** Longest lockout. Default 1 hour. */
  maxLockout?: Duration | undefined
  /**
   * The account name as your checker compares it: every name this maps to one value shares one count and one
   * lock. Default `normaliseAccountName`: NFKC, letter case folded, default-ignorable code points removed,
   * trimmed. Give your own when your checker folds more (e.g. removes dots of e-mail addresses), so that no
   * spelling your checker accepts gets tries of its own. Called with the typed name (without the realm). A direct
   * login whose checker answers only `true` signs in as this value (its name and the source of its id), so the
   * names it maps to one value are one user too.
   */
  accountKey?: ((name: string) => string) | undefined
}

/** Throttling of login routes. Every limit counts in the state store, so instances sharing one share limits. */
export interface RateLimitOptions {
  /**
   * Login requests per client address (credential posts, OAuth2 and Telegram login starts, confirmation sends
   * and confirmations), counted by @fastify/rate-limit. `max: 0` turns it off. Default 30 per minute.
   */
  login?: { max?: number | undefined; window?: Duration | undefined } | undefined
  /** Lockout after failed credential checks, per account name and per client address, with backoff. */
  failures?: FailureOptions | undefined
  /**
   * Refused requests at the registered clients' token endpoints (`POST {authPrefix}/token` and `/revoke`: a wrong,
   * used or unknown grant, client or token) per client address, before the address is locked out of them for
   * `failures.lockout` (doubling with each further refusal, at most `failures.maxLockout`). `perIp: 0` turns it
   * off. Default 20 in 10 minutes. A device polling (`authorization_pending`, `slow_down`) is not refused.
   */
  grants?: { perIp?: number | undefined; window?: Duration | undefined } | undefined
  /** Confirmation messages of verified login, per destination address and per client address. Default 5 and 20 per hour. */
  sends?: { perAddress?: number | undefined; perIp?: number | undefined; window?: Duration | undefined } | undefined
  /**
   * The client a request counts for. Default: `request.ip` (so set Fastify's `trustProxy` behind a proxy),
   * an IPv6 address by its /64, which one host usually holds whole.
   */
  clientKey?: ((request: FastifyRequest) => string) | undefined
}

/** Lockout settings after defaults. */
export interface LockoutSettings {
  perAccount: number
  perIp: number
  windowMs: number
  lockoutMs: number
  maxLockoutMs: number
  /** The host's account key (`failures.accountKey`), or undefined for `normaliseAccountName`. */
  accountKey?: ((name: string) => string) | undefined
}

/** `rateLimit` after defaults. */
export interface ResolvedRateLimit {
  login: { max: number; windowMs: number }
  failures: LockoutSettings
  /** The token endpoints' address lockout (`perAccount` 0: only addresses are counted). */
  grants: LockoutSettings
  sends: { perAddress: number; perIp: number; windowMs: number }
}

type LoginLimit = NonNullable<RateLimitOptions['login']>
type SendLimit = NonNullable<RateLimitOptions['sends']>
type GrantLimit = NonNullable<RateLimitOptions['grants']>
const KEYS = keyList<RateLimitOptions>({ login: true, failures: true, grants: true, sends: true, clientKey: true })
const GRANT_KEYS = keyList<GrantLimit>({ perIp: true, window: true })
const LOGIN_KEYS = keyList<LoginLimit>({ max: true, window: true })
const SEND_KEYS = keyList<SendLimit>({ perAddress: true, perIp: true, window: true })
const FAILURE_KEYS = keyList<FailureOptions>({ perAccount: true, perIp: true, window: true, lockout: true, maxLockout: true, accountKey: true })

/** Validates `rateLimit` (OptionsError naming the option); `false` when throttling is off. */
export function resolveRateLimit (value: unknown, name = 'rateLimit'): ResolvedRateLimit | false {
  if (value === false) return false
  const o = optionGroup<RateLimitOptions>(name, value ?? undefined, KEYS)
  optionFunction(named(name, 'clientKey'), o.clientKey)
  const login = optionGroup<LoginLimit>(named(name, 'login'), o.login ?? undefined, LOGIN_KEYS)
  const sends = optionGroup<SendLimit>(named(name, 'sends'), o.sends ?? undefined, SEND_KEYS)
  const grants = optionGroup<GrantLimit>(named(name, 'grants'), o.grants ?? undefined, GRANT_KEYS)
  const failures = resolveLockout(o.failures, named(name, 'failures'))
  return {
    login: {
      max: optionInt(named(name, 'login.max'), login.max, 30),
      windowMs: optionDuration(named(name, 'login.window'), login.window, 60_000)
    },
    failures,
    grants: {
      ...failures,
      perAccount: 0,
      perIp: optionInt(named(name, 'grants.perIp'), grants.perIp, 20),
      windowMs: optionDuration(named(name, 'grants.window'), grants.window, 600_000)
    },
    sends: {
      perAddress: optionInt(named(name, 'sends.perAddress'), sends.perAddress, 5),
      perIp: optionInt(named(name, 'sends.perIp'), sends.perIp, 20),
      windowMs: optionDuration(named(name, 'sends.window'), sends.window, 3_600_000)
    }
  }
}

/** Validates lockout settings (also the toolkit's basic-auth `throttle`). */
export function resolveLockout (value: unknown, name: string, extraKeys: readonly string[] = []): LockoutSettings {
  const f = optionGroup<FailureOptions>(name, value ?? undefined, [...FAILURE_KEYS, ...extraKeys])
  const lockoutMs = optionDuration(named(name, 'lockout'), f.lockout, 60_000)
  const maxLockoutMs = optionDuration(named(name, 'maxLockout'), f.maxLockout, 3_600_000)
  if (maxLockoutMs < lockoutMs) throw new OptionsError(named(name, 'maxLockout'), 'must not be shorter than lockout')
  return {
    perAccount: optionInt(named(name, 'perAccount'), f.perAccount, 5),
    perIp: optionInt(named(name, 'perIp'), f.perIp, 20),
    windowMs: optionDuration(named(name, 'window'), f.window, 3_600_000),
    lockoutMs,
    maxLockoutMs,
    accountKey: optionFunction(named(name, 'accountKey'), f.accountKey)
  }
}
