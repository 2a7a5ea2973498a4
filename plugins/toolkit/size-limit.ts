/**
 * sizeLimit: 413 `{error, details, code: "GATEHOUSE_TOO_LARGE"}` when a request body is larger than the limit,
 * whatever the client claims: a `Content-Length` above the limit is refused before reading; otherwise the bytes
 * are counted as they arrive (chunked bodies, bodies without or with a lying length), and reading stops at the
 * first byte past the limit. Runs in `preParsing`, before any content parser; the body read so far is handed on intact.
 *
 * (Fastify's own `bodyLimit` does the counting too, but answers with its own error shape, and an `onRoute`
 * hook can only change routes registered after it; this plugin covers every route of its context.)
 */
import { Readable } from 'node:stream'
import fp from 'fastify-plugin'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { OptionsError, sendError } from '../../lib/errors.js'

/** Why a body is refused: the status and the `{error, details}` to answer. */
export interface BodyRejection { status: number; error: string; details: string }

export interface BodyGuardOptions {
  /** Largest accepted body in bytes. */
  limit: number
  /** Looks at each chunk as it arrives; returns a rejection to stop reading and answer it. */
  inspect?: () => (chunk: Buffer) => BodyRejection | undefined
}

type PreParsingHook = (request: FastifyRequest, reply: FastifyReply, payload: Readable) => Promise<Readable>

const TOO_LARGE = (limit: number): BodyRejection => ({ status: 413, error: 'request body too large', details: `limit is ${limit} bytes` })

function hasBody (request: FastifyRequest): boolean {
  const h = request.headers
  return h['transfer-encoding'] !== undefined || (h['content-length'] !== undefined && h['content-length'] !== '0')
}

/**
 * Reads the body under the limit (and the inspector), then returns a stream that replays it for the content
 * parser. On rejection the answer is sent with `Connection: close`, so the rest of an oversized upload is
 * not read, and the hook resolves after the reply went out (no later stage runs).
 */
export function guardBody (opts: BodyGuardOptions): PreParsingHook {
  const { limit } = opts
  return async (request, reply, payload) => {
    if (!hasBody(request)) return payload
    const declared = Number(request.headers['content-length'])
    let rejection: BodyRejection | undefined = declared > limit ? TOO_LARGE(limit) : undefined
    let chunks: Buffer[] = []
    let size = 0
    if (rejection === undefined) {
      const inspect = opts.inspect?.()
      const read = await readUntil(payload, (chunk) => {
        size += chunk.length
        if (size > limit) return TOO_LARGE(limit)
        chunks.push(chunk)
        return inspect?.(chunk)
      })
      if (read === 'aborted') return payload // the client went away: nothing left to answer
      rejection = read
    }
    if (rejection !== undefined) {
      chunks = []
      reply.header('connection', 'close')
      sendError(reply, rejection.status, rejection.error, rejection.details)
      await reply
      return payload
    }
    const replay = Readable.from(chunks.length === 0 ? [] : [Buffer.concat(chunks, size)]) as Readable & { receivedEncodedLength?: number }
    replay.receivedEncodedLength = size
    return replay
  }
}

/** Consumes `payload` until it ends (undefined), `onChunk` rejects (the rejection), or it breaks off. */
function readUntil (payload: Readable, onChunk: (chunk: Buffer) => BodyRejection | undefined): Promise<BodyRejection | undefined | 'aborted'> {
  return new Promise((resolve) => {
    let ended = false
    const finish = (result: BodyRejection | undefined | 'aborted'): void => {
      if (ended) return
      ended = true
      payload.off('data', onData).off('end', onEnd).off('error', onAbort).off('close', onAbort)
      if (result !== undefined) payload.pause()
      resolve(result)
    }
    const onData = (chunk: Buffer | string): void => {
      const rejected = onChunk(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
      if (rejected !== undefined) finish(rejected)
    }
    const onEnd = (): void => finish(undefined)
    const onAbort = (): void => finish('aborted')
    payload.on('data', onData).on('end', onEnd).on('error', onAbort).on('close', onAbort)
  })
}

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
  fastify.addHook('preParsing', sizeLimitHook(opts?.limit))
}

export const sizeLimitPlugin = fp(sizeLimitPluginImpl, { name: 'gatehouse-size-limit', fastify: '5.x' })
