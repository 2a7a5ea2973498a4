/**
 * The package's logger. Every line is written with one printf-style call, `logf(format, ...args)`, whose
 * format starts with a level prefix — `[DEBUG]`, `[INFO]`, `[WARN]` or `[ERROR]` (go-pkgz/lgr's convention;
 * a line without one is info). The adapters here format the line, keep it on one line, redact secrets from it
 * (credentials in URLs, secret query values, bearer tokens, JWTs) and hand it on: `stdLogger` and
 * `funcLogger` keep the prefix, `pinoLogger` turns it into the pino level and drops it.
 */
import type { FastifyBaseLogger } from 'fastify'

/** The package's logger: one printf-style method (`%s %d %v %j %o`; a `[LEVEL]` prefix sets the level). */
export interface Logger { logf(format: string, ...args: unknown[]): void }

/** Levels a line can carry, lowest first. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error'

// Adapters made here already format and redact; any other Logger is wrapped by `packageLogger`.
const ownLoggers = new WeakSet<Logger>()
function own (logger: Logger): Logger {
  ownLoggers.add(logger)
  return logger
}

/** Prints nothing. */
export const noopLogger: Logger = own({ logf () {} })

/** One line per call to `stream` (default stderr), level prefix kept. */
export function stdLogger (stream: NodeJS.WritableStream = process.stderr): Logger {
  return own({ logf (format, ...args) { stream.write(formatLogLine(format, args) + '\n') } })
}

/** Hands each formatted line (level prefix kept) and its level to `fn`. */
export function funcLogger (fn: (line: string, level: LogLevel) => void): Logger {
  return own({
    logf (format, ...args) {
      const line = formatLogLine(format, args)
      fn(line, splitLevel(line).level)
    }
  })
}

/** Writes through Fastify's pino logger at the line's level (`[WARN] x` → `log.warn('x')`). */
export function pinoLogger (log: FastifyBaseLogger): Logger {
  return own({
    logf (format, ...args) {
      const { level, text } = splitLevel(formatLogLine(format, args))
      log[level](text)
    }
  })
}

/**
 * The logger the package writes through: the host's `logger` option when given (adapters of this module as
 * they are, any other `{ logf }` wrapped so it receives formatted, redacted lines), else Fastify's own log.
 * Values that are not loggers pass through unchanged, for the option check to report.
 */
export function packageLogger (option: unknown, fastifyLog: FastifyBaseLogger): unknown {
  if (option === undefined) {
    const logger = pinoLogger(fastifyLog)
    fastifyLogs.add(logger)
    return logger
  }
  if (option === null || typeof option !== 'object' || typeof (option as Logger).logf !== 'function') return option
  const logger = option as Logger
  if (ownLoggers.has(logger)) return logger
  return own({ logf (format, ...args) { logger.logf('%s', formatLogLine(format, args)) } })
}

// The package loggers that write through Fastify's own log (no `logger` option): their per-request lines can go
// through `request.log` instead, which carries the request's `reqId`.
const fastifyLogs = new WeakSet<Logger>()

/**
 * The logger for a line about one request: `request.log` (with its `reqId`) when the package writes through
 * Fastify's log, else the host's `logger` option as it is (a `{ logf }` has no request binding to carry).
 */
export function requestLogger (logger: Logger, request: { log: FastifyBaseLogger }): Logger {
  return fastifyLogs.has(logger) ? pinoLogger(request.log) : logger
}

const LEVEL_PREFIX = /^\[(DEBUG|INFO|WARN|ERROR)\]\s*/

/** The level of a formatted line and its text without the prefix. */
export function splitLevel (line: string): { level: LogLevel; text: string } {
  const m = LEVEL_PREFIX.exec(line)
  if (m === null) return { level: 'info', text: line }
  return { level: m[1]!.toLowerCase() as LogLevel, text: line.slice(m[0].length) }
}

/** Formats a printf-style call into one redacted line. */
export function formatLogLine (format: string, args: unknown[]): string {
  let i = 0
  const line = format.replace(/%[sdvjo%]/g, (verb) => {
    if (verb === '%%') return '%'
    if (i >= args.length) return verb
    const a = args[i++]
    if (verb === '%d') return String(Number(a))
    if (verb === '%j' || verb === '%o') return safeJson(a)
    return typeof a === 'string' ? a : a instanceof Error ? describeError(a) : typeof a === 'object' ? safeJson(a) : String(a)
  })
  const rest = args.slice(i).map((a) => (typeof a === 'string' ? a : a instanceof Error ? describeError(a) : safeJson(a)))
  // No caller-controlled line break may forge a second log record.
  return redactSecrets([line, ...rest].join(' ').replace(/[\r\n]+/g, ' '))
}

/** An error's message followed by its causes' (`a: b: c`), at most four deep. */
export function describeError (err: unknown): string {
  const parts: string[] = []
  let e: unknown = err
  for (let depth = 0; depth < 4 && e !== undefined && e !== null; depth++) {
    const text = e instanceof Error ? e.message : String(e)
    if (text !== '' && !parts.includes(text)) parts.push(text)
    e = e instanceof Error ? e.cause : undefined
  }
  return parts.join(': ')
}

// Names whose values are secrets wherever they appear as `name=value` (queries, connection strings) or
// `"name": "value"` (JSON): the login and OAuth2 parameters, and the usual credential names.
const SECRET_NAMES = String.raw`(?:access_token|refresh_token|id_token|client_secret|api_?key|token|code|state|passwd|password|pwd|secret|jwt|otp|sig)`
const REDACTIONS: Array<[RegExp, string]> = [
  // Credentials in a URL: scheme://user:password@host, scheme://token@host.
  [/\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#@:]*):[^\s/?#@]*@/gi, '$1$2:***@'],
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@:]+@/gi, '$1***@'],
  // Telegram Bot API paths carry the bot token: /bot<id>:<secret>/method.
  [/\/bot\d+:[A-Za-z0-9_-]+/g, '/bot***'],
  [new RegExp(String.raw`(^|[^A-Za-z0-9_])(${SECRET_NAMES})=[^&\s#"',;]+`, 'gi'), '$1$2=***'],
  [new RegExp(String.raw`("${SECRET_NAMES}"\s*:\s*)"(?:[^"\\]|\\.)*"`, 'gi'), '$1"***"'],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g, '$1 ***'],
  // A JWT anywhere (header.payload.signature, base64url).
  [/\beyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, '***']
]

/** Replaces the secrets a log line may carry (see above) with `***`. */
export function redactSecrets (text: string): string {
  let out = text
  for (const [re, to] of REDACTIONS) out = out.replace(re, to)
  return out
}

function safeJson (v: unknown): string {
  try { return JSON.stringify(v) ?? String(v) } catch { return String(v) }
}
