/**
 * blackWords: 403 `{error, details, code: "GATEHOUSE_FORBIDDEN"}` when the request body contains one of the
 * listed words, in any letter case (a body over `limit` is 413 `GATEHOUSE_TOO_LARGE`). The plugin scans the
 * body as it arrives (`preParsing`), in one pass whatever the number of words (word-matcher.ts); a word split
 * across chunks (or a multi-byte character split across chunks) is still found. A compressed body is scanned
 * as the handler will get it, inflated (body-guard.ts). It matches the text as sent: a word hidden by an
 * encoding (percent-escapes, JSON `\u` escapes) is not decoded.
 */
import fp from 'fastify-plugin'
import type { FastifyPluginAsync } from 'fastify'
import { OptionsError, sendError } from '../../lib/errors.js'
import { guardBody, type BodyRejection } from './body-guard.js'
import type { ToolkitHook } from './hook.js'
import { WordMatcher } from './word-matcher.js'

export interface BlackWordsOptions {
  /** Words that get a body refused (case-insensitive substrings). Required, non-empty. */
  words: string[]
  /** Largest body scanned, bytes; larger bodies get 413. Default: the route's `bodyLimit` (1 MiB). */
  limit?: number
}

const REJECTION: BodyRejection = { status: 403, error: 'forbidden', details: 'request body contains a blocked word' }

function compileWords (words: unknown): WordMatcher {
  if (!Array.isArray(words) || words.length === 0 || words.some((w) => typeof w !== 'string' || w.trim() === '')) {
    throw new OptionsError('blackWords.words', 'must be a non-empty array of non-empty strings')
  }
  return new WordMatcher(words as string[])
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
  fastify.addHook('preParsing', guardBody({
    limit,
    inspect: () => {
      const seen = matcher.scanner()
      return (chunk) => (seen(chunk) ? REJECTION : undefined)
    }
  }))
}

export const blackWordsPlugin = fp(blackWordsPluginImpl, { name: 'gatehouse-black-words', fastify: '5.x' })
