import { ErrorCodes } from '../../lib/errors.js'
import { StoreError } from '../../lib/state-store.js'
import type { UserData } from '../../lib/user.js'

/** One registered passkey (a WebAuthn credential) of one user. */
export interface PasskeyCredential {
  /** Credential id, base64url (as the browser reports it). Unique across all users. */
  id: string
  /** The user it signs in, `user.id`. */
  userId: string
  /** Who the session is issued for: name, id and email as they were when the passkey was added. */
  user: UserData
  /** COSE public key. */
  publicKey: Uint8Array
  /** Signature counter last seen (0 for authenticators that keep none). */
  counter: number
  /** How the browser may reach the authenticator (`internal`, `usb`, `hybrid`, …). */
  transports: string[]
  /** When it was added (ms since the epoch). */
  created: number
  /** When it last signed in (ms since the epoch); absent until then. */
  lastUsed?: number | undefined
  /** Synced passkey (`multiDevice`) or bound to one authenticator (`singleDevice`). */
  deviceType: 'singleDevice' | 'multiDevice'
  /** Whether the authenticator reported it backed up (synced). */
  backedUp: boolean
  /** A name the user gave it, if any. */
  label?: string | undefined
}

/** What `add` did. */
export type AddResult = 'added' | 'exists' | 'full'

/**
 * Where passkeys live: user id → credentials, and credential id → credential. Every built-in store implements it
 * (memory, lmdb single file, Redis), and any object with these methods can be passed wherever a store is
 * accepted. Each method that changes something is atomic in its store, so two instances sharing one store (Redis)
 * or two requests of one instance never both win.
 */
export interface PasskeyStore {
  /**
   * Adds a credential unless its id is registered already (to anyone: `'exists'`) or its user already holds
   * `limit` credentials (`'full'`).
   */
  add(credential: PasskeyCredential, limit: number): Promise<AddResult>
  /** The credential with this id, or undefined. */
  get(id: string): Promise<PasskeyCredential | undefined>
  /** Every credential of the user, oldest first. */
  list(userId: string): Promise<PasskeyCredential[]>
  /**
   * Records a sign-in: sets `counter` and `lastUsed` when the stored counter is still `expected`. False when it
   * is not (another sign-in won) or the credential is gone.
   */
  use(id: string, expected: number, counter: number, lastUsed: number): Promise<boolean>
  /** Removes the user's credential; false when there is none with this id for this user. */
  remove(userId: string, id: string): Promise<boolean>
  /** Releases files and connections the store owns. */
  close(): Promise<void>
}

const METHODS = ['add', 'get', 'list', 'use', 'remove', 'close'] as const

/** True for any object carrying the store methods. */
export function isPasskeyStore (value: unknown): value is PasskeyStore {
  return value !== null && typeof value === 'object' &&
    METHODS.every((m) => typeof (value as Record<string, unknown>)[m] === 'function')
}

/** The store could not answer (down, timed out, corrupt record). Maps to 503 `{error, details, code}`. */
/** A passkey store's `StoreError` (`family: 'passkey'`). */
export class PasskeyStoreError extends StoreError {
  constructor (details: string, options?: { cause?: unknown }) {
    super('passkey', 'passkey store unavailable', details, ErrorCodes.UNAVAILABLE, options)
    this.name = 'PasskeyStoreError'
  }
}

/** The parts of a credential that never change after it was added, as stored text. */
interface StoredFields {
  id: string
  userId: string
  user: UserData
  publicKey: string
  transports: string[]
  created: number
  deviceType: PasskeyCredential['deviceType']
  backedUp: boolean
  label?: string | undefined
}

/** Stored text of a credential's fixed part (counter and last use are kept beside it, so they can change alone). */
export function encodeFixed (c: PasskeyCredential): string {
  const fields: StoredFields = {
    id: c.id,
    userId: c.userId,
    user: c.user,
    publicKey: Buffer.from(c.publicKey).toString('base64url'),
    transports: c.transports,
    created: c.created,
    deviceType: c.deviceType,
    backedUp: c.backedUp
  }
  if (c.label !== undefined) fields.label = c.label
  return JSON.stringify(fields)
}

/** A credential from its stored parts; a record that does not parse is a store failure, never a credential. */
export function decodeStored (fixed: string, counter: number, lastUsed: number | undefined): PasskeyCredential {
  let f: StoredFields
  try {
    f = JSON.parse(fixed) as StoredFields
  } catch (err) {
    throw new PasskeyStoreError('a stored passkey record is corrupt', { cause: err })
  }
  if (f === null || typeof f !== 'object' || typeof f.id !== 'string' || typeof f.userId !== 'string' || typeof f.publicKey !== 'string' ||
      f.user === null || typeof f.user !== 'object' || !Number.isSafeInteger(counter)) {
    throw new PasskeyStoreError('a stored passkey record is corrupt')
  }
  const c: PasskeyCredential = {
    id: f.id,
    userId: f.userId,
    user: f.user,
    publicKey: new Uint8Array(Buffer.from(f.publicKey, 'base64url')),
    counter,
    transports: Array.isArray(f.transports) ? f.transports : [],
    created: f.created,
    deviceType: f.deviceType === 'multiDevice' ? 'multiDevice' : 'singleDevice',
    backedUp: f.backedUp === true
  }
  if (lastUsed !== undefined) c.lastUsed = lastUsed
  if (typeof f.label === 'string') c.label = f.label
  return c
}

/** Checks what a caller hands a store, so every store refuses programming errors alike. */
export function checkCredential (c: PasskeyCredential): void {
  if (c === null || typeof c !== 'object') throw new TypeError('passkey store: a credential object is required')
  checkId(c.id)
  checkUserId(c.userId)
  if (!(c.publicKey instanceof Uint8Array) || c.publicKey.length === 0) throw new TypeError('passkey store: publicKey must be bytes')
  if (!Number.isSafeInteger(c.counter) || c.counter < 0) throw new TypeError('passkey store: counter must be a non-negative integer')
}

export function checkId (id: string): void {
  if (typeof id !== 'string' || id === '') throw new TypeError('passkey store: a credential id is required')
}

export function checkUserId (userId: string): void {
  if (typeof userId !== 'string' || userId === '') throw new TypeError('passkey store: a user id is required')
}

/** Oldest first, then by id: the order every store lists in. */
export function byCreation (a: PasskeyCredential, b: PasskeyCredential): number {
  return a.created - b.created || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
}
