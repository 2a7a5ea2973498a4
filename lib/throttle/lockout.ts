/**
 * Lockout after failed credential checks, per account name and per client address, with exponential backoff.
 * Used by the direct provider, the core's basic auth and (when the host opts in) the toolkit's basic auth.
 *
 * - An account name is counted whether or not it exists, so the answers (429 or not) tell nothing about which
 *   accounts exist. Names are stored only as a hash.
 * - Attempts on an account are counted before the check runs, and the count alone (one atomic increment)
 *   decides which may run, so a burst of parallel guesses, on one instance or several, gets no more tries than a
 *   sequence. After `perAccount` failures the account is locked for `lockout`; once a lock has run out, one
 *   attempt may run (and locks the account again at once, for twice as long, unless it succeeds). Attempts
 *   refused during a lock do not lengthen it.
 * - Names are compared as strictly as a checker may compare them (`normaliseAccountName`, or the host's
 *   `accountKey`), so `Alice`, ` alice` and `ａｌｉｃｅ` share one count.
 * - Failures from one address are counted too (`perIp`), which catches one client trying many accounts.
 * - While locked, every attempt is refused 429 with `Retry-After`, the right password included, and the
 *   checker does not run. A success forgets the account's failures.
 *
 * The trade-off of any account lockout: someone who knows a user name can keep that account locked by failing
 * on purpose. `maxLockout` bounds each lock; `perAccount: 0` turns account locks off (address locks stay).
 */
import { createHash } from 'node:crypto'
import { ErrorCodes, HttpError, RateLimitedError } from '../errors.js'
import type { StateStore } from '../state-store.js'
import type { LockoutSettings } from './options.js'

/** Told of every lock an attempt sets: the account name's or the client address's, and for how long (ms). */
export type LockNotice = (scope: 'account' | 'ip', durationMs: number) => void

/** What `begin` found: passed to `failed`/`succeeded` of the same attempt. */
export interface Attempt { client: string; account: string; count: number; locked: boolean; onLock?: LockNotice | undefined }

/** A lock record: locked until `until` (ms); `level` locks so far (the next lasts `lockout` × 2^level). */
interface LockRecord { until: number; level: number }

/** A state store that can count (`increment`), as throttling needs. */
export type CountingStore = StateStore & Required<Pick<StateStore, 'increment'>>

const LOCKED = 'too many failed sign-in attempts; try again later'

/** The 429 of a locked account or address (not of a rate limit): the audit tells `locked` from `throttled` by it. */
export class LockedOutError extends RateLimitedError {
  constructor (retryAfterMs: number) {
    super(LOCKED, retryAfterMs)
    this.name = 'LockedOutError'
  }
}

/** The refusals that count as a failed attempt: a wrong credential, a refused captcha (see plugins/core/signin/captcha.ts). */
const FAILURES = new Set<string>([ErrorCodes.CREDENTIALS, ErrorCodes.CAPTCHA])

export class Lockout {
  /** How long counts and lock records live after their last change: at least as long as the longest lock. */
  private readonly keepMs: number

  private readonly accountKey: (account: string) => string

  /**
   * `namespace` keeps the counts and locks of one use apart from another's (the token endpoints' refused requests
   * from the login lockout's): '' for the login lockout.
   */
  constructor (private readonly store: CountingStore, private readonly o: LockoutSettings, private readonly namespace = '') {
    this.keepMs = Math.max(o.windowMs, o.maxLockoutMs)
    const normalise = accountNamer(o.accountKey)
    this.accountKey = (account) => accountKeyOf(account, normalise)
  }

  /**
   * Before a credential check: 429 while the account or the address is locked; otherwise the attempt is
   * counted. `account` should name the realm too (e.g. `direct/local:alice`), so that one provider's lock is
   * its own. One round trip on the usual path: the count and both locks are read at once.
   */
  async begin (client: string, account: string, onLock?: LockNotice): Promise<Attempt> {
    const acct = this.accountKey(account)
    const on = this.o.perAccount > 0
    const [counted, acctLock, ipLock] = await Promise.all([
      on ? this.store.increment(`throttle:fail:${acct}`, this.keepMs, { client, sliding: true }) : undefined,
      on ? this.store.get(`throttle:lock:${acct}`) : undefined,
      this.o.perIp > 0 ? this.store.get(`throttle:lock:${this.namespace}ip:${client}`) : undefined
    ])
    const now = Date.now()
    const lock = parseLock(acctLock)
    const until = Math.max(lock?.until ?? 0, parseLock(ipLock)?.until ?? 0)
    if (until > now) throw new LockedOutError(until - now)
    const attempt: Attempt = { client, account: acct, count: counted?.count ?? 0, locked: lock !== undefined, onLock }
    if (on && attempt.count > this.o.perAccount) await this.pastThreshold(attempt, lock, now)
    return attempt
  }

  /**
   * An attempt counted past the threshold. The count alone decides who runs below it (one atomic increment each,
   * on every instance), so the threshold's tries are the first `perAccount` counted, never one more:
   * - no lock record: the first `perAccount` attempts are still running (or ended without a verdict); this one
   *   is refused, and locks the account at the first level in their stead (unless one of them did already);
   * - a lock that ran out: one attempt per lock level runs (taken atomically in the store) and locks the account
   *   at the next level before it does.
   */
  private async pastThreshold (attempt: Attempt, lock: LockRecord | undefined, now: number): Promise<void> {
    const { client, account } = attempt
    if (lock === undefined) {
      const ms = this.lockMs(0)
      if (await this.store.setIfAbsent(`throttle:lock:${account}`, lockValue(now + ms, 1), this.keepMs, { client })) attempt.onLock?.('account', ms)
      throw new LockedOutError(ms)
    }
    const ms = this.lockMs(lock.level)
    if (!await this.store.setIfAbsent(`throttle:turn:${account}:${lock.level}`, '1', ms, { client })) throw new LockedOutError(ms)
    await this.store.set(`throttle:lock:${account}`, lockValue(now + ms, lock.level + 1), this.keepMs, { client })
    attempt.onLock?.('account', ms)
    attempt.locked = true
  }

  /** After a failed check: locks the account at its threshold and counts the failure for the address. */
  async failed (attempt: Attempt): Promise<void> {
    const { client, account, count } = attempt
    const now = Date.now()
    const writes: Array<Promise<unknown>> = []
    if (this.o.perAccount > 0 && count === this.o.perAccount && !attempt.locked) {
      const ms = this.lockMs(0)
      writes.push(this.store.set(`throttle:lock:${account}`, lockValue(now + ms, 1), this.keepMs, { client }).then(() => attempt.onLock?.('account', ms)))
    }
    if (this.o.perIp > 0) {
      writes.push(this.store.increment(`throttle:fail:${this.namespace}ip:${client}`, this.o.windowMs, { client, sliding: true }).then(async ({ count: n }) => {
        if (n < this.o.perIp) return
        const ms = this.lockMs(n - this.o.perIp)
        await this.store.set(`throttle:lock:${this.namespace}ip:${client}`, lockValue(now + ms, n - this.o.perIp + 1), ms, { client })
        attempt.onLock?.('ip', ms)
      }))
    }
    await Promise.all(writes)
  }

  /** After a successful check: the account's failures and locks are forgotten. */
  async succeeded (attempt: Attempt): Promise<void> {
    if (attempt.count === 0) return
    await Promise.all([
      this.store.delete(`throttle:fail:${attempt.account}`),
      // Also without a lock seen at the start: one may have been set by an attempt counted past the threshold
      // while this one ran (in the same round trip as the count's delete).
      this.store.delete(`throttle:lock:${attempt.account}`)
    ])
  }

  /**
   * Runs a credential check under the lockout: 429 (and no check) while locked; otherwise the outcome is
   * recorded. `ok(result)` tells a success; a thrown `GATEHOUSE_CREDENTIALS` or `GATEHOUSE_CAPTCHA` error is a failure; any other error
   * (the checker's backend down) is neither and is passed on. `onLock` hears of every lock the attempt sets.
   */
  async guard<T> (client: string, account: string, check: () => Promise<T>, ok: (result: T) => boolean, onLock?: LockNotice): Promise<T> {
    const attempt = await this.begin(client, account, onLock)
    let result: T
    try {
      result = await check()
    } catch (err) {
      if (err instanceof HttpError && FAILURES.has(err.code)) await this.failed(attempt)
      throw err
    }
    await (ok(result) ? this.succeeded(attempt) : this.failed(attempt))
    return result
  }

  /** `lockout` doubled `level` times, at most `maxLockout`. */
  private lockMs (level: number): number {
    return Math.min(this.o.maxLockoutMs, this.o.lockoutMs * 2 ** Math.min(level, 40))
  }
}

/**
 * The lock key of a realm-qualified account (`direct/local:alice`): the realm, then the name as `normalise`
 * gives it (by default `normaliseAccountName`), as a hash.
 */
function accountKeyOf (account: string, normalise: (name: string) => string): string {
  const cut = account.indexOf(':')
  const realm = cut < 0 ? '' : account.slice(0, cut)
  const name = normalise(cut < 0 ? account : account.slice(cut + 1))
  return 'acct:' + createHash('sha256').update(`${realm}:${name}`).digest('base64url').slice(0, 27)
}

/**
 * The one rule for which typed names are one account: the host's `accountKey` (checked to answer a string), or
 * `normaliseAccountName`. Lockout counts by it, and a direct login whose checker answers only true or false signs
 * the account in under it, so that every spelling the lockout counts as one is one user (one id).
 */
export function accountNamer (accountKey?: ((name: string) => string) | undefined): (name: string) => string {
  if (accountKey === undefined) return normaliseAccountName
  return (typed) => {
    const name = accountKey(typed)
    if (typeof name !== 'string') throw new TypeError('rateLimit.failures.accountKey must return a string')
    return name
  }
}

/** Default-ignorable code points (zero-width spaces and joiners, soft hyphens, variation selectors, …). */
const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu

/**
 * An account name as strictly as a reasonable checker compares it, so that no spelling of one name gets tries of
 * its own: compatibility forms folded (NFKC: full-width letters, ligatures, other spaces), default-ignorable code
 * points removed, letter case folded (`ß` and `SS` alike), surrounding white space trimmed. The default
 * `rateLimit.failures.accountKey`.
 */
export function normaliseAccountName (name: string): string {
  const folded = name.replace(IGNORABLE, '').normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC')
  return folded.replace(IGNORABLE, '').trim()
}

function lockValue (until: number, level: number): string {
  return `${until}:${level}`
}

function parseLock (value: string | undefined): LockRecord | undefined {
  if (value === undefined) return undefined
  const [until, level] = value.split(':').map(Number)
  return Number.isFinite(until) && Number.isFinite(level) ? { until: until!, level: level! } : undefined
}
