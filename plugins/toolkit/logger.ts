/**
 * logger: one line per request, fields in order: method, URL (query values of secrets masked), client
 * address (maskable), status, response body size, handling time, then when known: user, subject,
 * `X-Request-ID`, request body (opt-in, truncated). Written through the package's `Logger` (`logf`).
 *
 * Safety: values of query parameters with a secret name (`SECRET_KEY_WORDS`, the configured JWT query name and
 * the host's `maskKeys`; see `isSecretKey` for the rule) are replaced by `********`, and the same keys are masked
 * in captured JSON and form bodies.
 * Every control character (CR, LF, …) in any field is escaped, so no request can forge a log line.
 */
import fp from 'fastify-plugin'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { pinoLogger, type Logger } from '../../lib/logging/logger.js'
import { OptionsError } from '../../lib/errors.js'
import { MASK, SECRET_KEY_WORDS, isSecretKey, ruleOf, sanitizeUrl } from '../../lib/secret-keys.js'

export { SECRET_KEY_WORDS, sanitizeUrl }

export interface RequestLoggerOptions {
  /** Where lines go: a `Logger` (`{ logf }`) or a function receiving each line. Default: Fastify's logger. */
  logger?: Logger | ((line: string) => void) | undefined
  /** Maps the client address before logging (e.g. drop the last octet, or hash it). */
  maskIp?: ((ip: string) => string) | undefined
  /** User shown in the line; default `name/id` of `request.user` when present. */
  userInfo?: ((request: FastifyRequest) => string | undefined) | undefined
  /** A free-form subject for the line (e.g. the tenant). */
  subject?: ((request: FastifyRequest) => string | undefined) | undefined
  /** Capture the request body. Default false. */
  withBody?: boolean | undefined
  /** Characters of the body kept when captured. Default 1024. */
  maxBodySize?: number | undefined
  /**
   * Rewrites the captured body before it is logged (go-pkgz/rest's `BodyFn`): mask fields, shorten, summarize. Gets
   * the body as text after key masking, cut to `maxBodySize`, and whether it was cut; what it returns is logged
   * as is (control characters still escaped, so it stays one line). Runs only with `withBody` and a non-empty
   * body. A function that throws logs `[bodyFn failed]` instead of the body.
   */
  bodyFn?: ((body: string, truncated: boolean) => string) | undefined
  /** The JWT query parameter name to mask besides the built-in ones. Default `token`. */
  jwtQueryName?: string | undefined
  /** More words of secret query/body keys, added to `SECRET_KEY_WORDS` (case-insensitive, same rule). */
  maskKeys?: string[] | undefined
}

/** Escapes control characters so that a field can never start a new line or move the cursor. */
export function escapeControl (s: string): string {
  // C0 controls, DEL, and the line breaks some log viewers honour beyond CR/LF: NEL, LINE and PARAGRAPH SEPARATOR.
  // eslint-disable-next-line no-control-regex
  return /[\x00-\x1f\x7f\x85\u2028\u2029]/.test(s)
    // eslint-disable-next-line no-control-regex
    ? s.replace(/[\x00-\x1f\x7f\x85\u2028\u2029]/g, (c) => { const n = c.charCodeAt(0); return n > 0xff ? `\\u${n.toString(16)}` : `\\x${n.toString(16).padStart(2, '0')}` })
    : s
}

function defaultUserInfo (request: FastifyRequest): string | undefined {
  const user = (request as { user?: { name?: unknown; id?: unknown } | null | undefined }).user
  if (user === null || user === undefined || typeof user !== 'object') return undefined
  return `${String(user.name ?? '')}/${String(user.id ?? '')}`
}

function bodyText (body: unknown, secretKeys: ReadonlySet<string>): string | undefined {
  if (body === undefined || body === null) return undefined
  if (typeof body === 'string') return body.includes('=') ? sanitizeUrl(`?${body}`, secretKeys).slice(1) : body
  if (Buffer.isBuffer(body)) return body.toString('utf8')
  const rule = ruleOf(secretKeys)
  try {
    return JSON.stringify(body, (k, v: unknown) => (k !== '' && isSecretKey(k, rule) ? MASK : v))
  } catch { return '[unserializable body]' }
}

interface Compiled {
  write: (line: string) => void
  maskIp: (ip: string) => string
  userInfo: (request: FastifyRequest) => string | undefined
  subject: ((request: FastifyRequest) => string | undefined) | undefined
  withBody: boolean
  maxBody: number
  bodyFn: ((body: string, truncated: boolean) => string) | undefined
  secretKeys: ReadonlySet<string>
}

function compile (opts: RequestLoggerOptions, fallback: Logger): Compiled {
  if (opts === null || typeof opts !== 'object') throw new OptionsError('requestLogger', 'must be an object')
  const fnOpt = (name: string, v: unknown): void => {
    if (v !== undefined && typeof v !== 'function') throw new OptionsError(name, 'must be a function')
  }
  fnOpt('requestLogger.maskIp', opts.maskIp)
  fnOpt('requestLogger.userInfo', opts.userInfo)
  fnOpt('requestLogger.subject', opts.subject)
  fnOpt('requestLogger.bodyFn', opts.bodyFn)
  if (opts.withBody !== undefined && typeof opts.withBody !== 'boolean') throw new OptionsError('requestLogger.withBody', 'must be a boolean')
  const maxBody = opts.maxBodySize ?? 1024
  if (!Number.isInteger(maxBody) || maxBody < 1) throw new OptionsError('requestLogger.maxBodySize', 'must be a positive integer')
  const jwtName = opts.jwtQueryName ?? 'token'
  if (typeof jwtName !== 'string' || jwtName === '') throw new OptionsError('requestLogger.jwtQueryName', 'must be a non-empty string')
  const extra = opts.maskKeys ?? []
  if (!Array.isArray(extra) || extra.some((k) => typeof k !== 'string' || k === '')) throw new OptionsError('requestLogger.maskKeys', 'must be an array of non-empty strings')
  const sink = opts.logger ?? fallback
  let write: (line: string) => void
  if (typeof sink === 'function') write = sink
  else if (sink !== null && typeof sink === 'object' && typeof sink.logf === 'function') write = (line) => sink.logf('%s', line)
  else throw new OptionsError('requestLogger.logger', 'must be a Logger ({ logf }) or a function')
  return {
    write,
    maskIp: opts.maskIp ?? ((ip) => ip),
    userInfo: opts.userInfo ?? defaultUserInfo,
    subject: opts.subject,
    withBody: opts.withBody === true,
    maxBody,
    bodyFn: opts.bodyFn,
    secretKeys: new Set([...SECRET_KEY_WORDS, jwtName, ...extra].map((k) => k.toLowerCase()))
  }
}

/** Formats the record of a finished request. */
function formatLine (c: Compiled, request: FastifyRequest, reply: FastifyReply): string {
  const size = reply.getHeader('content-length')
  const ip = request.realIp || request.ip || ''
  let line = `${request.method} - ${escapeControl(sanitizeUrl(request.url, c.secretKeys))} - ${escapeControl(c.maskIp(ip))}` +
    ` - ${reply.statusCode} (${size === undefined ? '-' : String(size)}) - ${formatDuration(reply.elapsedTime)}`
  const user = c.userInfo(request)
  if (user !== undefined && user !== '') line += ` - ${escapeControl(user)}`
  const subject = c.subject?.(request)
  if (subject !== undefined && subject !== '') line += ` - ${escapeControl(subject)}`
  // The id the trace plugin settled on (it may have generated one), else the header as sent.
  const rid = request.requestId || request.headers['x-request-id']
  if (typeof rid === 'string' && rid !== '') line += ` - ${escapeControl(rid.slice(0, 128))}`
  if (c.withBody) {
    const body = bodyText(request.body, c.secretKeys)
    if (body !== undefined && body !== '') line += ` - ${escapeControl(renderBody(c, body))}`
  }
  return line
}

/** The body as logged: cut to `maxBodySize` (marked `...`), or what `bodyFn` makes of the cut body. */
function renderBody (c: Compiled, body: string): string {
  const truncated = body.length > c.maxBody
  const kept = truncated ? body.slice(0, c.maxBody) : body
  if (c.bodyFn === undefined) return truncated ? `${kept}...` : kept
  try {
    const out = c.bodyFn(kept, truncated)
    return typeof out === 'string' ? out : '[bodyFn returned no string]'
  } catch { return '[bodyFn failed]' }
}

function formatDuration (ms: number): string {
  return ms < 1 ? `${Math.round(ms * 1000)}µs` : ms < 1000 ? `${ms.toFixed(2)}ms` : `${(ms / 1000).toFixed(2)}s`
}

/**
 * fastify-plugin: requests of every route of the context it is registered in are logged (404s included
 * when registered at the root). One `onResponse` hook; the time is Fastify's `reply.elapsedTime`.
 */
const requestLoggerPluginImpl: FastifyPluginAsync<RequestLoggerOptions> = async (fastify, opts) => {
  const c = compile(opts, pinoLogger(fastify.log))
  fastify.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, next: () => void) => {
    try { c.write(formatLine(c, request, reply)) } catch (err) { request.log.error({ err }, 'request logger failed') }
    next()
  })
}

export const requestLoggerPlugin = fp(requestLoggerPluginImpl, { name: 'gatehouse-request-logger', fastify: '5.x' })
