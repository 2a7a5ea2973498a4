/**
 * `parseFromTo(request)`: the `from` and `to` query parameters of a time-range request, in any of the formats
 * clients commonly send. Times without a zone are UTC. Anything else is a 400 `invalid time range` HttpError.
 */
import type { FastifyRequest } from 'fastify'
import { HttpError } from '../../lib/errors.js'

export interface FromTo { from: Date; to: Date }

export interface FromToOptions {
  /** Query parameter names. Default `from` and `to`. */
  fromParam?: string | undefined
  toParam?: string | undefined
}

/** The formats `parseTimestamp` accepts, as the 400 answer lists them. */
export const ACCEPTED_TIME_FORMATS =
  'RFC3339 (2024-05-01T10:20:30Z, 2024-05-01T10:20:30.5+02:00), YYYY-MM-DDTHH:mm[:ss], YYYY-MM-DD, YYYYMMDD, ' +
  'YYYYMMDDHHmm, YYYYMMDDHHmmss, unix seconds, unix milliseconds (13 digits)'

// Date and time with an optional zone; `T`, `t` or one space between them (RFC 3339 §5.6 allows the space).
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|z|[+-]\d{2}:?\d{2})?)?$/
const COMPACT = /^(\d{4})(\d{2})(\d{2})(?:(\d{2})(\d{2})(\d{2})?)?$/
const UNIX = /^\d{1,11}(?:\.\d{1,9})?$/
const UNIX_MS = /^\d{13}$/

/** Parses one timestamp (formats above); null when it is none of them or names an impossible date. */
export function parseTimestamp (s: string): Date | null {
  if (s.length > 40) return null
  let m = DATE_TIME.exec(s)
  if (m !== null) {
    if (m[4] === undefined && m[8] !== undefined) return null
    return build(m[1]!, m[2]!, m[3]!, m[4], m[5], m[6], m[7], m[8])
  }
  // 8, 12 and 14 digits are compact dates; other digit strings are epoch times.
  if (s.length === 8 || s.length === 12 || s.length === 14) {
    m = COMPACT.exec(s)
    if (m !== null) return build(m[1]!, m[2]!, m[3]!, m[4], m[5], m[6], undefined, undefined)
  }
  if (UNIX_MS.test(s)) return new Date(Number(s))
  if (UNIX.test(s)) return new Date(Math.round(Number(s) * 1000))
  return null
}

function build (y: string, mo: string, d: string, h = '0', mi = '0', sec = '0', frac = '', zone = 'Z'): Date | null {
  const [Y, M, D, H, Mi, S] = [y, mo, d, h, mi, sec].map(Number) as [number, number, number, number, number, number]
  if (M < 1 || M > 12 || D < 1 || D > daysIn(Y, M) || H > 23 || Mi > 59 || S > 59) return null
  let offsetMin = 0
  if (zone !== 'Z' && zone !== 'z') {
    const digits = zone.slice(1).replace(':', '')
    const oh = Number(digits.slice(0, 2)); const om = Number(digits.slice(2))
    if (oh > 23 || om > 59) return null
    offsetMin = (zone[0] === '-' ? -1 : 1) * (oh * 60 + om)
  }
  const ms = frac === '' ? 0 : Math.floor(Number(`0.${frac}`) * 1000)
  // setUTCFullYear, unlike Date.UTC, does not map years 0..99 to 1900..1999.
  const date = new Date(0)
  date.setUTCFullYear(Y, M - 1, D)
  date.setUTCHours(H, Mi, S, ms)
  return new Date(date.getTime() - offsetMin * 60_000)
}

function daysIn (year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!
}

/**
 * Reads `from` and `to` from the query string. Both are required, each at most once, and `from` may not be
 * after `to`; otherwise HttpError 400 with details naming the parameter and the accepted formats.
 */
export function parseFromTo (request: FastifyRequest, opts: FromToOptions = {}): FromTo {
  const query = (request.query ?? {}) as Record<string, unknown>
  const from = readTime(query, opts.fromParam ?? 'from')
  const to = readTime(query, opts.toParam ?? 'to')
  if (from.getTime() > to.getTime()) throw new HttpError(400, 'invalid time range', `${opts.fromParam ?? 'from'} is after ${opts.toParam ?? 'to'}`)
  return { from, to }
}

function readTime (query: Record<string, unknown>, name: string): Date {
  const raw = query[name]
  if (raw === undefined || raw === '') throw new HttpError(400, 'invalid time range', `${name} is required`)
  if (typeof raw !== 'string') throw new HttpError(400, 'invalid time range', `${name} must be given once`)
  const date = parseTimestamp(raw.trim())
  if (date === null || Number.isNaN(date.getTime())) {
    throw new HttpError(400, 'invalid time range', `cannot parse ${name} ${JSON.stringify(raw.slice(0, 40))}; accepted: ${ACCEPTED_TIME_FORMATS}`)
  }
  return date
}
