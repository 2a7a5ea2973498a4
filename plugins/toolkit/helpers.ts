/**
 * Small helpers of the toolkit, in Fastify terms: `wrap` (hooks around a handler), the JSON renderers,
 * `decodeJSON` / `encodeJSON`, and the error helpers `sendErrorJSON` / `errorLogger`. Every error body is the
 * package's one shape `{error, details?, code}` (lib/errors.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Logger } from '../../lib/logging/logger.js'
import { HttpError, OptionsError, sendError } from '../../lib/errors.js'
import { requireFunction, runHook, type RequestHook } from './hook.js'
import { checkStatus } from './maybe.js'

/** A JSON object (a string-keyed map; named so it does not shadow the global `JSON`). */
export type JSONObject = Record<string, unknown>

/** A route handler as `wrap` takes and returns it. */
export type RouteHandler = (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) => unknown

/**
 * `wrap(handler, a, b)` runs hook `a`, then `b`, then the handler, like nested middleware (the list is
 * folded from the end, so the first hook is the outermost). A hook that answers (e.g. a 401) stops the
 * chain. Hooks may be async or callback-style. A handler or hook that is not a function throws an
 * `OptionsError` naming `wrap.handler` or `wrap.hooks[i]`.
 */
export function wrap (handler: RouteHandler, ...hooks: RequestHook[]): RouteHandler {
  requireFunction('wrap.handler', handler)
  hooks.forEach((h, i) => { requireFunction(`wrap.hooks[${i}]`, h) })
  let inner = handler
  for (let i = hooks.length - 1; i >= 0; i--) {
    const hook = hooks[i]!
    const next = inner
    inner = async function wrapped (request, reply) {
      await runHook(this, hook, request, reply)
      if (reply.sent) return reply
      return next.call(this, request, reply)
    }
  }
  return inner
}

const JSON_UTF8 = 'application/json; charset=utf-8'
// Escaped so the JSON can sit inside an HTML <script> or attribute without closing it (Go's default).
const HTML_UNSAFE = /[<>&\u2028\u2029]/g

function stringify (data: unknown): string {
  // JSON.stringify(undefined) is undefined; a JSON encoder writes `null` for nothing.
  return JSON.stringify(data) ?? 'null'
}

/**
 * Sends `data` as JSON with `<`, `>`, `&`, U+2028 and U+2029 written as `\u` escapes (safe to embed in HTML),
 * `Content-Type: application/json; charset=utf-8`, keeping the status already set (200 by default).
 * Data JSON cannot represent (cycles, BigInt) throws: a programming error, answered 500.
 */
export function renderJSON (reply: FastifyReply, data: unknown): FastifyReply {
  const body = stringify(data).replace(HTML_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
  return reply.type(JSON_UTF8).send(body)
}

/** Like `renderJSON` without HTML escaping: the JSON text goes out as `JSON.stringify` makes it, in UTF-8. */
export function renderJSONWithHTML (reply: FastifyReply, data: unknown): FastifyReply {
  return reply.type(JSON_UTF8).send(stringify(data))
}

/** Sends bytes that already are JSON (from a cache or another service) as they are. */
export function renderJSONFromBytes (reply: FastifyReply, bytes: Uint8Array | string): FastifyReply {
  const body = typeof bytes === 'string' ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  return reply.type(JSON_UTF8).send(body)
}

/** Sets the status and `Content-Type: application/json` and sends `data` as JSON. */
export function encodeJSON (reply: FastifyReply, status: number, data: unknown): FastifyReply {
  checkStatus('encodeJSON.status', status)
  return reply.code(status).type('application/json').send(stringify(data))
}

/**
 * The request's JSON body. Takes what Fastify's JSON parser produced, or parses a string/Buffer body (a text
 * or custom content-type parser). Throws HttpError 400 `invalid JSON` (code `GATEHOUSE_BAD_REQUEST`) for a
 * missing or unparsable body, or when `check` rejects the value; with an error handler that honours
 * `statusCode` (recoverer) that is a 400 `{error, details, code}` answer.
 */
export function decodeJSON<T = unknown> (request: FastifyRequest, check?: (value: unknown) => value is T): T {
  let value: unknown = request.body
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '') ||
    (Buffer.isBuffer(value) && value.length === 0)) {
    throw new HttpError(400, 'invalid JSON', 'the request body is empty')
  }
  if (typeof value === 'string' || Buffer.isBuffer(value)) {
    try {
      value = JSON.parse(value.toString())
    } catch (err) {
      throw new HttpError(400, 'invalid JSON', (err as Error).message)
    }
  }
  if (check !== undefined && !check(value)) throw new HttpError(400, 'invalid JSON', 'the body does not have the expected shape')
  return value as T
}

/** `reply, request, status, err, details?` → sends `{error, details?, code}` and logs one line. */
export type ErrorSender = (reply: FastifyReply, request: FastifyRequest, status: number, err: unknown, details?: string) => FastifyReply

/**
 * Answers `status` with `{error, details?, code}` and logs one warning line through `request.log`: method,
 * path (never the query, where tokens travel), status, client IP, error and details. For 5xx only an
 * HttpError's message reaches the client (other errors may carry internals); the log has the real message.
 * The code is the HttpError's own when `err` is one of the same status, else the status's.
 */
export const sendErrorJSON: ErrorSender = (reply, request, status, err, details) =>
  sendAndLog('sendErrorJSON.status', reply, request, status, err, details, (fields, line) => { request.log.warn(fields, line) })

/** An ErrorSender that logs through the package's Logger (`{ logf }`) instead of `request.log`. */
export function errorLogger (logger: Logger): { log: ErrorSender } {
  if (logger === null || typeof logger !== 'object' || typeof logger.logf !== 'function') {
    throw new OptionsError('errorLogger.logger', 'must be a Logger ({ logf })')
  }
  return {
    log: (reply, request, status, err, details) =>
      sendAndLog('errorLogger.log.status', reply, request, status, err, details, (_fields, line) => { logger.logf('[WARN] %s', line) })
  }
}

interface ErrorFields { status: number; method: string; path: string; ip: string; error: string; details?: string | undefined }

function sendAndLog (statusOption: string, reply: FastifyReply, request: FastifyRequest, status: number, err: unknown,
  details: string | undefined, log: (fields: ErrorFields, line: string) => void): FastifyReply {
  checkStatus(statusOption, status)
  const message = messageOf(err)
  const path = request.url.split('?', 1)[0]!
  const fields: ErrorFields = { status, method: request.method, path, ip: request.ip, error: message }
  if (details !== undefined) fields.details = details
  log(fields, `${details ?? ''} - ${message} - ${status} (${request.ip}) - ${request.method} ${path}`)
  const publicMessage = status < 500 || err instanceof HttpError ? message : 'internal server error'
  // An HttpError of the same status keeps its own (possibly more precise) code.
  const code = err instanceof HttpError && err.statusCode === status ? err.code : undefined
  return sendError(reply, status, publicMessage, details, code)
}

function messageOf (err: unknown): string {
  if (err instanceof Error) return err.message
  if (typeof err === 'string') return err
  return String(err)
}
