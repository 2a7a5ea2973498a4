/**
 * The basic-auth family: `basicAuth(checker)`, `withUserPasswd`, `withBcryptHash`, `withArgon2Hash`,
 * `withPrompt`. Each returns an async hook for `onRequest`/`preHandler` (or `maybe`/`wrap`);
 * `basicAuthPlugin` installs one for a whole encapsulation context.
 *
 * Answers: 401 `{error: "unauthorized", code: "GATEHOUSE_UNAUTHORIZED"}` when no usable `Authorization: Basic`
 * header is sent (absent, another scheme, bad base64, invalid UTF-8, no colon); 403 `{error: "forbidden",
 * code: "GATEHOUSE_CREDENTIALS"}` when the credentials are wrong, including an empty user name. `withPrompt`
 * (or the `realm` option) adds `WWW-Authenticate` to the 401 so a browser asks for credentials; a wrong answer
 * then gets 403 like every variant. On success `request.basicAuthorized` is true, and a checker may hand back
 * a user for `request.user`.
 *
 * Why not @fastify/basic-auth: it answers a failed check with 401 (this family answers 403), and an async
 * `validate` resolving to anything but `undefined` crashes the process. Parsing the header is a few strict
 * lines, and doing it here also gives hooks that work without any plugin or decorator.
 *
 * Configuration mistakes throw an `OptionsError` naming `basicAuth.<option>` (`basicAuth.user`,
 * `basicAuth.passwd`, `basicAuth.bcryptHash`, …) for the hook functions and the plugin alike.
 *
 * Constant time: user and password are both always compared (`safeEqual`, no short-circuit), and the hash
 * variants always run the hash, so timing tells nothing about which part was wrong.
 *
 * Fixed credentials (`withUserPasswd`, `withPrompt`, the plugin's `passwd`) are also turned into the exact header
 * a client sends for them (`Basic ` and the canonical base64 of the NFC `user:passwd`), and each request's header
 * is first compared with it as bytes, in constant time: the usual request costs one small copy and one compare,
 * no decoding. Any other spelling (scheme in another case, more spaces, decomposed characters) and every wrong
 * header take the full parse, which reaches the same verdict.
 */
import fp from 'fastify-plugin'
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import { ErrorCodes, OptionsError, sendError } from '../../lib/errors.js'
import { User, type BasicAuthResult, type MaybePromise } from '../../lib/user.js'
import { timingSafeEqual } from 'node:crypto'
import { safeEqual } from '../../lib/compare.js'
import type { ToolkitHook } from './hook.js'
import { parseBasicCredentials, type BasicCredentials } from '../../lib/basic-credentials.js'
import {
  argon2Verify, bcryptVerify, checkBcryptHash, decodeArgon2Secret, normalizeCredential,
  type Argon2Params
} from './password-hash.js'
import { throttleBasicAuth, type BasicAuthThrottle } from './basic-auth-throttle.js'

/** Options of the hook functions. */
export interface BasicAuthHookOptions {
  /** Opt-in lockout after failed checks (per user name and per address, with backoff; 429 while locked). */
  throttle?: BasicAuthThrottle | undefined
}

/**
 * Decides on credentials (already NFC-normalized, user never empty). `true`/`{ok: true}` accepts;
 * `{ok: true, user}` also sets `request.user`.
 */
export type BasicChecker = (user: string, passwd: string, request: FastifyRequest) => MaybePromise<boolean | BasicAuthResult>

const DEFAULT_REALM = 'restricted'
// RFC 9110 quoted-string without quotes or backslashes, so the realm needs no escaping.
const REALM = /^[\x20\x21\x23-\x5b\x5d-\x7e]{1,128}$/
const LABEL = 'basicAuth'

/** Hook over a consumer checker. `realm` adds the browser prompt to 401 answers; `opts.throttle` the lockout. */
export function basicAuth (checker: BasicChecker, realm?: string, opts?: BasicAuthHookOptions): ToolkitHook {
  return withThrottle(checkingHook(checker, realm), opts?.throttle)
}

function withThrottle (hook: ToolkitHook, throttle: BasicAuthThrottle | undefined): ToolkitHook {
  return throttle === undefined ? hook : throttleBasicAuth(hook, throttle, LABEL)
}

/** The hook; `exact` (fixed credentials only) accepts the one expected header before any parsing. */
function checkingHook (checker: BasicChecker, realm: string | undefined, exact?: (header: string | undefined) => boolean): ToolkitHook {
  if (typeof checker !== 'function') throw new OptionsError(`${LABEL}.checker`, 'must be a function')
  const challenge = realm === undefined ? undefined : challengeFor(realm)
  return async function basicAuthHook (request, reply) {
    if (exact?.(request.headers.authorization) === true) {
      request.basicAuthorized = true
      return
    }
    const creds = parseBasicCredentials(request.headers.authorization)
    if (creds.status !== 'ok') {
      if (challenge !== undefined) reply.header('www-authenticate', challenge)
      const details = creds.status === 'missing' ? 'basic auth credentials required' : creds.reason
      // Waiting for the answer makes Fastify stop the chain even when an async onSend hook delays it.
      await sendError(reply, 401, 'unauthorized', details)
      return
    }
    const verdict = creds.user === '' ? false : await checker(creds.user, creds.passwd, request)
    const ok = verdict === true || (typeof verdict === 'object' && verdict !== null && verdict.ok === true)
    if (!ok) {
      await sendError(reply, 403, 'forbidden', 'invalid credentials', ErrorCodes.CREDENTIALS)
      return
    }
    request.basicAuthorized = true
    if (typeof verdict === 'object' && verdict.user !== undefined) request.user = new User(verdict.user)
  }
}

/** Fixed user and password. */
export function withUserPasswd (user: string, passwd: string): ToolkitHook {
  return fixedHook(user, passwd, undefined)
}

/** Fixed user and password, with `WWW-Authenticate: Basic realm="…", charset="UTF-8"` on 401. */
export function withPrompt (user: string, passwd: string, realm = DEFAULT_REALM): ToolkitHook {
  return fixedHook(user, passwd, realm)
}

function fixedHook (user: string, passwd: string, realm: string | undefined): ToolkitHook {
  const checker = fixedChecker(user, passwd)
  return checkingHook(checker, realm, exactHeader(normalizeCredential(user), normalizeCredential(passwd)))
}

/**
 * True when the header is byte for byte the one a client sends for these credentials. Time depends on the
 * header's length only: with another length the expected bytes are compared with themselves, so the length
 * of the secret does not show either.
 */
function exactHeader (user: string, passwd: string): (header: string | undefined) => boolean {
  const expected = Buffer.from(`Basic ${Buffer.from(`${user}:${passwd}`, 'utf8').toString('base64')}`, 'latin1')
  return (header) => {
    if (header === undefined) return false
    // UTF-8, not latin1: a character above U+00FF must not be cut down to an ASCII byte of the expected header.
    const got = Buffer.from(header, 'utf8')
    const sameLength = got.length === expected.length
    return timingSafeEqual(sameLength ? got : expected, expected) && sameLength
  }
}

/** Fixed user; the password checked against a bcrypt hash (see `bcryptHash`). `opts.throttle`: lockout. */
export function withBcryptHash (user: string, hash: string, opts?: BasicAuthHookOptions): ToolkitHook {
  return basicAuth(bcryptChecker(user, hash), undefined, opts)
}

/** Fixed user; the password checked against a base64 Argon2id hash and salt (see `argon2Hash`). `opts.throttle`: lockout. */
export function withArgon2Hash (user: string, b64hash: string, b64salt: string, params?: Argon2Params, opts?: BasicAuthHookOptions): ToolkitHook {
  return basicAuth(argon2Checker(user, b64hash, b64salt, params), undefined, opts)
}

function fixedChecker (user: string, passwd: string): BasicChecker {
  const u = checkUser(user)
  if (typeof passwd !== 'string' || passwd === '') throw new OptionsError(`${LABEL}.passwd`, 'must be a non-empty string')
  const p = normalizeCredential(passwd)
  return (gotUser, gotPasswd) => {
    const userOk = safeEqual(gotUser, u)
    const passOk = safeEqual(gotPasswd, p)
    return userOk && passOk
  }
}

function bcryptChecker (user: string, hash: string): BasicChecker {
  const u = checkUser(user)
  checkBcryptHash(hash, `${LABEL}.bcryptHash`)
  return async (gotUser, gotPasswd) => {
    const userOk = safeEqual(gotUser, u)
    const passOk = await bcryptVerify(gotPasswd, hash)
    return userOk && passOk
  }
}

function argon2Checker (user: string, b64hash: string, b64salt: string, params?: Argon2Params): BasicChecker {
  const u = checkUser(user)
  const secret = decodeArgon2Secret(b64hash, b64salt, params, LABEL)
  return async (gotUser, gotPasswd) => {
    const userOk = safeEqual(gotUser, u)
    const passOk = await argon2Verify(gotPasswd, secret)
    return userOk && passOk
  }
}

function checkUser (user: unknown): string {
  if (typeof user !== 'string' || user === '' || user.includes(':')) throw new OptionsError(`${LABEL}.user`, 'must be a non-empty string without ":"')
  return normalizeCredential(user)
}

function challengeFor (realm: unknown): string {
  if (typeof realm !== 'string' || !REALM.test(realm)) throw new OptionsError(`${LABEL}.realm`, 'must be 1..128 printable characters without quotes or backslashes')
  return `Basic realm="${realm}", charset="UTF-8"`
}

/** Options of `basicAuthPlugin`: exactly one of `checker`, `passwd`, `bcryptHash`, `argon2Hash` + `argon2Salt`. */
export interface BasicAuthOptions {
  /** Consumer checker (`basicAuth`). */
  checker?: BasicChecker | undefined
  /** The one accepted user name (all variants but `checker`). */
  user?: string | undefined
  /** Plain password (`withUserPasswd`). */
  passwd?: string | undefined
  /** bcrypt hash of the password (`withBcryptHash`). */
  bcryptHash?: string | undefined
  /** base64 Argon2id hash of the password (`withArgon2Hash`), with `argon2Salt`. */
  argon2Hash?: string | undefined
  /** base64 salt of `argon2Hash`. */
  argon2Salt?: string | undefined
  /** Argon2id cost when it differs from the defaults (see `Argon2Params`). */
  argon2Params?: Argon2Params | undefined
  /** Adds `WWW-Authenticate: Basic realm="<realm>"` to 401 answers (the `withPrompt` behaviour). */
  realm?: string | undefined
  /** Stage to install at. Default `onRequest` (before the body is read). */
  stage?: 'onRequest' | 'preHandler' | undefined
  /** Opt-in lockout after failed checks (per user name and per address, with backoff; 429 while locked). */
  throttle?: BasicAuthThrottle | undefined
}

/** The hook the options describe; throws an OptionsError unless exactly one variant is given. */
function hookFromOptions (opts: BasicAuthOptions): ToolkitHook {
  if (opts === null || typeof opts !== 'object') throw new OptionsError(LABEL, 'must be an object')
  const given = (['checker', 'passwd', 'bcryptHash', 'argon2Hash'] as const).filter((k) => opts[k] !== undefined)
  if (given.length !== 1) throw new OptionsError(`${LABEL}.checker`, 'exactly one of checker, passwd, bcryptHash, argon2Hash is required')
  if (opts.passwd !== undefined) return fixedHook(opts.user as string, opts.passwd, opts.realm)
  if (opts.checker !== undefined) return basicAuth(opts.checker, opts.realm)
  if (opts.bcryptHash !== undefined) return basicAuth(bcryptChecker(opts.user as string, opts.bcryptHash), opts.realm)
  return basicAuth(argon2Checker(opts.user as string, opts.argon2Hash as string, opts.argon2Salt as string, opts.argon2Params), opts.realm)
}

const basicAuthPluginImpl: FastifyPluginAsync<BasicAuthOptions> = async (fastify, opts) => {
  const hook = withThrottle(hookFromOptions(opts), opts.throttle)
  const stage = opts.stage ?? 'onRequest'
  if (stage !== 'onRequest' && stage !== 'preHandler') throw new OptionsError(`${LABEL}.stage`, 'must be "onRequest" or "preHandler"')
  if (!fastify.hasRequestDecorator('basicAuthorized')) fastify.decorateRequest('basicAuthorized', false)
  fastify.addHook(stage, hook)
}

/** `fastify.register(basicAuthPlugin, { user: 'admin', passwd })`: every route of the context needs it. */
export const basicAuthPlugin = fp(basicAuthPluginImpl, { name: 'gatehouse-basic-auth', fastify: '5.x' })

export { parseBasicCredentials, type BasicCredentials }
