/**
 * realIp: the client's address as a reverse proxy reports it. Priority: `X-Real-IP`, `CF-Connecting-IP`, the
 * leftmost public address of `X-Forwarded-For`, then the socket's peer. Header values that are not public
 * addresses (private, loopback, link-local, garbage) are skipped, so a client cannot pose as an internal host.
 *
 * The headers are only as honest as the proxy that sets them. Pass `trustedProxies` to honour them only when
 * the TCP peer is one of those addresses; without it they are always read.
 */
import fp from 'fastify-plugin'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { compileIpMatcher, formatIp, isPublicIp, parseIp, type ParsedIp } from '../../lib/ip.js'
import { OptionsError } from '../../lib/errors.js'
import type { ToolkitHook } from './hook.js'

export interface RealIpOptions {
  /**
   * Peers (addresses, prefixes, CIDRs) whose forwarding headers are believed. Default: every peer; set it
   * whenever the service can be reached without going through the proxy.
   */
  trustedProxies?: string[] | undefined
}

type IpResolver = (request: FastifyRequest) => string

/** Builds the resolver once, so the per-request work is header look-ups and one parse per candidate. */
export function realIpResolver (opts: RealIpOptions = {}): IpResolver {
  const trusted = opts.trustedProxies === undefined ? null : compileTrusted(opts.trustedProxies)
  return (request) => {
    const peer = socketIp(request)
    if (trusted !== null && !trusted(peer)) return peer
    const h = request.headers
    return publicHeaderIp(h['x-real-ip']) ?? publicHeaderIp(h['cf-connecting-ip']) ??
      leftmostPublic(h['x-forwarded-for']) ?? peer
  }
}

const defaultResolver = realIpResolver()

/**
 * The client address of a request ("realip get"): the value the realIp plugin stored, or, when the plugin is
 * not registered on this route, the same rules applied now (headers always believed).
 */
export function realIp (request: FastifyRequest): string {
  return request.realIp || defaultResolver(request)
}

/** The peer address of the socket, IPv4-mapped IPv6 shown as IPv4. */
export function socketIp (request: FastifyRequest): string {
  const remote = request.raw.socket?.remoteAddress ?? ''
  return remote.startsWith('::ffff:') && remote.includes('.') ? remote.slice(7) : remote
}

/** Route-level form: `onRequest: realIpHook()` stores the address for `realIp(request)`. */
export function realIpHook (opts: RealIpOptions = {}): ToolkitHook {
  const resolve = realIpResolver(opts)
  return async function realIpHook (request: FastifyRequest): Promise<void> { request.realIp = resolve(request) }
}

/**
 * Registered with fastify-plugin, so the hook covers every route of the context it is registered in (and
 * its children): the address is a property of the request, wanted everywhere below that point.
 */
const realIpPluginImpl: FastifyPluginAsync<RealIpOptions> = async (fastify, opts) => {
  const resolve = realIpResolver(opts)
  if (!fastify.hasRequestDecorator('realIp')) fastify.decorateRequest('realIp', '')
  // Callback form: no promise per request on the hot path.
  fastify.addHook('onRequest', (request: FastifyRequest, _reply: FastifyReply, next: () => void) => {
    request.realIp = resolve(request)
    next()
  })
}

export const realIpPlugin = fp(realIpPluginImpl, { name: 'gatehouse-real-ip', fastify: '5.x' })

function compileTrusted (entries: unknown): (ip: string) => boolean {
  if (!Array.isArray(entries) || entries.some((e) => typeof e !== 'string')) {
    throw new OptionsError('realIp.trustedProxies', 'must be an array of addresses, prefixes or CIDRs')
  }
  return compileIpMatcher(entries as string[], 'realIp.trustedProxies')
}

// Header value → cleaned public address or null. Bounded (cleared when full): clients repeat themselves,
// and a flood of distinct values cannot grow memory.
const cleaned = new Map<string, string | null>()

function publicHeaderIp (value: string | string[] | undefined): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined
  let found = cleaned.get(value)
  if (found === undefined) {
    found = isPublicIp(value) ? clean(value) : null
    if (value.length <= 64) {
      if (cleaned.size >= 4096) cleaned.clear()
      cleaned.set(value, found)
    }
  }
  return found ?? undefined
}

function leftmostPublic (value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined
  if (typeof value === 'string' && !value.includes(',')) return publicHeaderIp(value)
  // Repeated headers arrive joined by Node as one comma list; an array only for unusual raw parsers.
  const list = Array.isArray(value) ? value.join(',') : value
  for (const part of list.split(',')) {
    const found = publicHeaderIp(part)
    if (found !== undefined) return found
  }
  return undefined
}

// A header value like `[2001:db8::1]:443`, `1.2.3.4:80` or `::ffff:1.2.3.4` comes back as a plain address.
function clean (value: string): string {
  const trimmed = value.trim()
  const parsed = parseIp(trimmed) as ParsedIp
  if (parsed.family === 6 && /^[0-9a-fA-F:]+$/.test(trimmed)) return trimmed
  return formatIp(parsed)
}
