/**
 * Requests of a comparison carry the same number of bytes, so that neither server parses more: a shorter request
 * is padded with a header that no code of the package or of Fastify reads (bench/bearer.ts, the ladder's Bearer
 * rung).
 */
import type { BenchRequest } from './lib.js'

/** The name of the padding header. */
export const PADDING = 'x-bench-padding'

/** Bytes the request's own headers take on the wire (`name: value\r\n` each; the rest is the same for both). */
export function headerBytes (req: BenchRequest): number {
  let n = 0
  for (const [name, value] of Object.entries(req.headers ?? {})) n += Buffer.byteLength(`${name}: ${value}\r\n`)
  return n
}

/**
 * `req` with a padding header that brings its headers to `bytes`. A padding line is at least `x-bench-padding: \r\n`
 * long, so a request shorter by less than that (or longer) cannot be padded: the caller learns it by an error.
 */
export function padTo (req: BenchRequest, bytes: number): BenchRequest {
  const missing = bytes - headerBytes(req)
  if (missing === 0) return req
  const overhead = Buffer.byteLength(`${PADDING}: \r\n`)
  if (missing < overhead) throw new Error(`cannot pad a request of ${headerBytes(req)} header bytes to ${bytes}`)
  return { ...req, headers: { ...req.headers, [PADDING]: 'x'.repeat(missing - overhead) } }
}

/** Both requests padded to the longer one's header bytes. */
export function sameBytes (a: BenchRequest, b: BenchRequest): [BenchRequest, BenchRequest] {
  const bytes = Math.max(headerBytes(a), headerBytes(b))
  return [padTo(a, bytes), padTo(b, bytes)]
}
