import { ErrorCodes } from '../../lib/errors.js'
import { StoreError } from '../../lib/state-store.js'

/** One user's authenticator-app (TOTP) enrolment. */
export interface TotpEntry {
  /** The secret, sealed (AES-256-GCM) by the provider: a store never sees it in the clear. */
  secret: string
  /** Whether a valid code confirmed the enrolment; an unconfirmed one never counts as a second factor. */
  confirmed: boolean
  /** When the enrolment began (ms since the epoch). */
  created: number
}

/**
 * Where TOTP secrets and recovery codes live: user id → sealed secret, and user id → hashes of the unused recovery
 * codes. Every built-in store implements it (memory, lmdb single file, Redis); any object with these methods can be
 * passed wherever a store is accepted. Each change is atomic in its store, so two instances sharing one store
 * (Redis) never both spend one recovery code.
 */
export interface TotpStore {
  /** The user's enrolment, or undefined. */
  get(userId: string): Promise<TotpEntry | undefined>
  /** Keeps an unconfirmed enrolment (replacing an unconfirmed one); false when the user has a confirmed one. */
  enrol(userId: string, entry: TotpEntry): Promise<boolean>
  /**
   * Confirms the enrolment whose sealed secret is `secret` and sets the recovery codes with it; false when the
   * stored enrolment is another one or confirmed already.
   */
  confirm(userId: string, secret: string, recovery: string[]): Promise<boolean>
  /** Removes the enrolment and the recovery codes; false when there was none. */
  remove(userId: string): Promise<boolean>
  /** Replaces every recovery code hash of the user. */
  setRecovery(userId: string, hashes: string[]): Promise<void>
  /** Spends one recovery code hash: the number left, or -1 when the user has no such code. */
  useRecovery(userId: string, hash: string): Promise<number>
  /** How many recovery codes the user has left. */
  recoveryLeft(userId: string): Promise<number>
  /** Keeps `value` as the store's key check unless it has one; answers the one kept. */
  keyCheck(value: string): Promise<string>
  /** Releases files and connections the store owns. */
  close(): Promise<void>
}

const METHODS = ['get', 'enrol', 'confirm', 'remove', 'setRecovery', 'useRecovery', 'recoveryLeft', 'keyCheck', 'close'] as const

/** True for any object carrying the store methods. */
export function isTotpStore (value: unknown): value is TotpStore {
  return value !== null && typeof value === 'object' &&
    METHODS.every((m) => typeof (value as Record<string, unknown>)[m] === 'function')
}

/** The store could not answer (down, timed out, corrupt record). Maps to 503 `{error, details, code}`. */
/** A TOTP store's `StoreError` (`family: 'totp'`). */
export class TotpStoreError extends StoreError {
  constructor (details: string, options?: { cause?: unknown }) {
    super('totp', 'authenticator store unavailable', details, ErrorCodes.UNAVAILABLE, options)
    this.name = 'TotpStoreError'
  }
}

export function checkUserId (userId: string): void {
  if (typeof userId !== 'string' || userId === '') throw new TypeError('totp store: a user id is required')
}

export function checkEntry (entry: TotpEntry): void {
  if (entry === null || typeof entry !== 'object' || typeof entry.secret !== 'string' || entry.secret === '') {
    throw new TypeError('totp store: an entry with a sealed secret is required')
  }
}

export function checkHashes (hashes: string[]): void {
  if (!Array.isArray(hashes) || hashes.some((h) => typeof h !== 'string' || h === '')) throw new TypeError('totp store: recovery hashes must be strings')
}

/** An entry read back from stored text; one that does not parse is a store failure, never an enrolment. */
export function decodeEntry (text: string): TotpEntry {
  let e: TotpEntry
  try {
    e = JSON.parse(text) as TotpEntry
  } catch (err) {
    throw new TotpStoreError('a stored authenticator record is corrupt', { cause: err })
  }
  if (e === null || typeof e !== 'object' || typeof e.secret !== 'string' || typeof e.confirmed !== 'boolean') {
    throw new TotpStoreError('a stored authenticator record is corrupt')
  }
  return { secret: e.secret, confirmed: e.confirmed, created: Number(e.created) }
}

export function encodeEntry (e: TotpEntry): string {
  return JSON.stringify({ secret: e.secret, confirmed: e.confirmed, created: e.created })
}
