/**
 * E-mail code sign-in: the verified provider mails a typed 6-8 digit code instead of a link, for apps on phones
 * and for the native and device flows, where following a link back into the right app is the hard part.
 *
 * A code is short, so unlike a link it cannot carry its own proof: it is kept in the state store, one per
 * destination address (a new send replaces the old code), as a keyed hash with the login it will complete. It is
 * one-time (taken atomically), lives at most ten minutes, and each sent code allows only `attempts` wrong tries
 * before it is void; on top of that every try runs under the lockout of the address like a password
 * (`rateLimit.failures`), so asking for new codes does not buy unlimited guesses. Compared in constant time.
 */
import { createHmac, randomInt, randomUUID } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError, OptionsError } from '../../lib/errors.js'
import { safeEqual } from '../../lib/compare.js'
import { checkKeys, optionDuration, optionInt } from '../../lib/options.js'
import type { Duration } from '../../lib/duration.js'
import type { StateStore } from '../../lib/state-store.js'
import type { LoginRequest } from '../../lib/login/login-request.js'
import { userId } from '../../lib/user.js'
import type { ProviderKit } from '../../plugins/core/kit.js'

/** Options of e-mail code sign-in (`code` of the verified provider). */
export interface EmailCodeOptions {
  /** Digits of a code: 6 to 8. Default 6. */
  digits?: number | undefined
  /** How long a sent code can be used: ms or `'5m'`, at most 10 minutes. Default 10 minutes. */
  ttl?: Duration | undefined
  /** Wrong tries one sent code allows before it is void (a new code must be asked for): 1 to 10. Default 5. */
  attempts?: number | undefined
}

/** The checked `code` option. */
export interface CodeRules { digits: number; ttlMs: number; attempts: number }

const MAX_TTL_MS = 10 * 60_000
const CODE_KEY = 'verify:code:'
const TRIES_KEY = 'verify:code-tries:'
/**
 * The one refusal of a typed code, whatever went wrong (no code pending, a wrong one, one past its tries): the
 * answer must not tell whether a sign-in is pending for the address.
 */
const REFUSAL = 'wrong or expired code: check it, or ask for a new one'
/** A try without a pending code does what a wrong one does (a count, a comparison), on a key of its own. */
const NONE: PendingCode = { id: 'none', mac: macOf('none', ''), user: '' }

/** Reads the `code` option (`true` for the defaults); undefined when off. OptionsError names the option path. */
export function codeRules (label: string, value: unknown): CodeRules | undefined {
  if (value === undefined || value === false) return undefined
  const o = (value === true ? {} : checkKeys(value, ['digits', 'ttl', 'attempts'], `${label}.code`)) as EmailCodeOptions
  const digits = optionInt(`${label}.code.digits`, o.digits, 6, 6)
  if (digits > 8) throw new OptionsError(`${label}.code.digits`, 'must be 6, 7 or 8')
  const ttlMs = optionDuration(`${label}.code.ttl`, o.ttl, MAX_TTL_MS)
  if (ttlMs > MAX_TTL_MS) throw new OptionsError(`${label}.code.ttl`, 'must be at most 10 minutes')
  const attempts = optionInt(`${label}.code.attempts`, o.attempts, 5, 1)
  if (attempts > 10) throw new OptionsError(`${label}.code.attempts`, 'must be at most 10')
  return { digits, ttlMs, attempts }
}

/** The login a sent code completes, as kept in the state store. */
interface PendingCode {
  /** This send's id: keys its tries and the code's hash, so a replaced code's tries count for nothing new. */
  id: string
  /** HMAC-SHA-256 of the code under the id. */
  mac: string
  user: string
  aud?: string | undefined
  from?: string | undefined
  sess?: boolean | undefined
}

/** Sends and checks the codes of one verified provider. */
export class EmailCodes {
  constructor (
    private readonly kit: ProviderKit,
    private readonly name: string,
    private readonly rules: CodeRules,
    private readonly store: StateStore
  ) {}

  /** A new code for `address`, replacing any earlier one; resolves the code to mail. */
  async issue (request: FastifyRequest, address: string, user: string, login: LoginRequest): Promise<string> {
    const code = String(randomInt(10 ** this.rules.digits)).padStart(this.rules.digits, '0')
    const id = randomUUID()
    const pending: PendingCode = { id, mac: macOf(id, code), user, aud: login.aud, from: login.from, sess: login.sessionOnly || undefined }
    await this.store.set(this.key(address), JSON.stringify(pending), this.rules.ttlMs, { client: this.kit.throttle.clientKey(request) })
    return code
  }

  /** The fields of a code answer's `expiresIn` and `digits`, for the send's JSON answer. */
  get shape (): { digits: number; expiresIn: number } {
    return { digits: this.rules.digits, expiresIn: Math.floor(this.rules.ttlMs / 1000) }
  }

  /**
   * `POST {address, code}`: signs in with the code mailed to `address`. Malformed input is a 400 that counts for
   * nothing; every well-formed try counts toward the address's lockout and the code's own `attempts`.
   */
  async signIn (request: FastifyRequest, reply: FastifyReply, address: string, typed: unknown): Promise<unknown> {
    if (request.method !== 'POST') throw new HttpError(400, 'bad request', 'a code is sent as POST {address, code}, never in a link')
    const code = this.readCode(typed)
    const pending = await this.kit.throttle.guard(request, `verify/${this.name}:${address}`, async () => await this.check(address, code))
    return await this.kit.completeLogin(request, reply, {
      user: { name: pending.user, id: userId(this.name, address) },
      aud: pending.aud,
      from: pending.from,
      sessionOnly: pending.sess === true
    })
  }

  private readCode (typed: unknown): string {
    const digits = this.rules.digits
    if (typeof typed !== 'string' || typed.length !== digits || !/^[0-9]+$/.test(typed)) {
      throw new HttpError(400, 'bad request', `code must be ${digits} digits`, ErrorCodes.BAD_REQUEST)
    }
    return typed
  }

  /**
   * The pending login when `code` is the one sent to `address`; otherwise the one 403 `GATEHOUSE_CREDENTIALS`,
   * after the same steps (a count and a comparison) whether a code was pending or not.
   */
  private async check (address: string, code: string): Promise<PendingCode> {
    const key = this.key(address)
    const pending = readPending(await this.store.get(key))
    const judged = pending ?? NONE
    // Counted before the comparison, so concurrent guesses cannot all pass under the cap.
    const tries = await this.store.increment!(TRIES_KEY + judged.id, this.rules.ttlMs)
    const right = safeEqual(macOf(judged.id, code), judged.mac)
    if (pending === undefined) throw refused()
    if (tries.count > this.rules.attempts) {
      await this.store.delete(key)
      throw refused()
    }
    if (!right) {
      if (tries.count === this.rules.attempts) await this.store.delete(key)
      throw refused()
    }
    // One-time: of concurrent right answers only the one that takes the entry signs in.
    const taken = readPending(await this.store.take(key))
    if (taken?.id !== pending.id) throw new HttpError(401, 'unauthorized', 'code already used', ErrorCodes.ALREADY_USED)
    return pending
  }

  private key (address: string): string {
    return `${CODE_KEY}${this.name}:${macOf('address', address.trim().toLowerCase())}`
  }
}

function macOf (key: string, value: string): string {
  return createHmac('sha256', key).update(value).digest('base64url')
}

function refused (): HttpError {
  return new HttpError(403, 'forbidden', REFUSAL, ErrorCodes.CREDENTIALS)
}

function readPending (raw: string | undefined): PendingCode | undefined {
  if (raw === undefined) return undefined
  try {
    const v = JSON.parse(raw) as PendingCode
    return typeof v.id === 'string' && typeof v.mac === 'string' && typeof v.user === 'string' ? v : undefined
  } catch {
    return undefined
  }
}
