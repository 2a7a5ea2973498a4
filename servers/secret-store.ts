import { createHash, randomBytes } from 'node:crypto'

/** A fresh unguessable value: 32 random bytes, base64url (43 characters). */
export function randomSecret (): string {
  return randomBytes(32).toString('base64url')
}

/** A syntactically possible `randomSecret()` value; anything else is refused before any lookup. */
export function looksLikeSecret (value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9_-]{43}$/.test(value)
}

/**
 * Short-lived records (pending logins, authorization codes, access tokens) found by a secret value.
 *
 * Records are keyed by the SHA-256 of the secret, so a lookup's timing says nothing about the secret
 * itself and a memory dump holds no usable token. Expiry is checked on read and expired records are
 * swept on write, so no timer runs and nothing needs stopping. The size is bounded: the oldest record
 * goes first, so a flood of logins cannot exhaust memory.
 */
export class SecretStore<T> {
  private readonly records = new Map<string, { value: T; expiresAt: number }>()

  constructor (private readonly ttlMs: number, private readonly maxSize = 10_000) {}

  /** Stores the value under a new secret and returns that secret. */
  add (value: T): string {
    const secret = randomSecret()
    this.sweep()
    if (this.records.size >= this.maxSize) {
      const oldest = this.records.keys().next()
      if (oldest.done !== true) this.records.delete(oldest.value)
    }
    this.records.set(hash(secret), { value, expiresAt: Date.now() + this.ttlMs })
    return secret
  }

  /** The record of the secret: `expired` once its time is over (it is then forgotten), `missing` when unknown. */
  find (secret: unknown): { status: 'ok'; value: T } | { status: 'expired' | 'missing' } {
    if (!looksLikeSecret(secret)) return { status: 'missing' }
    const key = hash(secret)
    const record = this.records.get(key)
    if (record === undefined) return { status: 'missing' }
    if (Date.now() >= record.expiresAt) {
      this.records.delete(key)
      return { status: 'expired' }
    }
    return { status: 'ok', value: record.value }
  }

  delete (secret: string): void {
    this.records.delete(hash(secret))
  }

  /** Seconds a new record lives (for `expires_in`). */
  get ttlSeconds (): number { return Math.floor(this.ttlMs / 1000) }

  private sweep (): void {
    const now = Date.now()
    // Insertion order is expiry order (one TTL per store), so the sweep stops at the first live record.
    for (const [key, record] of this.records) {
      if (now < record.expiresAt) break
      this.records.delete(key)
    }
  }
}

function hash (secret: string): string {
  return createHash('sha256').update(secret).digest('base64url')
}
