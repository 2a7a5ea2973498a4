/**
 * Reading request cookies without parsing the whole Cookie header on every request. When the host did not
 * register @fastify/cookie itself, the root plugin registers it without its parsing hook and makes
 * `request.cookies` a lazy accessor: the header is parsed (by @fastify/cookie's own parser) the first time
 * anything reads `request.cookies`, and an assignment (as @fastify/cookie's `setCookie` makes) is kept. The
 * session and XSRF cookies are read straight from the header by `requestCookie`, with the same result the
 * parser gives for that one name (first occurrence wins, spaces and tabs around names and values trimmed,
 * quotes kept, `%` sequences URL-decoded when they decode). When the host registered @fastify/cookie itself,
 * its `request.cookies` is read as it is.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'

type Jar = Record<string, string | undefined>
/** The parsed (or assigned) cookies of a request with the lazy accessor; absent until read or assigned. */
const JAR = Symbol('gatehouse.cookieJar')
/** True on requests whose `cookies` is the lazy accessor (a getter on the request prototype). */
const LAZY = Symbol('gatehouse.lazyCookies')

interface JarRequest { [JAR]?: Jar | null | undefined; [LAZY]?: boolean | undefined; raw: FastifyRequest['raw'] }

/** The value of cookie `name` on the request, as `request.cookies[name]` would give it. */
export function requestCookie (request: FastifyRequest, name: string): string | undefined {
  const r = request as unknown as JarRequest
  if (r[LAZY] !== true) return request.cookies?.[name]
  const jar = r[JAR]
  // Once parsed or assigned, the jar is what everyone else sees (a hook may have changed it): read it.
  return jar === undefined || jar === null ? readCookie(r.raw.headers.cookie, name) : jar[name]
}

/**
 * The value of cookie `name` in a Cookie header, or undefined. Walks the header as `cookie`'s `parseCookie`
 * does, comparing names in place, so that nothing is allocated for the other cookies.
 */
export function readCookie (header: string | undefined, name: string): string | undefined {
  if (header === undefined || header.length < 2) return undefined
  const len = header.length
  let index = 0
  while (index < len) {
    const eq = header.indexOf('=', index)
    if (eq === -1) return undefined
    const semi = header.indexOf(';', index)
    const end = semi === -1 ? len : semi
    if (eq > end) {
      // A pair without '=': the next pair starts after the last ';' before this '='.
      index = header.lastIndexOf(';', eq - 1) + 1
      continue
    }
    if (trimmedIs(header, index, eq, name)) return decode(trimmed(header, eq + 1, end))
    index = end + 1
  }
  return undefined
}

function isBlank (code: number): boolean {
  return code === 32 || code === 9
}

/** Whether header[start, end), spaces and tabs trimmed, is `name`. */
function trimmedIs (header: string, start: number, end: number, name: string): boolean {
  while (start < end && isBlank(header.charCodeAt(start))) start++
  while (end > start && isBlank(header.charCodeAt(end - 1))) end--
  return end - start === name.length && header.startsWith(name, start)
}

function trimmed (header: string, start: number, end: number): string {
  while (start < end && isBlank(header.charCodeAt(start))) start++
  while (end > start && isBlank(header.charCodeAt(end - 1))) end--
  return header.slice(start, end)
}

function decode (value: string): string {
  if (!value.includes('%')) return value
  try {
    return decodeURIComponent(value)
  } catch {
    return value
  }
}

/**
 * Registers @fastify/cookie (setCookie, clearCookie, parseCookie, …) with `request.cookies` parsed on first
 * read instead of in an onRequest hook. The lazy accessor is put in place of the plugin's own `cookies`
 * decorator as it registers.
 */
export async function registerLazyCookies (fastify: FastifyInstance): Promise<void> {
  const plugin = (await import('@fastify/cookie')).default
  let parse: ((header: string) => Jar) | undefined
  const accessor = {
    getter (this: JarRequest): Jar {
      let jar = this[JAR]
      if (jar === undefined || jar === null) {
        const header = this.raw.headers.cookie
        jar = this[JAR] = header !== undefined && header !== '' ? parse!(header) : {}
      }
      return jar
    },
    setter (this: JarRequest, value: Jar | null) { this[JAR] = value }
  }
  let swapped = false
  const own = Object.getOwnPropertyDescriptor(fastify, 'decorateRequest')
  const decorateRequest = fastify.decorateRequest as (this: FastifyInstance, name: string | symbol, value: unknown, deps?: string[]) => FastifyInstance
  fastify.decorateRequest = function (this: FastifyInstance, name: string | symbol, value: unknown, deps?: string[]) {
    if (name !== 'cookies') return decorateRequest.call(this, name, value, deps)
    swapped = true
    return decorateRequest.call(this, name, accessor, deps)
  } as FastifyInstance['decorateRequest']
  try {
    await fastify.register(plugin, { hook: false })
  } finally {
    if (own === undefined) delete (fastify as Partial<FastifyInstance>).decorateRequest
    else Object.defineProperty(fastify, 'decorateRequest', own)
  }
  // Should the plugin ever stop declaring `cookies`, the accessor is declared here.
  if (!swapped) fastify.decorateRequest('cookies', accessor as never)
  parse = fastify.parseCookie.bind(fastify)
  fastify.decorateRequest(LAZY, { getter: () => true })
}
