/**
 * Password hashes for the basic-auth family and the `hash` CLI: bcrypt (bcryptjs, pure JS) and raw Argon2id
 * (argon2). Passwords are NFC-normalized first, as RFC 7617 asks for with `charset="UTF-8"`, so the same
 * visible password typed on different systems hashes the same.
 */
import { requireLazy } from '../../lib/lazy.js'
import { checkDriver, requireDriver } from '../../lib/optional-driver.js'
import { randomBytes } from 'node:crypto'
import { OptionsError } from '../../lib/errors.js'
import { safeEqual } from '../../lib/compare.js'
import { decodeBase64Strict, normalizeCredential } from '../../lib/basic-credentials.js'

// Both are loaded on first use, not when the toolkit is imported. argon2 (a native addon) is an optional
// package: `argon2Hash`, and `decodeArgon2Secret` at setup time, say what to install when it is missing.
const bcrypt = (): typeof import('bcryptjs') => requireLazy<typeof import('bcryptjs')>('bcryptjs')
const ARGON2_FEATURE = 'Argon2id password hashes'
const argon2 = (option: string): typeof import('argon2') => requireDriver<typeof import('argon2')>('argon2', { option, feature: ARGON2_FEATURE })

/** Throws an OptionsError naming `option` and the `npm i` line unless argon2 is installed; loads nothing. */
export function checkArgon2Installed (option: string): void {
  checkDriver('argon2', { option, feature: ARGON2_FEATURE })
}

/**
 * Argon2id cost. The defaults (time 1, 64 MiB, 4 lanes, 32-byte key) are the parameters of Go's
 * `argon2.IDKey` in common use, so hashes made by Go services with them verify here and vice versa.
 */
export interface Argon2Params {
  /** Passes over memory. Default 1. */
  timeCost?: number | undefined
  /** Memory in KiB. Default 65536 (64 MiB). */
  memoryCost?: number | undefined
  /** Lanes. Default 4. */
  parallelism?: number | undefined
}

const ARGON2_DEFAULTS = { timeCost: 1, memoryCost: 64 * 1024, parallelism: 4 }
const ARGON2_KEY_BYTES = 32
const SALT_BYTES = 16
const BCRYPT_MAX_BYTES = 72
const BCRYPT_HASH = /^\$2[aby]\$(0[4-9]|[12]\d|3[01])\$[./A-Za-z0-9]{53}$/
/** The code of the warning about a stored value that is not a hash (`node --disable-warning=GATEHOUSE_NOT_A_HASH`). */
const NOT_A_HASH = 'GATEHOUSE_NOT_A_HASH'


/**
 * bcrypt hash of the password (cost 4..31, default 10). Rejects passwords bcrypt would silently truncate.
 * Bad arguments reject with an `OptionsError` naming `bcryptHash.passwd` or `bcryptHash.cost`.
 */
export async function bcryptHash (passwd: string, cost = 10): Promise<string> {
  checkPassword('bcryptHash.passwd', passwd)
  if (Buffer.byteLength(normalizeCredential(passwd)) > BCRYPT_MAX_BYTES) {
    throw new OptionsError('bcryptHash.passwd', `is longer than bcrypt's ${BCRYPT_MAX_BYTES} bytes`)
  }
  if (!Number.isInteger(cost) || cost < 4 || cost > 31) throw new OptionsError('bcryptHash.cost', 'must be an integer from 4 to 31')
  return bcrypt().hash(normalizeCredential(passwd), cost)
}

/** Throws an OptionsError naming `option` unless `hash` is a bcrypt hash (`$2a$`, `$2b$` or `$2y$`). */
export function checkBcryptHash (hash: unknown, option: string): asserts hash is string {
  if (typeof hash !== 'string' || !BCRYPT_HASH.test(hash)) throw new OptionsError(option, 'is not a bcrypt hash ($2a$/$2b$/$2y$)')
}

/**
 * True when the password matches the bcrypt hash; false for passwords bcrypt would truncate. A stored value that
 * is not a bcrypt hash refuses every password: the first time, a process warning (`GATEHOUSE_NOT_A_HASH`) says so,
 * since that is how a hash mangled on its way in (double-quoted in a shell, an unset variable) shows.
 */
export async function bcryptVerify (passwd: string, hash: string): Promise<boolean> {
  if (typeof hash !== 'string' || !BCRYPT_HASH.test(hash)) {
    warnNotAHash('bcryptVerify', hash, 'a bcrypt hash ($2a$/$2b$/$2y$, 60 characters)',
      'A hash in double quotes is expanded by the shell ("$2b$10$…" becomes "b0"): quote it with single quotes, as `fastify-gatehouse hash --bcrypt --env NAME` prints it.')
    return false
  }
  const p = normalizeCredential(passwd)
  if (Buffer.byteLength(p) > BCRYPT_MAX_BYTES) return false
  return bcrypt().compare(p, hash)
}

/** The functions that have warned about a stored value that is not their kind of hash: each warns once. */
const warnedNotAHash = new Set<string>()

/**
 * The one warning of `fn` about a stored value that is not its kind of hash. Only the value's type and length
 * are told: a value that is not a hash may be the password itself.
 */
function warnNotAHash (fn: string, value: unknown, kind: string, hint: string): void {
  if (warnedNotAHash.has(fn)) return
  warnedNotAHash.add(fn)
  const what = typeof value === 'string' ? `a string of ${value.length} characters` : value === null ? 'null' : typeof value
  process.emitWarning(`fastify-gatehouse: ${fn} was given ${what} where ${kind} belongs, so every password is refused. ${hint}`,
    { type: 'GatehouseWarning', code: NOT_A_HASH })
}

/**
 * Argon2id hash of the password with a fresh 16-byte salt; both base64 (standard alphabet, padded). Bad
 * arguments reject with an `OptionsError` naming `argon2Hash.passwd` or `argon2Hash.params.<field>`.
 */
export async function argon2Hash (passwd: string, params: Argon2Params = {}): Promise<{ hash: string; salt: string }> {
  checkPassword('argon2Hash.passwd', passwd)
  checkArgon2Params('argon2Hash.params', params)
  const salt = randomBytes(SALT_BYTES)
  const key = await argon2Raw('argon2Hash', passwd, salt, ARGON2_KEY_BYTES, params)
  return { hash: key.toString('base64'), salt: salt.toString('base64') }
}

/** A decoded Argon2id hash and salt, validated once at setup. */
export interface Argon2Secret { hash: Buffer; salt: Buffer; params: Argon2Params }

/**
 * Decodes and validates a base64 hash and salt; throws an OptionsError naming the bad one as
 * `<label>.argon2Hash`, `<label>.argon2Salt` or `<label>.argon2Params.<field>`.
 */
export function decodeArgon2Secret (b64hash: unknown, b64salt: unknown, params: Argon2Params = {}, label = 'basicAuth'): Argon2Secret {
  const hash = decodeBase64Strict(b64hash)
  if (hash === null || hash.length < 4) throw new OptionsError(`${label}.argon2Hash`, 'must be the base64 of an Argon2id hash (at least 4 bytes)')
  const salt = decodeBase64Strict(b64salt)
  if (salt === null || salt.length < 8) throw new OptionsError(`${label}.argon2Salt`, 'must be the base64 of a salt of at least 8 bytes')
  checkArgon2Params(`${label}.argon2Params`, params)
  checkArgon2Installed(`${label}.argon2Hash`)
  return { hash, salt, params }
}

/**
 * True when the password hashes to the stored Argon2id hash (compared in constant time). A `secret` that is not
 * what `decodeArgon2Secret` returns (the base64 strings themselves, a bcrypt hash) refuses every password, with
 * a process warning (`GATEHOUSE_NOT_A_HASH`) the first time.
 */
export async function argon2Verify (passwd: string, secret: Argon2Secret): Promise<boolean> {
  if (!isArgon2Secret(secret)) {
    warnNotAHash('argon2Verify', secret, 'a decoded Argon2id hash', 'Decode the stored hash and salt once with decodeArgon2Secret(hash, salt) and pass what it returns.')
    return false
  }
  const key = await argon2Raw('argon2Verify', passwd, secret.salt, secret.hash.length, secret.params)
  return safeEqual(key.toString('base64'), secret.hash.toString('base64'))
}


function isArgon2Secret (v: unknown): v is Argon2Secret {
  const s = v as Partial<Argon2Secret> | null
  return s !== null && typeof s === 'object' && Buffer.isBuffer(s.hash) && s.hash.length >= 4 && Buffer.isBuffer(s.salt) && s.salt.length >= 8
}

async function argon2Raw (caller: string, passwd: string, salt: Buffer, hashLength: number, params: Argon2Params): Promise<Buffer> {
  const a2 = argon2(caller)
  return a2.hash(normalizeCredential(passwd), {
    type: a2.argon2id,
    raw: true,
    salt,
    hashLength,
    timeCost: params.timeCost ?? ARGON2_DEFAULTS.timeCost,
    memoryCost: params.memoryCost ?? ARGON2_DEFAULTS.memoryCost,
    parallelism: params.parallelism ?? ARGON2_DEFAULTS.parallelism
  })
}

function checkArgon2Params (option: string, p: Argon2Params): void {
  if (p === null || typeof p !== 'object') throw new OptionsError(option, 'must be an object')
  const int = (v: unknown, min: number, name: string): void => {
    if (v !== undefined && (!Number.isInteger(v) || (v as number) < min)) throw new OptionsError(`${option}.${name}`, `must be an integer >= ${min}`)
  }
  int(p.timeCost, 1, 'timeCost')
  int(p.memoryCost, 8, 'memoryCost')
  int(p.parallelism, 1, 'parallelism')
}

function checkPassword (option: string, passwd: unknown): asserts passwd is string {
  if (typeof passwd !== 'string' || passwd === '') throw new OptionsError(option, 'must be a non-empty string')
}

export { decodeBase64Strict, normalizeCredential }
