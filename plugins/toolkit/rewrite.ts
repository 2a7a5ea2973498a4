/**
 * URL rewrite: the first rule whose regular expression matches the request path replaces the path by its
 * template, once per request, and Fastify then routes the rewritten URL.
 *
 * Why not an `onRequest` hook: Fastify matches the route before any hook runs, so changing the URL in a hook
 * changes nothing about which handler answers. Re-dispatching from a hook (`fastify.routing` or
 * `fastify.inject`) serves the right route but runs the first route's `onResponse` hooks and logging a
 * second time (Fastify wires them to the response before `onRequest`), and `inject` also buffers the answer
 * and loses the client socket. So the rewrite happens before routing, in one of two ways:
 *
 * - `rewriteUrl(rules)`: a function for Fastify's `rewriteUrl` constructor option, the documented hook
 *   point (`Fastify({ rewriteUrl: rewriteUrl(rules) })`). Covers `fastify.inject` as well.
 * - the `rewrite` plugin: for code that cannot reach the constructor, it prepends a listener to the HTTP
 *   server's `request` event, which Node calls synchronously before Fastify's own listener. Requests made
 *   with `fastify.inject` do not pass through the server and are not rewritten.
 *
 * Both are global: a rewrite decides routing, which happens before any encapsulation context is known.
 * Both keep the original URL in `request.originalUrl`, and a request is rewritten at most once even when
 * both are installed.
 */
import fp from 'fastify-plugin'
import { posix } from 'node:path'
import type { FastifyPluginAsync } from 'fastify'
import type { IncomingMessage } from 'node:http'
import { OptionsError } from '../../lib/errors.js'

/**
 * One rule. `from` is matched against the URL path (without the query). `to` is the new path and may carry
 * a query, which goes before the original query (as in nginx). References in `to`: `$1`, `${1}`, `$0`
 * (whole match), `$<name>` or `${name}` for named groups, `$$` for a literal `$`.
 */
export interface RewriteRule { from: string | RegExp; to: string }

/** Rules in order, or an object mapping `from` to `to` (its key order is the rule order). */
export type RewriteRules = readonly RewriteRule[] | Readonly<Record<string, string>>

export interface RewriteOptions {
  /** The rules; the first match wins. */
  rules: RewriteRules
}

/** Rewrites a request target (`/path?query`); undefined when no rule matches. */
export type UrlRewriter = (url: string) => string | undefined

type Part = string | number | { name: string }
interface CompiledRule { re: RegExp; parts: Part[]; groups: number }

const REWRITTEN = Symbol('gatehouse.rewritten')
type MarkedRequest = IncomingMessage & { [REWRITTEN]?: true | undefined; originalUrl?: string | undefined }

/**
 * Validates and compiles the rules; throws an OptionsError naming `rewrite.rules`, or the bad rule as
 * `rewrite.rules[i]` (for an object, `i` counts its keys in order).
 */
export function compileRewrite (rules: RewriteRules): UrlRewriter {
  const list = normalizeRules(rules)
  const compiled = list.map((rule, i) => compileRule(rule, `rewrite.rules[${i}]`))
  return (url) => {
    const q = url.indexOf('?')
    const sent = q === -1 ? url : url.slice(0, q)
    // The client's dot segments are resolved before matching, so `/api/../admin` is matched as the `/admin`
    // it means and cannot slip past a rule for `/admin` into another rule's target.
    const path = sent.startsWith('/') ? normalizePath(sent) : sent
    for (const rule of compiled) {
      const target = applyRule(rule, path)
      if (target === undefined) continue
      const joined = joinTarget(target, q === -1 ? '' : url.slice(q + 1))
      return joined.includes(CAPTURED_DOT) ? joined.replaceAll(CAPTURED_DOT, '.') : joined
    }
    return undefined
  }
}

/**
 * `posix.normalize` for a path starting with `/`, skipped when it would change nothing: only a `.` segment, a
 * `..` segment or an empty one (`//`) changes such a path, and each of them needs `/.` or `//` in it.
 */
function normalizePath (path: string): string {
  return path.includes('/.') || path.includes('//') ? posix.normalize(path) : path
}

/**
 * For Fastify's `rewriteUrl` constructor option: `Fastify({ rewriteUrl: rewriteUrl(rules) })`.
 * Returns the URL unchanged when no rule matches or the request was already rewritten.
 */
export function rewriteUrl (rules: RewriteRules): (req: IncomingMessage) => string {
  const rewriteTarget = compileRewrite(rules)
  return (req) => applyOnce(req as MarkedRequest, rewriteTarget) ?? req.url ?? '/'
}

const rewritePluginImpl: FastifyPluginAsync<RewriteOptions> = async (fastify, opts) => {
  if (opts === null || typeof opts !== 'object' || opts.rules === undefined) throw new OptionsError('rewrite.rules', 'is required')
  const rewriteTarget = compileRewrite(opts.rules)
  // One listener per server: rules of later registrations are tried after earlier ones, never twice.
  const existing = serverRewriters.get(fastify.server)
  if (existing !== undefined) { existing.push(rewriteTarget); return }
  const rewriters = [rewriteTarget]
  serverRewriters.set(fastify.server, rewriters)
  fastify.server.prependListener('request', (req: IncomingMessage) => {
    for (const r of rewriters) {
      const url = applyOnce(req as MarkedRequest, r)
      if (url !== undefined) { req.url = url; return }
    }
  })
}

const serverRewriters = new WeakMap<object, UrlRewriter[]>()

/** Plugin form (server-level; see the module comment): `fastify.register(rewritePlugin, { rules })`. */
export const rewritePlugin = fp(rewritePluginImpl, { name: 'gatehouse-rewrite', fastify: '5.x' })

function applyOnce (req: MarkedRequest, rewriteTarget: UrlRewriter): string | undefined {
  if (req[REWRITTEN] === true || req.url === undefined) return undefined
  const url = rewriteTarget(req.url)
  if (url === undefined) return undefined
  req[REWRITTEN] = true
  req.originalUrl = req.url
  return url
}

function normalizeRules (rules: RewriteRules): RewriteRule[] {
  if (rules === null || typeof rules !== 'object') throw new OptionsError('rewrite.rules', 'must be an array of {from, to} or an object')
  const list: RewriteRule[] = Array.isArray(rules)
    ? [...(rules as readonly RewriteRule[])]
    : Object.entries(rules).map(([from, to]) => ({ from, to }))
  if (list.length === 0) throw new OptionsError('rewrite.rules', 'must hold at least one rule')
  return list
}

function compileRule (rule: RewriteRule, name: string): CompiledRule {
  if (rule === null || typeof rule !== 'object') throw new OptionsError(name, 'must be {from, to}')
  const re = toRegExp(rule.from, name)
  if (typeof rule.to !== 'string' || rule.to === '') throw new OptionsError(name, '"to" must be a non-empty string')
  // Matching the empty string against `source|` reveals how many groups there are and their names.
  const probe = new RegExp(`${re.source}|`, re.flags.replace(/[gy]/g, '')).exec('')
  const groups = probe === null ? 0 : probe.length - 1
  const names = new Set(Object.keys(probe?.groups ?? {}))
  return { re, parts: parseTemplate(rule.to, groups, names, name), groups }
}

function toRegExp (from: string | RegExp, name: string): RegExp {
  // A sticky flag would tie matching to lastIndex, which is shared state between requests.
  if (from instanceof RegExp) return new RegExp(from.source, from.flags.replace('y', ''))
  if (typeof from !== 'string' || from === '') throw new OptionsError(name, '"from" must be a non-empty string or RegExp')
  try {
    return new RegExp(from)
  } catch (err) {
    throw new OptionsError(name, `"from" ${JSON.stringify(from)} is not a valid regular expression: ${(err as Error).message}`)
  }
}

const REFERENCE = /\$(?:(\$)|(\d+)|\{(\d+)\}|\{([A-Za-z_$][\w$]*)\}|<([A-Za-z_$][\w$]*)>)/y

/** Splits the template into literals and group references, rejecting any reference the rule lacks. */
function parseTemplate (to: string, groups: number, names: Set<string>, name: string): Part[] {
  const parts: Part[] = []
  let literal = ''
  for (let i = 0; i < to.length;) {
    if (to[i] !== '$') { literal += to[i++]; continue }
    REFERENCE.lastIndex = i
    const m = REFERENCE.exec(to)
    if (m === null) throw new OptionsError(name, `"to" has a bad reference at offset ${i} (write $$ for a literal $)`)
    i = REFERENCE.lastIndex
    if (m[1] !== undefined) { literal += '$'; continue }
    if (literal !== '') { parts.push(literal); literal = '' }
    const num = m[2] ?? m[3]
    if (num !== undefined) {
      const n = Number(num)
      if (n > groups) throw new OptionsError(name, `"to" refers to group ${n}, but the pattern has ${groups}`)
      parts.push(n)
    } else {
      const group = (m[4] ?? m[5]) as string
      if (!names.has(group)) throw new OptionsError(name, `"to" refers to the unknown named group "${group}"`)
      parts.push({ name: group })
    }
  }
  if (literal !== '') parts.push(literal)
  return parts
}

/**
 * The path with the rule's first match replaced by its template, or undefined when the rule does not match. One
 * `exec` (a `replace` with a callback costs several times more); a global pattern replaces every match, as
 * String#replace does with it.
 */
function applyRule (rule: CompiledRule, path: string): string | undefined {
  if (rule.re.global) {
    let matched = false
    const target = path.replace(rule.re, (...args: unknown[]) => {
      matched = true
      return expand(rule, args as Array<string | undefined>, args[rule.groups + 3] as Named)
    })
    return matched ? target : undefined
  }
  const m = rule.re.exec(path)
  if (m === null) return undefined
  return path.slice(0, m.index) + expand(rule, m, m.groups) + path.slice(m.index + m[0].length)
}

type Named = Record<string, string | undefined> | undefined

/** Builds the replacement from the match: the whole match and groups by number (`captures`), named groups. */
function expand (rule: CompiledRule, captures: ArrayLike<string | undefined>, named: Named): string {
  let out = ''
  for (const part of rule.parts) {
    if (typeof part === 'string') out += part
    else if (typeof part === 'number') out += shieldDots(captures[part] ?? '')
    else out += shieldDots(named?.[part.name] ?? '')
  }
  return out
}

// Dots of captured text are hidden from the normalization of the target: only the template's own `..`
// moves up, a captured `..` (`^/f-(.*)$` on `/f-../admin`) stays a literal segment under the template's path.
// U+E000 cannot occur in a request target (Node reads those as latin1), so the swap back is exact.
const CAPTURED_DOT = '\uE000'

function shieldDots (captured: string): string {
  return captured.includes('.') ? captured.replaceAll('.', CAPTURED_DOT) : captured
}

/** Normalizes the new path (no `..` escapes, one leading slash, trailing slash kept) and merges queries. */
function joinTarget (target: string, originalQuery: string): string {
  const q = target.indexOf('?')
  const rawPath = q === -1 ? target : target.slice(0, q)
  const targetQuery = q === -1 ? '' : target.slice(q + 1)
  let path = normalizePath(rawPath.startsWith('/') ? rawPath : '/' + rawPath)
  if (rawPath.endsWith('/') && !path.endsWith('/')) path += '/'
  const query = targetQuery === '' ? originalQuery : originalQuery === '' ? targetQuery : `${targetQuery}&${originalQuery}`
  return query === '' ? path : `${path}?${query}`
}
