import type { FastifyRequest } from 'fastify'
import { formatIp, parseIp } from '../ip.js'

/** Tells which client a request comes from, for throttling and for the state store's per-client share. */
export type ClientKey = (request: FastifyRequest) => string

/**
 * The default client of a request: `request.ip` (Fastify's view, which follows its `trustProxy` option), IPv4 as
 * is, IPv6 by its /64 prefix: one host or home usually holds a whole /64, so counting single IPv6 addresses would
 * let one client count as billions.
 */
export function defaultClientKey (request: FastifyRequest): string {
  const ip = typeof request.ip === 'string' ? request.ip : ''
  const parsed = parseIp(ip)
  if (parsed === null) return ip === '' ? 'unknown' : ip.slice(0, 64)
  if (parsed.family === 4) return formatIp(parsed)
  const bytes = parsed.bytes.slice()
  bytes.fill(0, 8)
  return `${formatIp({ family: 6, bytes })}/64`
}
