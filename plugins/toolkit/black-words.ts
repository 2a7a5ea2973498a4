/**
 * blackWords: 403 `{error, details, code: "GATEHOUSE_FORBIDDEN"}` when the request body contains one of the
 * listed words, in any letter case (a body over `limit` is 413 `GATEHOUSE_TOO_LARGE`), in one pass whatever the
 * number of words (word-matcher.ts).
 *
 * Two ways, so that the usual body is read once, by Fastify: a JSON, text or form body sent with a
 * `Content-Length` (HTTP/1, no `Transfer-Encoding`, no `Content-Encoding`) is scanned after Fastify parsed it
 * (`preValidation`, before the handler, any `preHandler` and the `preValidation` hooks added after this plugin):
 * the string as it is, an object as its JSON. Reading and replaying such a body in `preParsing` cost a quarter of
 * the request. Every other body (chunked, compressed,
 * another type, one Fastify does not parse) is scanned as it arrives (`preParsing`, body-guard.ts): a word split
 * across chunks (or a multi-byte character split across chunks) is still found, and a compressed body is scanned
 * as the handler will get it, inflated. A stream body is matched as sent (a percent-escape or JSON `\u` escape is
 * not decoded); a parsed one as parsed (`c%61sino` in a form is `casino`).
 */
import fp from 'fastify-plugin'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { OptionsError, sendError } from '../../lib/errors.js'
import { declaredLength, guardBodyHook, type BodyRejection } from './body-guard.js'
import type { ToolkitHook } from './hook.js'
import { WordMatcher } from './word-matcher.js'

export interface BlackWordsOptions {
  /** Words that get a body refused (case-insensitive substrings). Required, non-empty. */
  words: string[]
  /** Largest body scanned, bytes; larger bodies get 413. Default: the route's `bodyLimit` (1 MiB). */
  limit?: number | undefined
}

const REJECTION: BodyRejection = { status: 403, error: 'forbidden', details: 'request body contains a blocked word' }

function compileWords (words: unknown): WordMatcher {
  if (!Array.isArray(words) || words.length === 0 || words.some((w) => typeof w !== 'string' || w.trim() === '')) {
    throw new OptionsError('blackWords.words', 'must be a non-empty array of non-empty strings')
  }
  return new WordMatcher(words as string[])
}

const UNCHECKABLE: BodyRejection = { status: 403, error: 'forbidden', details: 'the request body was parsed into a stream, which cannot be checked for blocked words' }

/**
 * Media types whose parsers (Fastify's JSON and text parsers, @fastify/formbody's) hand the handler a string or
 * plain data, which is what is scanned. A custom parser registered for one of them should do the same; one that
 * hands on a stream gets the request refused (it cannot be checked after parsing).
 */
const PARSED_TYPES = new Set(['application/json', 'text/plain', 'application/x-www-form-urlencoded'])

function mediaType (header: string | undefined): string {
  if (header === undefined) return ''
  const semi = header.indexOf(';')
  return (semi === -1 ? header : header.slice(0, semi)).trim().toLowerCase()
}

/**
 * True when this request's body is scanned after parsing: a plain HTTP/1 body with a length (bounded by the
 * `preParsing` limit check, and as sent) of a type Fastify parses into text or plain data.
 */
function scannedWhenParsed (request: FastifyRequest): boolean {
  const h = request.headers
  if (h['transfer-encoding'] !== undefined || h['content-encoding'] !== undefined) return false
  if (request.raw.httpVersionMajor !== 1 || declaredLength(h['content-length']) === undefined) return false
  const type = h['content-type']
  return type !== undefined && (PARSED_TYPES.has(type) || PARSED_TYPES.has(mediaType(type)))
}

/** The refusal for a parsed body, if any: a listed word, or a body that is a stream. */
function checkParsed (matcher: WordMatcher, body: unknown): BodyRejection | undefined {
  if (typeof body === 'string') return matcher.test(body) ? REJECTION : undefined
  if (Buffer.isBuffer(body)) return matcher.scanner()(body) ? REJECTION : undefined
  if (body !== null && typeof body === 'object' && typeof (body as { pipe?: unknown }).pipe === 'function') return UNCHECKABLE
  return matcher.test(textOf(body)) ? REJECTION : undefined
}

/** True when the (parsed) body contains one of the words, in any letter case. */
export function containsBlackWord (body: unknown, words: readonly string[]): boolean {
  return new WordMatcher(words).test(textOf(body))
}

/** The text of a parsed body: strings and Buffers as they are, anything else as JSON. */
function textOf (body: unknown): string {
  if (body === undefined || body === null) return ''
  if (typeof body === 'string') return body
  if (Buffer.isBuffer(body)) return body.toString('utf8')
  try { return JSON.stringify(body) ?? '' } catch { return '' }
}

/** Route-level form on the parsed body: `preHandler: blackWordsHook(['spam'])`. */
export function blackWordsHook (words: string[]): ToolkitHook {
  const matcher = compileWords(words)
  return async function blackWordsHook (request, reply) {
    if (matcher.test(textOf(request.body))) {
      sendError(reply, REJECTION.status, REJECTION.error, REJECTION.details)
      await reply
    }
  }
}

/** fastify-plugin: the filter applies to every route of the context it is registered in. */
const blackWordsPluginImpl: FastifyPluginAsync<BlackWordsOptions> = async (fastify, opts) => {
  const matcher = compileWords(opts?.words)
  const limit = opts.limit ?? fastify.initialConfig.bodyLimit ?? 1024 * 1024
  if (!Number.isSafeInteger(limit) || limit < 1) throw new OptionsError('blackWords.limit', 'must be a positive integer (bytes)')
  fastify.addHook('preParsing', guardBodyHook({
    limit,
    inspect: () => {
      const seen = matcher.scanner()
      return (chunk) => (seen(chunk) ? REJECTION : undefined)
    },
    leaveToParser: scannedWhenParsed
  }))
  // Callback style: no promise per request. Answering without calling `done` ends the request here.
  fastify.addHook('preValidation', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const rejection = request.body === undefined || !scannedWhenParsed(request) ? undefined : checkParsed(matcher, request.body)
    if (rejection === undefined) { done(); return }
    sendError(reply, rejection.status, rejection.error, rejection.details)
  })
}

export const blackWordsPlugin = fp(blackWordsPluginImpl, { name: 'gatehouse-black-words', fastify: '5.x' })
