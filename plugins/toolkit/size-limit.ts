/**
 * sizeLimit: 413 `{error, details, code: "GATEHOUSE_TOO_LARGE"}` when a request body is larger than the limit,
 * whatever the client claims: a `Content-Length` above the limit is refused before reading; otherwise the bytes
 * are counted as they arrive (chunked bodies, HTTP/2 bodies without a length), and reading stops at the first
 * byte past the limit. A compressed body is also held to the limit once inflated (the bytes a decompressing
 * hook hands the handler), and a `Content-Encoding` it cannot inflate is refused with 415
 * `GATEHOUSE_UNSUPPORTED_ENCODING`; an undecodable compressed body is 400. Runs in `preParsing`, before any
 * content parser; the body is handed on intact (the reader is body-guard.ts).
 *
 * (Fastify's own `bodyLimit` does the counting too, but answers with its own error shape, and an `onRoute`
 * hook can only change routes registered after it; this plugin covers every route of its context.)
 */
import fp from 'fastify-plugin'
import type { FastifyPluginAsync } from 'fastify'
import { OptionsError } from '../../lib/errors.js'
import { guardBody, guardBodyHook, type PreParsingHook } from './body-guard.js'

export interface SizeLimitOptions {
  /** Largest accepted request body in bytes (a positive integer). */
  limit: number
}

function checkLimit (limit: unknown): number {
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1) throw new OptionsError('sizeLimit.limit', 'must be a positive integer (bytes)')
  return limit
}

/**
 * Route-level form, for the `preParsing` route option (the body is only reachable there):
 * `{ preParsing: sizeLimitHook(1024) }`.
 */
export function sizeLimitHook (limit: number): PreParsingHook {
  return guardBody({ limit: checkLimit(limit) })
}

/** fastify-plugin: the limit applies to every route of the context it is registered in. */
const sizeLimitPluginImpl: FastifyPluginAsync<SizeLimitOptions> = async (fastify, opts) => {
  // The callback form: a body within the limit is handed on without a promise (see body-guard.ts).
  fastify.addHook('preParsing', guardBodyHook({ limit: checkLimit(opts?.limit) }))
}

export const sizeLimitPlugin = fp(sizeLimitPluginImpl, { name: 'gatehouse-size-limit', fastify: '5.x' })
