/**
 * The package's one error family. Every error it throws is a `GatehouseError` with a stable `code`; every
 * client-facing failure is an `HttpError` and answers `{ error, details?, code }`. Codes never change
 * meaning; messages may be reworded. Match on `code` (and `option` for configuration errors).
 */
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify'

/** Stable error codes. */
export const ErrorCodes = {
  /** A configuration mistake found at registration (`OptionsError`, which also names the `option`). */
  OPTION: 'GATEHOUSE_OPTION',
  /** 400: malformed or missing input. */
  BAD_REQUEST: 'GATEHOUSE_BAD_REQUEST',
  /** 401: no session, or a bad one. */
  UNAUTHORIZED: 'GATEHOUSE_UNAUTHORIZED',
  /** 401: the token is well formed but expired and may not be refreshed. */
  TOKEN_EXPIRED: 'GATEHOUSE_TOKEN_EXPIRED',
  /** 401: signature, algorithm, purpose, issuer or claims do not verify. */
  TOKEN_INVALID: 'GATEHOUSE_TOKEN_INVALID',
  /** 401: the session ended (absolute lifetime or idle timeout) and may not be refreshed. */
  SESSION_EXPIRED: 'GATEHOUSE_SESSION_EXPIRED',
  /** 401: the session was revoked (logout, revokeSession, revokeUser, key removed). */
  SESSION_REVOKED: 'GATEHOUSE_SESSION_REVOKED',
  /** 401/403: the XSRF header is missing or does not match. */
  XSRF: 'GATEHOUSE_XSRF',
  /** 401/403: the credentials were checked and refused (403 a wrong password, the toolkit's basic auth, another user's passkey; 401 basic auth on the auth hooks, an unknown passkey). */
  CREDENTIALS: 'GATEHOUSE_CREDENTIALS',
  /** 403: authenticated but not allowed (admin, role, audience). */
  FORBIDDEN: 'GATEHOUSE_FORBIDDEN',
  /** 403: a cross-site request to a login, confirm or logout route, or an unsafe one under the toolkit's crossOriginProtection. */
  CROSS_SITE: 'GATEHOUSE_CROSS_SITE',
  /** 400/403: the OAuth2 handshake cookie is missing, expired, forged or of another provider. */
  HANDSHAKE: 'GATEHOUSE_HANDSHAKE',
  /** 403: the callback's `state` does not belong to this browser's login. */
  STATE_MISMATCH: 'GATEHOUSE_STATE_MISMATCH',
  /** 401/403: a one-time value (state, confirmation token, login token) was already used. */
  ALREADY_USED: 'GATEHOUSE_ALREADY_USED',
  /** 401: the password was right; a second factor (a passkey) must confirm the login before a session is issued. */
  SECOND_FACTOR: 'GATEHOUSE_SECOND_FACTOR',
  /** 400/401: a passkey (WebAuthn) response does not verify: origin, RP ID, challenge, signature or counter. */
  PASSKEY: 'GATEHOUSE_PASSKEY',
  /** 400/409: an authenticator-app (TOTP) enrolment cannot go on (none begun, already confirmed, secret unreadable). */
  TOTP: 'GATEHOUSE_TOTP',
  /** 401: the route needs a recently confirmed second factor (`fastify.auth.recent`): confirm one, then retry. */
  STEP_UP: 'GATEHOUSE_STEP_UP',
  /** 401: a change of factors (or other sessions ended) needs a fresh sign-in, or the password in the request. */
  REAUTHENTICATE: 'GATEHOUSE_REAUTHENTICATE',
  /** 404: no such route, provider, avatar or pending login. */
  NOT_FOUND: 'GATEHOUSE_NOT_FOUND',
  /** 409: the request conflicts with work in progress (e.g. the profiler is already profiling). */
  CONFLICT: 'GATEHOUSE_CONFLICT',
  /** 413: the body is larger than allowed. */
  TOO_LARGE: 'GATEHOUSE_TOO_LARGE',
  /** 415: the body's `Content-Encoding` cannot be decoded, so a limit or filter on it cannot be enforced. */
  UNSUPPORTED_ENCODING: 'GATEHOUSE_UNSUPPORTED_ENCODING',
  /** 415: the body's media type is not one the route reads (the auth routes read JSON and forms). */
  UNSUPPORTED_MEDIA_TYPE: 'GATEHOUSE_UNSUPPORTED_MEDIA_TYPE',
  /** 400/403: a login route's captcha (`captcha` option) is missing (400) or was refused by its service: reused, another site's, a bot's score (403). */
  CAPTCHA: 'GATEHOUSE_CAPTCHA',
  /** 403: the password is right but known from data breaches, and the host refuses such sign-ins (`breachedPasswords` of the direct provider). */
  BREACHED_PASSWORD: 'GATEHOUSE_BREACHED_PASSWORD',
  /** 429: too many attempts; see `Retry-After`. */
  RATE_LIMITED: 'GATEHOUSE_RATE_LIMITED',
  /** 500: a failure of the server itself (logged with its cause). */
  INTERNAL: 'GATEHOUSE_INTERNAL',
  /** 502: a peer (OAuth2 provider, mail server, Bot API) answered something unusable. */
  UPSTREAM: 'GATEHOUSE_UPSTREAM',
  /** 503: a peer or store this server needs is unavailable. */
  UNAVAILABLE: 'GATEHOUSE_UNAVAILABLE',
  /** 503: the state store (memory or Redis) could not answer or is full. */
  STATE_STORE: 'GATEHOUSE_STATE_STORE',
  /** 503/504: the toolkit's timeout: the route did not answer before its deadline. */
  TIMEOUT: 'GATEHOUSE_TIMEOUT',
  /** 504: a peer did not answer in time. */
  UPSTREAM_TIMEOUT: 'GATEHOUSE_UPSTREAM_TIMEOUT',
  /** 400/401: the token endpoint refused a grant; `error` is the RFC 6749 §5.2 code (`invalid_grant`, …). */
  OAUTH: 'GATEHOUSE_OAUTH',
  /** 400/401: a DPoP proof (RFC 9449) is missing, invalid, replayed or of another key, or a bound token came without one; `error` is the RFC 9449 code. */
  DPOP: 'GATEHOUSE_DPOP'
} as const

export type ErrorCode = typeof ErrorCodes[keyof typeof ErrorCodes]

/** Base class of every error the package throws. */
export class GatehouseError extends Error {
  readonly code: string
  constructor (message: string, code: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'GatehouseError'
    this.code = code
  }
}

/** A registration-time configuration error naming the option (`code: GATEHOUSE_OPTION`). */
export class OptionsError extends GatehouseError {
  /** The option at fault, e.g. `secret`, `cookies.sameSite` or `avatar.fetch.maxBytes`. */
  readonly option: string
  /** What is wrong with it, without the option's name (`must be a list`): for an error that restates it for another option. */
  readonly reason: string
  constructor (option: string, reason: string, options?: { cause?: unknown }) {
    super(`fastify-gatehouse: option "${option}" ${reason}`, ErrorCodes.OPTION, options)
    this.name = 'OptionsError'
    this.option = option
    this.reason = reason
  }
}

/** The one error body shape of the package. */
export interface ErrorBody { error: string; details?: string | undefined; code: string }

const BY_STATUS: Record<number, ErrorCode> = {
  400: ErrorCodes.BAD_REQUEST,
  401: ErrorCodes.UNAUTHORIZED,
  403: ErrorCodes.FORBIDDEN,
  404: ErrorCodes.NOT_FOUND,
  409: ErrorCodes.CONFLICT,
  413: ErrorCodes.TOO_LARGE,
  429: ErrorCodes.RATE_LIMITED,
  502: ErrorCodes.UPSTREAM,
  503: ErrorCodes.UNAVAILABLE,
  504: ErrorCodes.UPSTREAM_TIMEOUT
}

/** The code a status answers with when no more precise one is given. */
export function codeForStatus (status: number): string {
  return BY_STATUS[status] ?? (status >= 500 ? ErrorCodes.INTERNAL : ErrorCodes.BAD_REQUEST)
}

/**
 * An error that maps to a client-facing status and JSON body. Thrown from hooks, providers and routes; the
 * auth routes' error handler (and `sendError`) turn it into `{error, details?, code}`.
 */
export class HttpError extends GatehouseError {
  readonly statusCode: number
  readonly details: string | undefined
  /**
   * The audit reason of this refusal when its code alone does not say it (a wrong authenticator code answers
   * `GATEHOUSE_CREDENTIALS` with reason `totp`); undefined otherwise.
   */
  readonly reason: string | undefined
  /**
   * Headers the answer carries (`Retry-After` of a RateLimitedError); Fastify's own error handler sets them
   * when an app's handler passes the error on with `reply.send(err)`.
   */
  get headers (): Readonly<Record<string, string>> | undefined { return undefined }

  constructor (statusCode: number, error: string, details?: string, code?: string, options?: { cause?: unknown; reason?: string | undefined }) {
    super(error, code ?? codeForStatus(statusCode), options)
    this.name = 'HttpError'
    this.statusCode = statusCode
    this.details = details
    this.reason = options?.reason
  }

  toJSON (): ErrorBody {
    return errorBody(this.message, this.details, this.code)
  }
}

function errorBody (error: string, details: string | undefined, code: string): ErrorBody {
  return details === undefined ? { error, code } : { error, details, code }
}

/** Sends `{error, details?, code}` with the given status; the code defaults to the status's. */
export function sendError (reply: FastifyReply, statusCode: number, error: string, details?: string, code?: string): FastifyReply {
  return reply.code(statusCode).type('application/json; charset=utf-8').send(errorBody(error, details, code ?? codeForStatus(statusCode)))
}

/**
 * 429 `{error, details, code: GATEHOUSE_RATE_LIMITED}`: too many attempts, or one client holding too much state.
 * `retryAfterSec` is sent as `Retry-After`.
 */
export class RateLimitedError extends HttpError {
  /** Whole seconds until a new attempt may succeed (at least 1). */
  readonly retryAfterSec: number
  constructor (details: string, retryAfterMs: number) {
    super(429, 'too many requests', details, ErrorCodes.RATE_LIMITED)
    this.name = 'RateLimitedError'
    this.retryAfterSec = Math.max(1, Math.ceil(retryAfterMs / 1000))
  }

  override get headers (): Readonly<Record<string, string>> { return { 'retry-after': String(this.retryAfterSec) } }
}

/** Sends an HttpError as its status and body (with `Retry-After` for a RateLimitedError). */
export function sendHttpError (reply: FastifyReply, err: HttpError): FastifyReply {
  if (err.headers !== undefined) reply.headers(err.headers)
  return sendError(reply, err.statusCode, err.message, err.details, err.code)
}

/** An error handler as Fastify keeps one (`instance.errorHandler`). */
export type ErrorHandlerFunction = (error: Error, request: FastifyRequest, reply: FastifyReply) => unknown

let fastifyDefault: unknown

/**
 * Fastify's own default error handler: one function that every instance's `errorHandler` is until the app calls
 * `setErrorHandler`. Read once from a throwaway instance (never started, nothing to close).
 */
function fastifyDefaultErrorHandler (): unknown {
  fastifyDefault ??= Fastify().errorHandler
  return fastifyDefault
}

/** True when `handler` is the app's own (`setErrorHandler`), false for Fastify's default one. */
export function isAppErrorHandler (handler: ErrorHandlerFunction | undefined): handler is ErrorHandlerFunction {
  return typeof handler === 'function' && handler !== fastifyDefaultErrorHandler()
}

/**
 * How a hook refuses a request. Where the app set an error handler for the route's scope, the error is thrown to
 * it (Fastify's error shape: `statusCode`, `code`), so the app sees it first and may reshape the answer; without
 * one, it is answered at once as `{error, details?, code}` (Fastify's default handler would answer another shape).
 * The answer's headers (`Retry-After`) are set on the reply either way.
 */
export function refuse (request: FastifyRequest, reply: FastifyReply, err: HttpError): FastifyReply {
  if (isAppErrorHandler(request.server.errorHandler as ErrorHandlerFunction)) {
    if (err.headers !== undefined) reply.headers(err.headers)
    throw err
  }
  return sendHttpError(reply, err)
}
