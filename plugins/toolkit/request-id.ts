/**
 * requestId (go-pkgz/rest's `Trace`, `tracePlugin` before: not the auth hook `optionalUser`): every request carries an id. An incoming `X-Request-ID` is kept when it is a sane token, otherwise a
 * random UUID is made; the id is set on the response header and on the request (`requestId(request)`).
 */
import { randomUUID } from 'node:crypto'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { warnDeprecated } from '../../lib/deprecation.js'
import type { ToolkitHook } from './hook.js'

export const REQUEST_ID_HEADER = 'X-Request-ID'
// Fastify keeps header names in lower case: given so, `reply.header` finds nothing to lower-case per request.
const REQUEST_ID_KEY = 'x-request-id'

// A client-supplied id ends up in logs and response headers: only visible ASCII, bounded length.
const SANE_ID = /^[\x21-\x7e]{1,128}$/

/** Assigns the id to the request and the response; returns it. */
export function assignRequestId (request: FastifyRequest, reply: FastifyReply): string {
  const incoming = request.headers[REQUEST_ID_KEY]
  const id = typeof incoming === 'string' && SANE_ID.test(incoming) ? incoming : randomUUID()
  request.requestId = id
  reply.header(REQUEST_ID_KEY, id)
  return id
}

/** The request's id, `''` when neither the plugin nor the hook ran. */
export function requestId (request: FastifyRequest): string {
  return request.requestId ?? ''
}

/** Route-level form: `onRequest: requestIdHook`. */
export const requestIdHook: ToolkitHook = async function requestIdHook (request, reply) {
  assignRequestId(request, reply)
}

/**
 * fastify-plugin, so the hook covers every route of the context it is registered in: ids matter for every
 * request below that point, including 404s.
 */
const requestIdPluginImpl: FastifyPluginAsync = async (fastify, _opts) => {
  if (!fastify.hasRequestDecorator('requestId')) fastify.decorateRequest('requestId', '')
  fastify.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, next: () => void) => {
    assignRequestId(request, reply)
    next()
  })
}

export const requestIdPlugin = fp(requestIdPluginImpl, { name: 'gatehouse-request-id', fastify: '5.x' })

/**
 * The request-id plugin under its first name (the seed's `Trace`), warning once when used.
 * @deprecated Use `requestIdPlugin` (`trace` was also the auth hook now called `optionalUser`); goes in 1.0.
 */
export const tracePlugin = fp(async (fastify: FastifyInstance) => {
  warnDeprecated('tracePlugin')
  await requestIdPluginImpl(fastify, {})
}, { name: 'gatehouse-trace', fastify: '5.x' })

/** @deprecated The hook's first name inside this module; use `requestIdHook`. */
export const traceHook = requestIdHook
