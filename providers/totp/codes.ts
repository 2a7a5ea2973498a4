/**
 * The codes: TOTP arithmetic (RFC 6238, through otpauth), the drift window (steps before the current one only),
 * and recovery codes (10 random codes of 120 bits in an alphabet without look-alike letters, typed with or without
 * dashes, in any case). 120 bits because a recovery code is stored as a keyed hash (HMAC-SHA-256), fast to compute:
 * ASVS 5.0 6.5.2 accepts a plain hash only for secrets of at least 112 bits. Codes of 60 bits (12 characters), which
 * earlier releases made, are still taken (their stored hashes are the same kind) until the user gets new ones.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto'
import { HttpError } from '../../lib/errors.js'
import type { ResolvedTotpOptions } from './options.js'

export type OtpAuth = typeof import('otpauth')

const RECOVERY_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ' // Crockford's base32: no I, L, O, U
const RECOVERY_LENGTH = 24 // 24 × 5 bits = 120 bits
/** The length of the codes earlier releases made (60 bits), still taken so that users keep the codes they wrote down. */
const LEGACY_RECOVERY_LENGTH = 12
export const RECOVERY_COUNT = 10

/** A code as typed: digits only, of the configured length; a 400 otherwise (nothing is checked or counted). */
export function readCode (value: unknown, digits: number): string {
  if (typeof value !== 'string' || !new RegExp(`^[0-9]{${digits}}$`).test(value.replace(/\s/g, ''))) {
    throw new HttpError(400, 'bad request', `code must be ${digits} digits`)
  }
  return value.replace(/\s/g, '')
}

/**
 * The time step `code` belongs to, among the current one and the `window` steps before it (a code typed as its
 * step ended, an app's clock a little behind), or undefined. A step ahead of the server's clock is never accepted:
 * it would only lengthen the life of every code. Every candidate is computed and compared in constant time.
 */
export function matchStep (otp: OtpAuth, o: ResolvedTotpOptions, secret: Uint8Array, code: string, now: number): number | undefined {
  const current = Math.floor(now / 1000 / o.period)
  const key = new otp.Secret({ buffer: new Uint8Array(secret).buffer })
  let found: number | undefined
  for (let step = current - o.window; step <= current; step++) {
    const expected = otp.HOTP.generate({ secret: key, algorithm: o.algorithm, digits: o.digits, counter: step })
    if (timingSafeEqual(Buffer.from(expected), Buffer.from(code)) && found === undefined) found = step
  }
  return found
}

/** The `otpauth://totp/…` URI an authenticator app reads from the QR code. */
export function otpauthUri (otp: OtpAuth, o: ResolvedTotpOptions, account: string, secret: Uint8Array): string {
  return new otp.TOTP({
    issuer: o.issuer, label: account, secret: new otp.Secret({ buffer: new Uint8Array(secret).buffer }),
    algorithm: o.algorithm, digits: o.digits, period: o.period
  }).toString()
}

export function base32Of (otp: OtpAuth, secret: Uint8Array): string {
  return new otp.Secret({ buffer: new Uint8Array(secret).buffer }).base32
}

/** Ten new recovery codes, as shown to the user (`XXXX-XXXX-XXXX-XXXX-XXXX-XXXX`). */
export function newRecoveryCodes (): string[] {
  return Array.from({ length: RECOVERY_COUNT }, () => {
    // 256 is a multiple of 32: the low five bits of a random byte are a uniform character.
    const chars = Array.from(randomBytes(RECOVERY_LENGTH), (b) => RECOVERY_ALPHABET[b & 31]).join('')
    return chars.match(/.{4}/g)!.join('-')
  })
}

/** A recovery code as typed, in its canonical form (no dashes or spaces, upper case, look-alikes mapped); 400 otherwise. */
export function readRecoveryCode (value: unknown): string {
  const text = typeof value === 'string' ? value.replace(/[\s-]/g, '').toUpperCase().replace(/O/g, '0').replace(/[IL]/g, '1') : ''
  if ((text.length !== RECOVERY_LENGTH && text.length !== LEGACY_RECOVERY_LENGTH) || [...text].some((c) => !RECOVERY_ALPHABET.includes(c))) {
    throw new HttpError(400, 'bad request', `recoveryCode must be ${RECOVERY_LENGTH} characters (dashes optional)`)
  }
  return text
}

/** The canonical form of a code as shown (what `readRecoveryCode` gives for it). */
export function canonicalRecoveryCode (shown: string): string {
  return shown.replace(/-/g, '')
}
