/**
 * Direct login: the host's credential checker decides. `POST /<name>/login?session=1|0` with a form or JSON
 * body `{user, passwd, aud}`; `GET /<name>/login?user=&passwd=&aud=&session=` only with `allowGet: true`
 * (query strings end up in logs, proxies and histories).
 *
 * `app.register(directProvider, { name: 'local', checker })` after the auth core.
 */
import fp from 'fastify-plugin'
import { BREACHED_PASSWORD_HEADER } from './direct-header.js'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError, OptionsError } from '../lib/errors.js'
import { checkKeys, optionFunction, optionName } from '../lib/options.js'
import { notOneString, queryText, requestFields, type LoginRequest } from '../lib/login/login-request.js'
import type { UserData } from '../lib/user.js'
import { requestLogger } from '../lib/logging/logger.js'
import { readCheckerAnswer } from './direct-answer.js'
import type { ReauthCheck } from '../lib/login/reauth.js'
import type { BreachedPasswords } from '../lib/breached-passwords.js'
import { refuseReservedName } from './oauth2/builtins.js'
import { builtinKit, type AuthProvider, type BuiltinKit, type CredChecker } from '../plugins/core/kit.js'

/** Options of the direct provider plugin. */
export interface DirectProviderOptions {
  /** Route name: `{authPrefix}/<name>/login`. Default `local`. */
  name?: string | undefined
  /**
   * Decides on a user name and password (or any prepared hash): `true` signs in the typed name as the lockout
   * counts it (so every spelling of it is one user), `{ ok: true, user }` the account it names (its canonical name,
   * or `{ name, id?, email?, attrs?, role? }`). Required.
   */
  checker: CredChecker
  /**
   * Also sign in with `GET /<name>/login?user=&passwd=` (go-pkgz/auth's form). Default false: a GET login answers
   * 405 (`Allow: POST`), since a password in a URL ends up in access logs, proxies and browser histories.
   */
  allowGet?: boolean | undefined
  /**
   * Checks the password of every sign-in against known data breaches (ASVS 5.0 6.2.12), once the checker said it
   * is right: `{ check: breachedPasswords({ … }), onBreached: 'warn' | 'refuse' }`. `warn` signs in with the
   * answer's `Gatehouse-Password-Breached: true` header and a `password.breached` audit event (ask the user to
   * change it); `refuse` answers 403 `GATEHOUSE_BREACHED_PASSWORD` and issues nothing. Default off.
   */
  breachedPasswords?: DirectBreachedPasswords | undefined
}

/** The direct provider's `breachedPasswords` option. */
export interface DirectBreachedPasswords {
  /** The check (`breachedPasswords(options)`, or any `{ check(password) }`). */
  check: BreachedPasswords
  /** What a breached password does at sign-in: `warn` (sign in, flag and audit) or `refuse` (403). Default `warn`. */
  onBreached?: 'warn' | 'refuse' | undefined
}

export { BREACHED_PASSWORD_HEADER } from './direct-header.js'

const MAX_USER = 256
const MAX_PASSWD = 4096

/** The provider object: what `directProvider` mounts. The mount has counted the request and read `login`. */
export function createDirectProvider (kit: BuiltinKit, name: string, checker: CredChecker, allowGet = false, breached?: ResolvedBreached): AuthProvider {
  return {
    name,
    async login (request: FastifyRequest, reply: FastifyReply, login: LoginRequest) {
      if (request.method === 'POST') checkBody(request.body)
      else if (!allowGet) refuseGet(reply, name)
      const fields = requestFields(request)
      const user = queryText(fields, 'user', MAX_USER, true)!
      const passwd = secretField(fields, 'passwd', MAX_PASSWD)
      // Lockout (rateLimit.failures): refused 429 while this user name (existing or not) or address is locked.
      // The one user every spelling of the account signs in (the checker's answer): its id keys the second factor,
      // the session list and revokeUser.
      const account = await kit.throttle.guard(request, `direct/${name}:${user}`, async () => await check(kit, request, name, checker, user, passwd))
      if (breached !== undefined) await checkBreached(kit, request, reply, name, breached, account.id, passwd)
      const result = { user: account, ...login }
      // A second factor required of this provider (e.g. passkeys) may take the login over: then no session yet.
      const outcome = await kit.secondFactors.of(name)?.(request, reply, result) ?? 'complete'
      if (outcome === 'complete') return await kit.completeLogin(request, reply, result)
      const audit = kit.audit
      if (audit.on) audit.emit(request, 'login.second_factor_required', { reason: 'second_factor', provider: name, userId: result.user.id, aud: login.aud })
      return reply
    }
  }
}

/** Runs the checker: the user it signs in, or 403 `GATEHOUSE_CREDENTIALS` (503 when it throws). */
async function check (kit: BuiltinKit, request: FastifyRequest, name: string, checker: CredChecker, user: string, passwd: string): Promise<UserData> {
  let answer: unknown
  try {
    answer = await checker(user, passwd)
  } catch (err) {
    // Logged once, with this cause, by the auth routes' error handler.
    throw new HttpError(503, 'unavailable', 'credential check failed', undefined, { cause: err })
  }
  const verdict = readCheckerAnswer(answer, user, name, kit.throttle.accountName)
  if ('user' in verdict) return verdict.user
  if (verdict.malformed !== undefined) {
    requestLogger(kit.logger, request).logf('[ERROR] direct provider "%s": the checker answered %s; refused as a wrong password', name, verdict.malformed)
  }
  throw new HttpError(403, 'forbidden', 'incorrect user or password', ErrorCodes.CREDENTIALS)
}

/** The `breachedPasswords` option, checked. */
interface ResolvedBreached { check: BreachedPasswords; refuse: boolean }

/**
 * After a right password: a breached one is refused (403, nothing issued) or flagged on the answer, audited either
 * way. A check that could not answer (fail-open) lets the sign-in go on, logged.
 */
async function checkBreached (kit: BuiltinKit, request: FastifyRequest, reply: FastifyReply, name: string, o: ResolvedBreached, userId: string, passwd: string): Promise<void> {
  const found = await o.check.check(passwd)
  if (!found.checked) requestLogger(kit.logger, request).logf('[WARN] direct provider "%s": breached-password check unavailable; sign-in of %s let in unchecked', name, userId)
  if (!found.breached) return
  if (kit.audit.on) kit.audit.emit(request, 'password.breached', { reason: o.refuse ? 'refused' : 'warned', outcome: o.refuse ? 'failure' : 'success', provider: name, userId, count: found.count })
  if (o.refuse) throw new HttpError(403, 'forbidden', 'this password is known from data breaches; reset it to sign in', ErrorCodes.BREACHED_PASSWORD)
  reply.header(BREACHED_PASSWORD_HEADER, 'true')
}

function breachedOption (value: unknown): ResolvedBreached | undefined {
  if (value === undefined) return undefined
  const o = checkKeys(value, ['check', 'onBreached'], 'direct.breachedPasswords')
  const check = o.check as BreachedPasswords | undefined
  if (check === null || typeof check !== 'object' || typeof check.check !== 'function') {
    throw new OptionsError('direct.breachedPasswords.check', 'is required: breachedPasswords({ rangeUrl?, file?, … }) or { check(password) }')
  }
  const on = o.onBreached ?? 'warn'
  if (on !== 'warn' && on !== 'refuse') throw new OptionsError('direct.breachedPasswords.onBreached', 'must be \'warn\' or \'refuse\'')
  return { check, refuse: on === 'refuse' }
}

function refuseGet (reply: FastifyReply, name: string): never {
  reply.header('allow', 'POST')
  throw new HttpError(405, 'method not allowed', `POST the user and passwd; GET logins are off (direct provider "${name}" option allowGet)`, ErrorCodes.BAD_REQUEST)
}

function checkBody (body: unknown): void {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new HttpError(400, 'bad request', 'expected a form or JSON object with user and passwd')
}

/** A password (or prepared hash): any characters, one value, bounded length. */
function secretField (src: Record<string, unknown>, key: string, max: number): string {
  const v = src[key]
  if (v === undefined || v === '') throw new HttpError(400, 'bad request', `${key} is required`)
  if (typeof v !== 'string') throw notOneString(key, v)
  if (v.length > max) throw new HttpError(400, 'bad request', `${key} is too long`)
  return v
}

async function direct (fastify: FastifyInstance, opts: DirectProviderOptions): Promise<void> {
  const o = checkKeys(opts, ['name', 'checker', 'allowGet', 'breachedPasswords'], 'direct')
  const name = optionName('direct.name', o.name, 'local')
  refuseReservedName('direct.name', name)
  const checker = optionFunction<CredChecker>('direct.checker', o.checker)
  if (checker === undefined) throw new OptionsError('direct.checker', 'is required: (user, passwd) => boolean | { ok, user } (or a promise of one)')
  if (o.allowGet !== undefined && typeof o.allowGet !== 'boolean') throw new OptionsError('direct.allowGet', 'must be true or false')
  const kit = builtinKit(fastify, 'direct')
  kit.mount(createDirectProvider(kit, name, checker, o.allowGet === true, breachedOption(o.breachedPasswords)))
  kit.secondFactors.take(name)
  kit.reauth.register('password', passwordAgain(kit, name, checker))
}

/**
 * Re-authentication of a signed-in user of this provider by password (a change of factors sends it again): the
 * checker decides for the session's user name, under the same lockout as a sign-in, and the account it signs in
 * must be the session's. Users of other providers (ids not `<name>_<sha1>`) are not this provider's to check.
 */
function passwordAgain (kit: BuiltinKit, name: string, checker: CredChecker): ReauthCheck {
  const ours = new RegExp(`^${name.replace(/[-.*+?^${}()|[\]\\]/g, '\\$&')}_[0-9a-f]{40}$`)
  return async (request, { user }, value) => {
    if (!ours.test(user.id)) return false
    const passwd = secretField({ password: value }, 'password', MAX_PASSWD)
    const account = await kit.throttle.guard(request, `direct/${name}:${user.name}`, async () => await check(kit, request, name, checker, user.name, passwd))
    if (account.id !== user.id) throw new HttpError(403, 'forbidden', 'incorrect password', ErrorCodes.CREDENTIALS)
    return true
  }
}

/** Direct (credential-checker) login as a plugin (`gatehouse-direct`). */
export const directProvider = fp(direct, { name: 'gatehouse-direct', fastify: '5.x' })
