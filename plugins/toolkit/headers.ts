/**
 * headers: fixed response headers given as `key:value` strings (split at the first `:`, so values may hold
 * more colons, e.g. URLs). Set in `onRequest`, so a handler can still override one for its own answer, and
 * Fastify keeps them on error answers too.
 */
import fp from 'fastify-plugin'
import type { FastifyPluginAsync } from 'fastify'
import { OptionsError } from '../../lib/errors.js'
import type { ToolkitHook } from './hook.js'

export interface HeadersOptions {
  /** Entries `Name:value`; the name must be a valid header token, the value may not contain line breaks. */
  headers: readonly string[]
}

// RFC 9110 token characters; anything else cannot be a field name.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
// Field values may hold visible characters, spaces and tabs, never CR, LF or NUL.
const BAD_VALUE = /[\r\n\0]/

/** Parses and validates `key:value` entries; throws an OptionsError naming the bad entry (`headers.headers[2]`). */
export function parseHeaderPairs (pairs: readonly string[], option = 'headers.headers'): Record<string, string> {
  if (!Array.isArray(pairs)) throw new OptionsError(option, 'must be an array of "key:value" strings')
  const out: Record<string, string> = {}
  pairs.forEach((entry: unknown, i) => {
    const name = `${option}[${i}]`
    if (typeof entry !== 'string') throw new OptionsError(name, 'must be a "key:value" string')
    const colon = entry.indexOf(':')
    if (colon === -1) throw new OptionsError(name, `"${entry}" has no ":" between key and value`)
    const key = entry.slice(0, colon).trim()
    const value = entry.slice(colon + 1).trim()
    if (!TOKEN.test(key)) throw new OptionsError(name, `"${key}" is not a valid header name`)
    if (BAD_VALUE.test(value)) throw new OptionsError(name, 'value must not contain CR, LF or NUL')
    out[key.toLowerCase()] = value
  })
  return out
}

/** Hook form: sets the given headers on the reply. */
export function headersHook (pairs: readonly string[]): ToolkitHook {
  const parsed = parseHeaderPairs(pairs)
  return async function setHeaders (_request, reply) { reply.headers(parsed) }
}

const headersPluginImpl: FastifyPluginAsync<HeadersOptions> = async (fastify, opts) => {
  const parsed = parseHeaderPairs(opts?.headers)
  // Callback style: no promise per request for a hook that only sets headers.
  fastify.addHook('onRequest', (_request, reply, done) => { reply.headers(parsed); done() })
}

/** `fastify.register(headersPlugin, { headers: ['X-Frame-Options:DENY'] })`. */
export const headersPlugin = fp(headersPluginImpl, { name: 'gatehouse-headers', fastify: '5.x' })
