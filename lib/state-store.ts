import { ErrorCodes, HttpError } from './errors.js'

/**
 * Who a write is made for. Entries are counted per client (the request's address, see `clientKey`) and one
 * client may hold only so many at once, so that nothing an unauthenticated client sends can fill the store for
 * everyone else: past its share a write rejects with `RateLimitedError` (429) for that client alone.
 */
export interface WriteOptions {
  /** The client the entry is created for; absent for the server's own entries (not counted per client). */
  client?: string | undefined
}

/** Options of `increment`. */
export interface IncrementOptions extends WriteOptions {
  /** Restart the lifetime at every increment (the counter lives `ttlMs` after the last one). Default: fixed from the first. */
  sliding?: boolean | undefined
}

/** A counter after `increment`: its value and the ms it has left. */
export interface Counter { count: number; ttlMs: number }

/** An entry as `exchange` writes it (or, for `from`, as the caller read it: the value and the ms it has left). */
export interface StoredEntry { key: string; value: string; ttlMs: number }

/**
 * Short-lived shared state: used confirmation tokens and OAuth2 states, pending Telegram logins, throttling
 * counters. Values are strings (callers serialize). Every method rejects with `StateStoreError` when the backend
 * cannot answer, so that providers answer 503 instead of guessing: a store that is down must never make a
 * one-time token reusable, and a write that failed must not consume one later (see the Redis store).
 *
 * Groups of keys: a key that starts with `{<group>}` followed by more (`{revoked:abc}:current`, no other braces)
 * belongs to group `<group>`, as does the key `<group>` itself. A store that spreads keys over nodes keeps a group's
 * keys on one (the Redis store on a Cluster: the group is the keys' hash tag), so that one step (`exchange`,
 * `getMany`) can touch several of them. Any other store treats such a key as any other.
 */
export interface StateStore {
  /** Stores `value` under `key` for `ttlMs` unless the key exists. Resolves true when this call stored it. */
  setIfAbsent(key: string, value: string, ttlMs: number, opts?: WriteOptions): Promise<boolean>
  /** Stores `value` under `key` for `ttlMs`, replacing any earlier value. */
  set(key: string, value: string, ttlMs: number, opts?: WriteOptions): Promise<void>
  /**
   * Adds one to the counter under `key` (created at 1, living `ttlMs`) and returns it. Needed by throttling
   * (`rateLimit`); stores without it can serve only with `rateLimit: false`.
   */
  increment?(key: string, ttlMs: number, opts?: IncrementOptions): Promise<Counter>
  /** The live value of `key`, or undefined. */
  get(key: string): Promise<string | undefined>
  /**
   * Optional: the live values of several keys (undefined for each one missing), in one step where they belong to
   * one group (see "Groups of keys"). Stores without it: one `get` per key.
   */
  getMany?(keys: readonly string[]): Promise<Array<string | undefined>>
  /** Atomically reads and deletes `key`: of concurrent callers, at most one gets the value. */
  take(key: string): Promise<string | undefined>
  /** Deletes `key`; resolves true when it existed. */
  delete(key: string): Promise<boolean>
  /**
   * Optional: replaces entry `from` by `to` in one atomic step, leaving `marker` where it was (a refresh token's
   * rotation: the token consumed, its successor stored, the consumed one remembered). Deletes `from` and, only
   * when it was there, writes `to` and `marker`. Resolves true when this call did; false when `from` was gone
   * (taken by another caller), and then nothing is written: of concurrent callers with one `from`, at most one gets
   * true. `from` carries the value the caller read and the ms it had left, so that a store that may lose an
   * answer (Redis) can put it back when the call fails: a rejection consumes nothing. The three keys must belong to
   * one group (see "Groups of keys"). Stores without it: the caller takes `from` and writes the other two.
   */
  exchange?(from: StoredEntry, to: StoredEntry, marker: StoredEntry): Promise<boolean>
  /** Releases connections and timers the store owns. */
  close(): Promise<void>
  /**
   * Optional: sends `message` to every subscriber of `channel`, on every instance sharing this store. Stores
   * without it (and `subscribe`) cannot tell other instances about revoked sessions at once; see `subscribe`.
   * Resolves with the number of subscriptions the message was delivered to, when the store can tell (Redis's
   * PUBLISH answer, the memory store's count): a revocation then waits until that many have acknowledged it.
   * `options.count: false` says nobody reads the count (an acknowledgement): a store may skip counting.
   */
  publish?(channel: string, message: string, options?: PublishOptions): Promise<number | void>
  /**
   * Optional: calls `onMessage` with every message published on `channel` from now on, until the subscription is
   * closed. `onLive(false)` says messages may be missed from now on (the connection is down), `onLive(true)` that
   * delivery works (again: anything published in between was missed). Delivery starts live for a store in the
   * same process.
   */
  subscribe?(channel: string, onMessage: (message: string) => void, onLive?: (live: boolean) => void): Promise<Subscription>
}

/** Options of `StateStore.publish`. */
export interface PublishOptions {
  /** False when the caller does not read the number of subscribers reached, so a store may skip counting. Default true. */
  count?: boolean | undefined
}

/** A subscription of `StateStore.subscribe`. */
export interface Subscription {
  close(): Promise<void>
}

/** The backend failed (down, timed out, full). Maps to 503 `{error, details, code: GATEHOUSE_STATE_STORE}`. */
/**
 * A store that cannot answer (503): the state store, a passkey store or a TOTP store, as `family` says. Every
 * store error of the package is one (`instanceof StoreError`); its `code` is `GATEHOUSE_STATE_STORE` for the state
 * store, `GATEHOUSE_UNAVAILABLE` for the others.
 */
export class StoreError extends HttpError {
  /** Which store failed. */
  readonly family: 'state' | 'passkey' | 'totp'
  constructor (family: 'state' | 'passkey' | 'totp', error: string, details: string, code: string, options?: { cause?: unknown }) {
    super(503, error, details, code, options)
    this.name = 'StoreError'
    this.family = family
  }
}

/** The state store's `StoreError` (`family: 'state'`). */
export class StateStoreError extends StoreError {
  constructor (details: string, options?: { cause?: unknown }) {
    super('state', 'state store unavailable', details, ErrorCodes.STATE_STORE, options)
    this.name = 'StateStoreError'
  }
}

/** The group of a key as `{<group>}…` names it (see "Groups of keys" at `StateStore`), or undefined for any other key. */
export function groupOf (key: string): string | undefined {
  if (key.charCodeAt(0) !== 123) return undefined
  const close = key.indexOf('}')
  if (close < 2 || close === key.length - 1 || key.indexOf('{', 1) !== -1 || key.indexOf('}', close + 1) !== -1) return undefined
  return key.slice(1, close)
}

/** Checks the arguments every store shares, so both fail the same way on programming errors. */
export function checkEntry (key: string, ttlMs: number): void {
  if (typeof key !== 'string' || key === '') throw new TypeError('state store key must be a non-empty string')
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new TypeError('state store ttlMs must be a positive number')
}
