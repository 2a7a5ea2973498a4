/**
 * ping: `GET /ping`, and GET on any path ending in `/ping`, answers 200 `text/plain` `pong`, before routing
 * matters: the check runs in an `onRequest` hook, which Fastify also runs for unmatched paths (404s), so no
 * route has to exist for `/any/depth/ping`.
 */
import fp from 'fastify-plugin'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { ToolkitHook } from './hook.js'

/** True for GET/HEAD requests whose path (query excluded) is `/ping` or ends in `/ping`. */
export function isPing (request: FastifyRequest): boolean {
  const method = request.raw.method
  if (method !== 'GET' && method !== 'HEAD') return false
  const url = request.raw.url ?? ''
  const q = url.indexOf('?')
  const path = q < 0 ? url : url.slice(0, q)
  return path.endsWith('/ping')
}

function pong (reply: FastifyReply): FastifyReply {
  return reply.code(200).header('content-type', 'text/plain').send('pong')
}

/** Route-level form (`onRequest: pingHook`): answers pings, lets everything else through. */
export const pingHook: ToolkitHook = async function pingHook (request, reply) {
  if (isPing(request)) await pong(reply)
}

/**
 * fastify-plugin, so the hook sits in the context it is registered in and sees all of its paths, routed or
 * not. Register it at the root for `/ping` anywhere.
 */
const pingPluginImpl: FastifyPluginAsync = async (fastify, _opts) => {
  fastify.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, next: () => void) => {
    // Not calling next() after answering: the request lifecycle ends with the reply.
    if (isPing(request)) pong(reply)
    else next()
  })
}

export const pingPlugin = fp(pingPluginImpl, { name: 'gatehouse-ping', fastify: '5.x' })
