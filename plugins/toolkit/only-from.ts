/**
 * onlyFrom: only clients whose address is on an allow-list (full addresses, prefixes such as `192.168.`, or
 * CIDRs, IPv4 and IPv6) get through; everybody else gets 403 `{error, details, code: "GATEHOUSE_FORBIDDEN"}`.
 *
 * Which address is the client's: the socket peer, unless the peer is a trusted proxy (default: loopback,
 * i.e. a reverse proxy on the same host). Behind a trusted proxy, `X-Forwarded-For` is read from the right,
 * skipping trusted proxies, so an address a client prepended itself is never the one checked; without
 * `X-Forwarded-For`, `X-Real-IP` is used. An unparsable address where the client should be is refused
 * (it is never trusted, so it is taken as the client, and it matches no entry).
 */
import fp from 'fastify-plugin'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { compileIpMatcher } from '../../lib/ip.js'
import { OptionsError, sendError } from '../../lib/errors.js'
import { socketIp } from './real-ip.js'
import type { ToolkitHook } from './hook.js'

export interface OnlyFromOptions {
  /** Allowed clients: addresses, prefixes (`10.0.`) or CIDRs (`10.0.0.0/8`, `2001:db8::/32`). Required. */
  allow: string[]
  /**
   * Peers whose `X-Forwarded-For` / `X-Real-IP` are believed. Default `['127.0.0.1', '::1']`; `[]` checks
   * the socket peer only.
   */
  trustedProxies?: string[] | undefined
}

/** Returns the text of the client address the allow-list is checked against (may be garbage: never allowed). */
export type ClientAddressFn = (request: FastifyRequest) => string

const DEFAULT_TRUSTED = ['127.0.0.1', '::1']

/**
 * Builds the client-address rule of onlyFrom (shared with the metrics and profiler allow-lists); a bad list
 * throws an OptionsError naming `<label>.trustedProxies`.
 */
export function allowListClientAddress (trustedProxies: unknown = DEFAULT_TRUSTED, label = 'onlyFrom'): ClientAddressFn {
  const trusted = compileList(`${label}.trustedProxies`, trustedProxies, true)
  return (request) => {
    const peer = socketIp(request)
    if (!trusted(peer)) return peer
    const xff = request.headers['x-forwarded-for']
    if (typeof xff === 'string' && xff !== '') {
      // Garbage needs no separate parse: it is never trusted, so it becomes the client, and never allowed.
      if (!xff.includes(',')) return xff.trim()
      const hops = xff.split(',')
      for (let i = hops.length - 1; i >= 0; i--) {
        const hop = (hops[i] as string).trim()
        if (!trusted(hop) || i === 0) return hop
      }
    }
    const xri = request.headers['x-real-ip']
    if (typeof xri === 'string' && xri !== '') return xri.trim()
    return peer
  }
}

/**
 * Compiles the options into a predicate on requests. Bad options throw an OptionsError naming
 * `<label>.allow` or `<label>.trustedProxies` (`onlyFrom.allow` by default).
 */
export function onlyFromCheck (opts: OnlyFromOptions, label = 'onlyFrom'): (request: FastifyRequest) => boolean {
  if (opts === null || typeof opts !== 'object') throw new OptionsError(label, 'must be an object')
  const allowed = compileList(`${label}.allow`, opts.allow, false)
  const client = allowListClientAddress(opts.trustedProxies ?? DEFAULT_TRUSTED, label)
  return (request) => {
    return allowed(client(request))
  }
}

function deny (reply: FastifyReply): FastifyReply {
  return sendError(reply, 403, 'forbidden', 'source address is not allowed')
}

/** Route-level form: `onRequest: onlyFromHook(['10.0.0.0/8'])`. */
export function onlyFromHook (allow: string[], opts: Omit<OnlyFromOptions, 'allow'> = {}): ToolkitHook {
  return onlyFromHookNamed('onlyFrom', { ...opts, allow })
}

/** `onlyFromHook` whose option errors name `<label>.allow` / `<label>.trustedProxies` (metrics, profiler). */
export function onlyFromHookNamed (label: string, opts: OnlyFromOptions): ToolkitHook {
  const check = onlyFromCheck(opts, label)
  return async function onlyFromHook (request, reply) {
    // Waiting for the reply keeps later hooks and the handler from running while async onSend hooks finish.
    if (!check(request)) await deny(reply)
  }
}

/**
 * fastify-plugin: the allow-list guards every route of the context it is registered in (and its
 * children); register it inside a scoped plugin to guard only part of an application.
 */
const onlyFromPluginImpl: FastifyPluginAsync<OnlyFromOptions> = async (fastify, opts) => {
  const check = onlyFromCheck(opts)
  fastify.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, next: () => void) => {
    if (check(request)) next()
    else deny(reply)
  })
}

export const onlyFromPlugin = fp(onlyFromPluginImpl, { name: 'gatehouse-only-from', fastify: '5.x' })

function compileList (name: string, list: unknown, emptyOk: boolean): (ip: string) => boolean {
  if (!Array.isArray(list) || list.some((e) => typeof e !== 'string')) {
    throw new OptionsError(name, 'must be an array of addresses, prefixes or CIDRs')
  }
  if (!emptyOk && list.length === 0) throw new OptionsError(name, 'must list at least one address')
  return compileIpMatcher(list as string[], name)
}
