import type { FastifyBaseLogger } from 'fastify'

/** The package's logger: one printf-style method, as in the seed. */
export interface Logger { logf(format: string, ...args: unknown[]): void }

/** Prints nothing (the default). */
export const noopLogger: Logger = { logf () {} }

/** `printf`-style formatting over `util.format`, one line to stderr. */
export function stdLogger (stream: NodeJS.WritableStream = process.stderr): Logger {
  return { logf (format, ...args) { stream.write(formatLine(format, args) + '\n') } }
}

/** Adapter for any function receiving the formatted line. */
export function funcLogger (fn: (line: string) => void): Logger {
  return { logf (format, ...args) { fn(formatLine(format, args)) } }
}

/** Adapter over Fastify's pino logger (info level). */
export function pinoLogger (log: FastifyBaseLogger): Logger {
  return { logf (format, ...args) { log.info(formatLine(format, args)) } }
}

// Go-style verbs (%s %d %v) are common in the seed's world; util.format knows %s %d %j %o, so map %v to %s.
function formatLine (format: string, args: unknown[]): string {
  let i = 0
  const line = format.replace(/%[sdvjo%]/g, (verb) => {
    if (verb === '%%') return '%'
    if (i >= args.length) return verb
    const a = args[i++]
    if (verb === '%d') return String(Number(a))
    if (verb === '%j' || verb === '%o') return safeJson(a)
    return typeof a === 'string' ? a : a instanceof Error ? a.message : typeof a === 'object' ? safeJson(a) : String(a)
  })
  const rest = args.slice(i).map((a) => (typeof a === 'string' ? a : safeJson(a)))
  // No caller-controlled line break may forge a second log record.
  return [line, ...rest].join(' ').replace(/[\r\n]+/g, ' ')
}

function safeJson (v: unknown): string {
  try { return JSON.stringify(v) ?? String(v) } catch { return String(v) }
}
