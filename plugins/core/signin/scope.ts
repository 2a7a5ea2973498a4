/**
 * What every auth route shares, whether the core or a provider plugin registers it: answers are `no-store` and
 * never framed (`X-Frame-Options: DENY`, CSP `frame-ancestors 'none'`),
 * errors are `{error, details?, code}`, unknown paths a JSON 404, form bodies and cookies parsed here only (never
 * on the host's routes), and the URL Fastify's request log prints has its secret query values masked.
 */
import { parse as parseQuery } from 'node:querystring'
import type { FastifyError, FastifyInstance, FastifyRequest, FastifySchema } from 'fastify'
import { ErrorCodes, HttpError, isAppErrorHandler, sendHttpError } from '../../../lib/errors.js'
import { describeError, requestLogger, type Logger } from '../../../lib/logging/logger.js'
import type { Audit } from '../../../lib/audit/audit.js'
import { StateStoreError } from '../../../lib/state-store.js'
import { SECRET_KEY_WORDS, sanitizeUrl } from '../../../lib/secret-keys.js'
import { coreOf } from './internals.js'
import { denyFraming } from '../../../lib/html.js'
import { scopeCookies } from '../base/cookie-jar.js'

const FORM = 'application/x-www-form-urlencoded'
const TEXT = 'text/plain'
/** Login forms, Apple's form_post, passkey assertions: small. */
const FORM_BODY_LIMIT = 64 * 1024
/** Query keys whose values an auth URL may carry as secrets: passwords, tokens, OAuth2 `code` and `state`. */
const URL_SECRETS: ReadonlySet<string> = new Set([...SECRET_KEY_WORDS, 'code', 'state'])

/**
 * Applies the auth routes' answer rules to an encapsulated scope; a state store failure is audited (`audit`).
 * Errors become HttpErrors here; the app's error handler (of the scope the auth core was registered in) then sees
 * them first, else they answer as they are.
 */
export function applyAuthScope (scope: FastifyInstance, logger: Logger, audit?: Audit): void {
  const core = coreOf(scope, 'routes')
  // The providers' routes read and set their own cookies (handshakes, ceremonies): @fastify/cookie in this scope only.
  scopeCookies(scope)
  parseForms(scope)
  // Fastify's "incoming request" line prints the URL: a GET login's `passwd=`, a link's `token=` are masked.
  // Every auth route is documented under one tag, for @fastify/swagger (routes give their summary, routeDoc).
  scope.addHook('onRoute', (route) => {
    route.logSerializers = { ...route.logSerializers, req: requestSummary }
    route.schema = { tags: ['auth'], ...route.schema } as FastifySchema
  })
  scope.addHook('onSend', async (_req, reply, payload) => {
    reply.header('cache-control', 'no-store')
    // No answer of an auth route may be framed: its pages (the device page, the confirmations) least of all.
    denyFraming(reply)
    return payload
  })
  // Every 5xx answer is logged here, once, with its cause chain (the logger redacts secrets from it): code that
  // answers 5xx throws an HttpError with `{ cause }` and does not log it itself.
  scope.setErrorHandler((err: FastifyError, request, reply) => {
    const answer = httpErrorOf(err, `${request.method} ${request.routeOptions.url ?? ''}`, requestLogger(logger, request))
    if (answer instanceof StateStoreError) audit?.storeDown(request, answer)
    const app = core.appErrorHandler()
    if (!isAppErrorHandler(app)) return sendHttpError(reply, answer)
    if (answer.headers !== undefined) reply.headers(answer.headers)
    return app(answer, request, reply)
  })
}

/** The HttpError an error of an auth route answers as; 5xx are logged here with their cause. */
function httpErrorOf (err: FastifyError, route: string, logger: Logger): HttpError {
  if (err instanceof HttpError) {
    if (err.statusCode >= 500) logger.logf('[ERROR] %s answered %d %s: %s', route, err.statusCode, err.code, describeAnswer(err))
    return err
  }
  const status = err.statusCode ?? 500
  if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return unsupportedMediaType()
  if (status >= 400 && status < 500) return new HttpError(status, 'bad request', err.message)
  logger.logf('[ERROR] %s failed: %s', route, describeError(err))
  return new HttpError(500, 'internal error')
}

/** The one answer to a body the auth routes do not read (XML, multipart, plain text, …). */
function unsupportedMediaType (): HttpError {
  return new HttpError(415, 'unsupported media type', 'send application/json or application/x-www-form-urlencoded', ErrorCodes.UNSUPPORTED_MEDIA_TYPE)
}

/**
 * Form bodies (`user=&passwd=`, Apple's form_post) are parsed in the auth scopes only: a parser added here is
 * encapsulated, so the host's own routes keep answering 415 to a form unless the host parses forms itself (then
 * its parser, inherited, serves here too). Fastify's plain-text parser is removed here (in this scope only): no
 * auth route reads text, so a text body is refused like any other media type the routes do not read, not
 * parsed into a string that each route would refuse in its own words.
 */
function parseForms (scope: FastifyInstance): void {
  if (scope.hasContentTypeParser(TEXT)) scope.removeContentTypeParser(TEXT)
  if (scope.hasContentTypeParser(FORM)) return
  scope.addContentTypeParser(FORM, { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (_request, body, done) => {
    // node:querystring gives a null-prototype object, repeated keys as arrays (refused by the field readers).
    done(null, parseQuery(body as string))
  })
}

/**
 * A route's schema with its `summary`, for @fastify/swagger (the scope adds `tags: ['auth']`); `parts` are the
 * Fastify schema parts (querystring, params, response) the route validates or serializes.
 */
export function routeDoc (summary: string, parts: Record<string, unknown> = {}): FastifySchema {
  return { summary, ...parts } as FastifySchema
}

/** Fastify's own `req` log fields, with the URL's secret query values masked. */
function requestSummary (request: FastifyRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: sanitizeUrl(request.url, URL_SECRETS),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort
  }
}

/** `error (details): cause: cause…` of a 5xx answer, for the log. */
function describeAnswer (err: HttpError): string {
  const text = err.details === undefined ? err.message : `${err.message} (${err.details})`
  return err.cause === undefined ? text : `${text}: ${describeError(err.cause)}`
}
