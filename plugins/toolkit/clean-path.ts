/**
 * cleanPath and stripSlashes: the request path normalized before Fastify routes it (go-pkgz/rest's `CleanPath`
 * and `StripSlashes`). `cleanPath` decodes percent-encoded unreserved characters (RFC 3986 §2.3 and §6.2.2.2:
 * letters, digits, `-`, `.`, `_`, `~`), as the router decodes them, then collapses repeated slashes and resolves
 * `.` and `..` segments (never above the root): `//api/./v1/../users` is routed as `/api/users`, and `/%61dmin` is
 * `/admin` for every hook after it, so a guard on `request.url` sees the path the router matched. Every other
 * escape is kept as sent (`/a%2Fb` stays one segment). `stripSlashes` drops trailing slashes: `/users/` is routed
 * as `/users` (the root `/` stays). Both leave the query alone.
 *
 * Like `rewrite`, they must act before routing, which happens before any hook: use the functions in Fastify's
 * `rewriteUrl` constructor option (`Fastify({ rewriteUrl: (req) => stripSlashes(cleanPath(req.url ?? '/')) })`,
 * which also covers `inject`), or the plugins, which prepend a listener to the HTTP server's `request` event
 * (server-wide whatever context they are registered in; requests made with `inject` do not pass through it).
 */
import fp from 'fastify-plugin'
import { posix } from 'node:path'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import type { IncomingMessage } from 'node:http'

function split (url: string): [path: string, query: string] {
  const q = url.indexOf('?')
  return q === -1 ? [url, ''] : [url.slice(0, q), url.slice(q)]
}

/** A percent-encoded octet. */
const ESCAPE = /%[0-9A-Fa-f]{2}/g

/** `%XX` of an unreserved character (ALPHA / DIGIT / `-` / `.` / `_` / `~`) decoded; every other escape as sent. */
function decodeUnreserved (escape: string): string {
  const c = parseInt(escape.slice(1), 16)
  const unreserved = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x2d || c === 0x2e || c === 0x5f || c === 0x7e
  return unreserved ? String.fromCharCode(c) : escape
}

/**
 * The request target with its path cleaned: unreserved characters decoded (`/%61dmin` → `/admin`), then `//a/./b/../c`
 * → `/a/c` (a decoded `%2e%2e` is a `..` too); a trailing slash is kept.
 */
export function cleanPath (url: string): string {
  const [sent, query] = split(url)
  if (!sent.startsWith('/')) return url
  // Only an escape, `//`, `/.` and `/..` change a path; the common path costs three searches and no allocation.
  const path = sent.includes('%') ? sent.replace(ESCAPE, decodeUnreserved) : sent
  if (!path.includes('//') && !path.includes('/.')) return path === sent ? url : path + query
  let clean = posix.normalize(path)
  if (clean.length > 1 && clean.endsWith('/') && !path.endsWith('/')) clean = clean.slice(0, -1)
  return clean + query
}

/** The request target without trailing slashes on its path (`/users/` → `/users`; `/` stays). */
export function stripSlashes (url: string): string {
  const [path, query] = split(url)
  if (path.length <= 1 || !path.endsWith('/')) return url
  let end = path.length
  while (end > 1 && path.charCodeAt(end - 1) === 47) end--
  return path.slice(0, end) + query
}

/** Prepends a server `request` listener rewriting `req.url` (see the module comment for why not a hook). */
function beforeRouting (fastify: FastifyInstance, normalize: (url: string) => string): void {
  fastify.server.prependListener('request', (req: IncomingMessage) => {
    if (req.url !== undefined) req.url = normalize(req.url)
  })
}

const cleanPathPluginImpl: FastifyPluginAsync = async (fastify) => { beforeRouting(fastify, cleanPath) }
const stripSlashesPluginImpl: FastifyPluginAsync = async (fastify) => { beforeRouting(fastify, stripSlashes) }

/** `fastify.register(cleanPathPlugin)`: every request's path cleaned before routing (server-wide). */
export const cleanPathPlugin = fp(cleanPathPluginImpl, { name: 'gatehouse-clean-path', fastify: '5.x' })

/** `fastify.register(stripSlashesPlugin)`: trailing slashes dropped before routing (server-wide). */
export const stripSlashesPlugin = fp(stripSlashesPluginImpl, { name: 'gatehouse-strip-slashes', fastify: '5.x' })
