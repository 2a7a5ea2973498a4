/**
 * The body reader behind sizeLimit and blackWords: a `preParsing` hook that enforces a byte limit (and an optional
 * chunk inspector) on the body the handler will see, and answers a refusal with `{error, details, code}`.
 *
 * What is counted is what the handler gets: the bytes on the wire, and for a compressed body (`Content-Encoding`
 * gzip, x-gzip, deflate, br, and zstd where Node has it) the inflated bytes as well, because a decompressing
 * hook (e.g. @fastify/compress's request decompression, which runs after every context-level `preParsing` hook)
 * hands the handler the inflated body. The compressed bytes are inflated once more here only to count and
 * inspect them, stopping at the first byte past the limit; the body handed on stays as it came. A coding that
 * cannot be decoded here is refused (415), since its inflated size cannot be known.
 *
 * A hook that ran before this one and replaced the stream (a route-level decompressor runs after the context's
 * hooks, but a decompressor registered as an earlier context hook runs before) already hands on what the handler
 * will see: such a stream is counted as it is, without inflating it again.
 *
 * The usual request costs nothing: an HTTP/1.x body with a `Content-Length` within the limit, no
 * `Transfer-Encoding` and no `Content-Encoding` is left alone when nothing inspects it, because Node's HTTP/1
 * parser delivers exactly `Content-Length` bytes (surplus bytes are read as the next request). Such a body is also
 * left alone when the caller inspects what the content parser makes of it instead (`leaveToParser`: blackWords
 * scans the parsed JSON, form or text). Every other body (chunked, HTTP/2 without a length, compressed, or
 * inspected here) is read here first, under the limit, and replayed to the content parser, so the handler never
 * runs on a body that was not checked whole.
 */
import { Readable, type Transform } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ErrorCodes, sendError } from '../../lib/errors.js'
import { requireLazy } from '../../lib/lazy.js'

/** Why a body is refused: the status and the `{error, details, code?}` to answer (code: the status's). */
export interface BodyRejection { status: number; error: string; details: string; code?: string | undefined }

export interface BodyGuardOptions {
  /** Largest accepted body in bytes, on the wire and inflated. */
  limit: number
  /** Per request: a function that looks at each chunk as the handler will see it (inflated when compressed). */
  inspect?: (() => (chunk: Buffer) => BodyRejection | undefined) | undefined
  /**
   * Per request: true when the inspector need not see this body because the caller checks what the content
   * parser makes of it instead. Only asked for a body as sent, with an HTTP/1 `Content-Length` and no
   * `Transfer-Encoding` or `Content-Encoding`: one whose size the length already bounds.
   */
  leaveToParser?: ((request: FastifyRequest) => boolean) | undefined
}

export type PreParsingHook = (request: FastifyRequest, reply: FastifyReply, payload: Readable) => Promise<Readable>

const TOO_LARGE = (limit: number): BodyRejection => ({ status: 413, error: 'request body too large', details: `limit is ${limit} bytes` })

// zlib is loaded with the first compressed body, not with the toolkit.
const zlib = (): typeof import('node:zlib') => requireLazy<typeof import('node:zlib')>('node:zlib')

/** The inflater of a content coding (RFC 9110 §8.4.1; `x-gzip` is gzip), when Node has one. */
function inflaterOf (coding: string): (() => Transform) | undefined {
  switch (coding) {
    case 'gzip': case 'x-gzip': return () => zlib().createGunzip()
    case 'deflate': return () => zlib().createInflate()
    case 'br': return () => zlib().createBrotliDecompress()
    case 'zstd': {
      // Node 22.15+ and 23.8+; typed loosely so the types of Node 20 compile.
      const zstd = (zlib() as { createZstdDecompress?: (() => Transform) | undefined }).createZstdDecompress
      return zstd === undefined ? undefined : () => zstd()
    }
    default: return undefined
  }
}

/** The inflater to count with (undefined: no coding, or identity), or a rejection for a coding that has none. */
function codingOf (header: string | undefined): (() => Transform) | BodyRejection | undefined {
  if (header === undefined) return undefined
  const coding = header.trim().toLowerCase()
  if (coding === '' || coding === 'identity') return undefined
  return inflaterOf(coding) ?? {
    status: 415,
    error: 'unsupported content encoding',
    details: `a body with Content-Encoding "${coding.slice(0, 64)}" cannot be checked (gzip, deflate or br, one coding)`,
    code: ErrorCodes.UNSUPPORTED_ENCODING
  }
}

/** The declared `Content-Length`, when there is a well-formed one. */
export function declaredLength (value: string | undefined): number | undefined {
  return value !== undefined && /^\d{1,15}$/.test(value) ? Number(value) : undefined
}

/**
 * True when the body needs no reading here: there is none, or it is a plain HTTP/1 body as sent (a
 * `Content-Length` within the limit, no `Transfer-Encoding`, no `Content-Encoding` to inflate) that nothing
 * inspects here (no inspector, or `leaveToParser` takes it).
 */
function passesUnread (opts: BodyGuardOptions, request: FastifyRequest, payload: Readable): boolean {
  const h = request.headers
  const te = h['transfer-encoding']
  const declared = declaredLength(h['content-length'])
  const http1 = request.raw.httpVersionMajor === 1
  // HTTP/1: no body without a length or chunked framing. HTTP/2 frames bodies itself; a length is optional.
  if (te === undefined && (declared === 0 || (http1 && h['content-length'] === undefined))) return true
  if (te !== undefined || !http1 || declared === undefined || declared > opts.limit) return false
  if (payload !== request.raw && (payload as Marked)[AS_SENT] !== true) return false
  if (codingOf(h['content-encoding']) !== undefined) return false
  return opts.inspect === undefined || opts.leaveToParser?.(request) === true
}

/**
 * Reads the body under the limit (and the inspector), then returns a stream that replays it for the content
 * parser. On rejection the answer is sent with `Connection: close`, so the rest of an oversized upload is
 * not read, and the hook resolves after the reply went out (no later stage runs).
 */
export function guardBody (opts: BodyGuardOptions): PreParsingHook {
  return async (request, reply, payload) => passesUnread(opts, request, payload) ? payload : await readGuarded(opts, request, reply, payload)
}

/** Fastify's callback form of a preParsing hook. */
export type PreParsingCallbackHook = (request: FastifyRequest, reply: FastifyReply, payload: Readable, done: (err: Error | null, payload?: Readable) => void) => void

/**
 * `guardBody` in Fastify's callback form, for the plugins' context-wide hooks: a body that needs no reading is
 * handed on synchronously, without a promise per request (on every route of the context, most requests).
 */
export function guardBodyHook (opts: BodyGuardOptions): PreParsingCallbackHook {
  return (request, reply, payload, done) => {
    if (passesUnread(opts, request, payload)) { done(null, payload); return }
    readGuarded(opts, request, reply, payload).then((stream) => { done(null, stream) }, done)
  }
}

/** The body that `passesUnread` did not let through: refused at once, or read, checked and replayed. */
async function readGuarded (opts: BodyGuardOptions, request: FastifyRequest, reply: FastifyReply, payload: Readable): Promise<Readable> {
  const { limit, inspect } = opts
  const h = request.headers
  const declared = declaredLength(h['content-length'])
  if (declared !== undefined && declared > limit) return await refuse(reply, TOO_LARGE(limit), payload)
  // The bytes as sent (the socket's stream, or one of these replays): headers describe them.
  const asSent = payload === request.raw || (payload as Marked)[AS_SENT] === true
  const inflater = asSent ? codingOf(h['content-encoding']) : undefined
  if (typeof inflater === 'object') return await refuse(reply, inflater, payload)

  const look = inspect?.()
  const chunks: Buffer[] = []
  let size = 0
  const read = await readUntil(payload, (chunk) => {
    size += chunk.length
    if (size > limit) return TOO_LARGE(limit)
    chunks.push(chunk)
    return inflater === undefined ? look?.(chunk) : undefined
  })
  if (read === 'aborted') return payload // the client went away: nothing left to answer
  const rejection = read ?? (inflater === undefined || size === 0 ? undefined : await checkInflated(chunks, inflater(), limit, look))
  if (rejection !== undefined) return await refuse(reply, rejection, payload)
  return replay(chunks, size, payload, asSent)
}

async function refuse (reply: FastifyReply, rejection: BodyRejection, payload: Readable): Promise<Readable> {
  reply.header('connection', 'close')
  sendError(reply, rejection.status, rejection.error, rejection.details, rejection.code)
  await reply
  return payload
}

/** A stream whose whole content is pushed at once. */
class Replay extends Readable {
  override _read (): void {}
}

const AS_SENT = Symbol('gatehouse.bodyAsSent')
type Marked = Readable & { [AS_SENT]?: boolean | undefined; receivedEncodedLength?: number | undefined }

/**
 * The body as a fresh stream for the content parser. `receivedEncodedLength` is Fastify's wire-length check;
 * the mark tells a later guard that these are still the bytes as sent (when they were).
 */
function replay (chunks: Buffer[], size: number, from: Marked, asSent: boolean): Readable {
  const stream: Marked = new Replay()
  for (const chunk of chunks) stream.push(chunk)
  stream.push(null)
  // Behind a decoding hook the wire length is the one that hook tracked, not the decoded size.
  stream.receivedEncodedLength = asSent ? size : (from.receivedEncodedLength ?? size)
  if (asSent) stream[AS_SENT] = true
  return stream
}

/** Inflates the body only to count (and inspect) what a decompressing hook would hand the handler. */
function checkInflated (chunks: Buffer[], inflater: Transform, limit: number, look: ((chunk: Buffer) => BodyRejection | undefined) | undefined): Promise<BodyRejection | undefined> {
  return new Promise((resolve) => {
    let size = 0
    let settled = false
    const settle = (result: BodyRejection | undefined): void => {
      if (settled) return
      settled = true
      inflater.destroy()
      resolve(result)
    }
    inflater.on('data', (chunk: Buffer) => {
      size += chunk.length
      const rejection = size > limit ? TOO_LARGE(limit) : look?.(chunk)
      if (rejection !== undefined) settle(rejection)
    })
    inflater.on('end', () => { settle(undefined) })
    inflater.on('error', () => { settle({ status: 400, error: 'invalid request body', details: 'the body does not decode with its Content-Encoding' }) })
    for (const chunk of chunks) inflater.write(chunk)
    inflater.end()
  })
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
    const onEnd = (): void => { finish(undefined) }
    const onAbort = (): void => { finish('aborted') }
    payload.on('data', onData).on('end', onEnd).on('error', onAbort).on('close', onAbort)
    // A stream handed on paused (@fastify/compress's decompressor is) does not start flowing by a 'data' listener.
    payload.resume()
  })
}
