/**
 * The package's own cookies, without touching the host's Fastify. The session and XSRF cookies are read straight
 * from the Cookie header (`readCookie`: the result the `cookie` parser gives for that one name, first occurrence
 * wins, spaces and tabs around names and values trimmed, quotes kept, `%` sequences URL-decoded when they
 * decode), or from `request.cookies` when the host's @fastify/cookie parsed it already (a hook of the host's may
 * have changed it). They are written as Set-Cookie lines by the `cookie` package's serializer (the one
 * @fastify/cookie uses), beside whatever Set-Cookie lines the reply carries: no `onSend` hook, no decorator. The
 * auth routes, whose providers use `reply.setCookie` and `request.cookies`, get @fastify/cookie in their own
 * encapsulated scopes only (`scopeCookies`), so that the host's routes pay nothing for it.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { stringifySetCookie, type SetCookie } from 'cookie'

/** The value of cookie `name` on the request, as `request.cookies[name]` would give it. */
export function requestCookie (request: FastifyRequest, name: string): string | undefined {
  const jar = request.cookies as Record<string, string | undefined> | null | undefined
  return jar !== null && jar !== undefined ? jar[name] : readCookie(request.headers.cookie, name)
}
/**
 * Where two cookies' values are in a Cookie header: [start, end) in the header's text, start -1 for one absent.
 * Filled by `locateCookies`; the values are not copied out (`cookieValue` makes one a string).
 */
export interface CookieSpans { aStart: number; aEnd: number; bStart: number; bEnd: number }

/** Spans for `readCookie`, which reads one at a time, synchronously. */
const scratch: CookieSpans = { aStart: -1, aEnd: -1, bStart: -1, bEnd: -1 }

/**
 * The value of cookie `name` in a Cookie header, or undefined. Walks the header as `cookie`'s `parseCookie`
 * does, comparing names in place, so that nothing is allocated for the other cookies.
 */
export function readCookie (header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined
  locateCookies(header, name, '', scratch)
  return scratch.aStart < 0 ? undefined : cookieValue(header, scratch.aStart, scratch.aEnd)
}

/**
 * Finds cookies `a` and `b` (`''`: none) of a Cookie header in one walk, as `readCookie` reads each (the first
 * occurrence; names and values trimmed of spaces and tabs), into `at`, without copying either value. The walk
 * stops once both are found.
 */
export function locateCookies (header: string, a: string, b: string, at: CookieSpans): void {
  at.aStart = at.bStart = -1
  if (header.length < 2) return
  const len = header.length
  let index = 0
  while (index < len) {
    const eq = header.indexOf('=', index)
    if (eq === -1) return
    const semi = header.indexOf(';', index)
    const end = semi === -1 ? len : semi
    if (eq > end) {
      // A pair without '=': the next pair starts after the last ';' before this '='.
      index = header.lastIndexOf(';', eq - 1) + 1
      continue
    }
    if (at.aStart < 0 && trimmedIs(header, index, eq, a)) {
      trimSpan(header, eq + 1, end, at, true)
      if (b === '' || at.bStart >= 0) return
    } else if (b !== '' && at.bStart < 0 && trimmedIs(header, index, eq, b)) {
      trimSpan(header, eq + 1, end, at, false)
      if (at.aStart >= 0) return
    }
    index = end + 1
  }
}

/** A located cookie value as the `cookie` parser gives it: `%` sequences URL-decoded when they decode. */
export function cookieValue (header: string, start: number, end: number): string {
  return decode(header.slice(start, end))
}

function isBlank (code: number): boolean {
  return code === 32 || code === 9
}

/** Whether header[start, end), spaces and tabs trimmed, is `name` (compared in place: names are short). */
function trimmedIs (header: string, start: number, end: number, name: string): boolean {
  while (start < end && isBlank(header.charCodeAt(start))) start++
  while (end > start && isBlank(header.charCodeAt(end - 1))) end--
  if (end - start !== name.length) return false
  for (let i = 0; i < name.length; i++) if (header.charCodeAt(start + i) !== name.charCodeAt(i)) return false
  return true
}

/** header[start, end), spaces and tabs trimmed, as the span of cookie a (`first`) or b. */
function trimSpan (header: string, start: number, end: number, at: CookieSpans, first: boolean): void {
  while (start < end && isBlank(header.charCodeAt(start))) start++
  while (end > start && isBlank(header.charCodeAt(end - 1))) end--
  if (first) {
    at.aStart = start
    at.aEnd = end
  } else {
    at.bStart = start
    at.bEnd = end
  }
}

function decode (value: string): string {
  if (!value.includes('%')) return value
  try {
    return decodeURIComponent(value)
  } catch {
    return value
  }
}

/** The attributes of a Set-Cookie line (what `cookie`'s serializer takes besides the name and value). */
export type CookieAttributes = Omit<SetCookie, 'name' | 'value'>

/**
 * Adds the Set-Cookie line of cookie `name` to the reply, replacing a line of the same name set earlier in this
 * reply (a refresh in a hook, then a new session set by the route: the browser keeps the last one anyway).
 */
export function setReplyCookie (reply: FastifyReply, name: string, value: string, attributes: CookieAttributes): void {
  const line = stringifySetCookie({ name, value, ...attributes })
  const present = reply.getHeader('set-cookie')
  if (present === undefined) {
    reply.header('set-cookie', line)
    return
  }
  const lines = (Array.isArray(present) ? present : [String(present)]).filter((l) => !l.startsWith(`${name}=`))
  lines.push(line)
  // Fastify appends to a Set-Cookie header rather than replacing it: removed first, then set whole.
  reply.removeHeader('set-cookie')
  reply.header('set-cookie', lines)
}

/** Clears cookie `name` (empty value, expired), with the attributes it was set with. */
export function clearReplyCookie (reply: FastifyReply, name: string, attributes: CookieAttributes): void {
  setReplyCookie(reply, name, '', { ...attributes, expires: new Date(0), maxAge: 0 })
}

/**
 * @fastify/cookie for one auth scope (an encapsulated context: its parsing hook and its `onSend` run on the
 * scope's routes only), unless the host registered its own where the scope can see it: that one serves as it is.
 * Loaded on first use, so that importing the package stays cheap.
 */
export function scopeCookies (scope: FastifyInstance): void {
  if (scope.hasDecorator('parseCookie')) return
  void scope.register(fp(async (instance) => {
    await instance.register((await import('@fastify/cookie')).default)
  }, { name: 'gatehouse-scope-cookies' }))
}
