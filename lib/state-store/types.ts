import { ErrorCodes, HttpError } from '../errors.js'

/**
 * Short-lived shared state: used confirmation tokens, pending Telegram logins. Values are strings (callers
 * serialize). Every method rejects with `StateStoreError` when the backend cannot answer, so that providers
 * answer 503 instead of guessing: a store that is down must never make a one-time token reusable.
 */
export interface StateStore {
  /** Stores `value` under `key` for `ttlMs` unless the key exists. Resolves true when this call stored it. */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>
  /** Stores `value` under `key` for `ttlMs`, replacing any earlier value. */
  set(key: string, value: string, ttlMs: number): Promise<void>
  /** The live value of `key`, or undefined. */
  get(key: string): Promise<string | undefined>
  /** Atomically reads and deletes `key`: of concurrent callers, at most one gets the value. */
  take(key: string): Promise<string | undefined>
  /** Deletes `key`; resolves true when it existed. */
  delete(key: string): Promise<boolean>
  /** Releases connections and timers the store owns. */
  close(): Promise<void>
  /**
   * Optional: sends `message` to every subscriber of `channel`, on every instance sharing this store. Stores
   * without it (and `subscribe`) cannot tell other instances about revoked sessions at once; see `subscribe`.
   */
  publish?(channel: string, message: string): Promise<void>
  /**
   * Optional: calls `onMessage` with every message published on `channel` from now on, until the subscription is
   * closed. `onLive(false)` says messages may be missed from now on (the connection is down), `onLive(true)` that
   * delivery works (again: anything published in between was missed). Delivery starts live for a store in the
   * same process.
   */
  subscribe?(channel: string, onMessage: (message: string) => void, onLive?: (live: boolean) => void): Promise<Subscription>
}

/** A subscription of `StateStore.subscribe`. */
export interface Subscription {
  close(): Promise<void>
}

/** The backend failed (down, timed out, full). Maps to 503 `{error, details, code: GATEHOUSE_STATE_STORE}`. */
export class StateStoreError extends HttpError {
  constructor (details: string, options?: { cause?: unknown }) {
    super(503, 'state store unavailable', details, ErrorCodes.STATE_STORE, options)
    this.name = 'StateStoreError'
  }
}

/** Checks the arguments every store shares, so both fail the same way on programming errors. */
export function checkEntry (key: string, ttlMs: number): void {
  if (typeof key !== 'string' || key === '') throw new TypeError('state store key must be a non-empty string')
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new TypeError('state store ttlMs must be a positive number')
}
