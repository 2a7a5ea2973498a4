/**
 * The host's key at work: TOTP secrets sealed with AES-256-GCM (bound to their user, so an entry copied to another
 * user does not open), recovery codes kept as HMACs (never retrievable, and useless without the key even to
 * someone holding the store), and the key check that refuses a wrong key at startup.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto'
import { OptionsError } from '../../lib/errors.js'
import type { TotpStore } from '../../stores/totp/index.js'

export interface Sealer {
  /** The secret, encrypted for `userId`: `v1.<iv>.<ciphertext>.<tag>` in base64url. */
  seal(userId: string, secret: Uint8Array): string
  /** The secret, or undefined when it does not open with this key for this user. */
  open(userId: string, sealed: string): Buffer | undefined
  /** What is stored of one recovery code of `userId`. */
  recoveryHash(userId: string, code: string): string
}

const CHECK_USER = '\0gatehouse-totp-key-check'
const CHECK_TEXT = Buffer.from('gatehouse-totp')

const KEY_BYTES = 32
const MAKE_KEY = 'make one with `openssl rand -base64 32`'
const HEX_KEY = /^[0-9a-f]{64}$/i
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/

/**
 * The 32-byte key from a Buffer, 64 hex characters, or base64/base64url; an OptionsError naming `option` that says
 * how the value was read, how many bytes it gave, and how to make a key, otherwise.
 */
export function readKey (option: string, value: unknown): Buffer {
  if (value === undefined || value === null || value === '') {
    throw new OptionsError(option, `is required: ${KEY_BYTES} random bytes as base64 (or 64 hex characters, or a Buffer); ${MAKE_KEY}`)
  }
  if (value instanceof Uint8Array) return checkKeyBytes(option, Buffer.from(value), 'is a Buffer of')
  if (typeof value !== 'string') throw new OptionsError(option, `must be a base64 string of ${KEY_BYTES} random bytes (or a Buffer), got ${typeof value}; ${MAKE_KEY}`)
  // A key read from a file keeps its line break; whitespace around it is no part of it.
  const text = value.trim()
  if (HEX_KEY.test(text)) return Buffer.from(text, 'hex')
  if (!BASE64.test(text)) {
    throw new OptionsError(option, `is read as base64 (or as hex when it is 64 hex characters), and this is neither: it has characters outside the base64 alphabet; ${MAKE_KEY}`)
  }
  const hex = /^[0-9a-f]+$/i.test(text) ? ' (hex is read as hex only at 64 characters)' : ''
  return checkKeyBytes(option, Buffer.from(text, 'base64'), 'is read as base64 and gives', hex)
}

function checkKeyBytes (option: string, key: Buffer, read: string, hint = ''): Buffer {
  if (key.length !== KEY_BYTES) throw new OptionsError(option, `${read} ${key.length} bytes, but an AES-256 key is ${KEY_BYTES} bytes${hint}; ${MAKE_KEY}`)
  return key
}

export function sealer (key: Buffer): Sealer {
  const encKey = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'gatehouse-totp-secret', 32))
  const macKey = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'gatehouse-totp-recovery', 32))
  return {
    seal (userId, secret) {
      const iv = randomBytes(12)
      const c = createCipheriv('aes-256-gcm', encKey, iv).setAAD(Buffer.from(userId))
      const ct = Buffer.concat([c.update(secret), c.final()])
      return ['v1', iv, ct, c.getAuthTag()].map((p) => typeof p === 'string' ? p : p.toString('base64url')).join('.')
    },
    open (userId, sealed) {
      const [v, iv, ct, tag] = sealed.split('.')
      if (v !== 'v1' || iv === undefined || ct === undefined || tag === undefined) return undefined
      try {
        const d = createDecipheriv('aes-256-gcm', encKey, Buffer.from(iv, 'base64url')).setAAD(Buffer.from(userId))
        d.setAuthTag(Buffer.from(tag, 'base64url'))
        return Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()])
      } catch {
        return undefined
      }
    },
    recoveryHash: (userId, code) => createHmac('sha256', macKey).update(userId).update('\0').update(code).digest('base64url')
  }
}

/**
 * Refuses a key that does not open the store's key check (the store was filled with another key), and gives an
 * empty store its check. Without it a wrong key would surface as every user's code being refused.
 */
export async function checkKey (store: TotpStore, s: Sealer, option: string): Promise<void> {
  const kept = await store.keyCheck(s.seal(CHECK_USER, CHECK_TEXT))
  if (s.open(CHECK_USER, kept)?.equals(CHECK_TEXT) !== true) {
    throw new OptionsError(option, 'does not open this store\'s secrets: it is not the key they were sealed with')
  }
}
