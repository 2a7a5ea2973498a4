/**
 * Reading an answer's body under a byte cap that holds both on the wire and after decompression: a peer may
 * send 400 MB, or 400 KB of gzip that inflates to 400 MB, and neither may cost more than the cap in memory.
 * Decompression runs in small chunks, each counted as it comes out, so a bomb stops at the cap.
 */
import type { IncomingMessage } from 'node:http'
import type { Transform } from 'node:stream'
import { OutboundError } from './deadline.js'
import { requireLazy } from '../lazy.js'

// zlib is loaded with the first compressed answer, not with the modules that may send a request (the toolkit's
// breachedPasswords among them: the toolkit loads zlib on use).
const zlib = (): typeof import('node:zlib') => requireLazy<typeof import('node:zlib')>('node:zlib')

/** The content codings this reader undoes (RFC 9110 §8.4.1). */
export const ACCEPT_ENCODING = 'gzip, deflate, br'

/** A body being read: `done` settles with the bytes or an OutboundError; `destroy` stops everything at once. */
export interface BodyRead {
  done: Promise<Buffer>
  destroy(): void
}

/** Starts reading `res`; `maxBytes` caps the wire bytes and, separately, the decoded bytes. */
export function readBody (res: IncomingMessage, maxBytes: number): BodyRead {
  const encoding = String(res.headers['content-encoding'] ?? 'identity').trim().toLowerCase()
  let decoder: Transform | undefined
  try {
    decoder = decoderFor(encoding)
  } catch (err) {
    res.destroy()
    return { done: Promise.reject(err), destroy () {} }
  }
  const declared = Number(res.headers['content-length'])
  if (Number.isFinite(declared) && declared > maxBytes) {
    res.destroy()
    return { done: Promise.reject(tooLarge(`declared ${declared} bytes`, maxBytes)), destroy () {} }
  }

  const destroy = (): void => {
    decoder?.destroy()
    res.destroy()
  }
  const done = new Promise<Buffer>((resolve, reject) => {
    let settled = false
    const fail = (err: Error): void => {
      if (settled) return
      settled = true
      destroy()
      reject(err)
    }
    const chunks: Buffer[] = []
    let wire = 0
    let decoded = 0
    const keep = (chunk: Buffer): void => {
      decoded += chunk.length
      if (decoded > maxBytes) return fail(tooLarge(decoder === undefined ? 'the body' : 'the decompressed body', maxBytes))
      chunks.push(chunk)
    }
    const finish = (): void => {
      if (settled) return
      settled = true
      resolve(Buffer.concat(chunks))
    }
    res.on('data', (chunk: Buffer) => {
      if (settled) return
      wire += chunk.length
      if (wire > maxBytes) return fail(tooLarge('the body', maxBytes))
      if (decoder === undefined) keep(chunk)
      else decoder.write(chunk)
    })
    // A body cut short (reset, close before the end) is an error, not a short answer.
    res.on('aborted', () => fail(new OutboundError('unreachable', 'the connection closed before the answer was complete')))
    res.on('error', (err) => fail(new OutboundError('unreachable', `the answer could not be read: ${describe(err)}`, { cause: err })))
    res.on('close', () => { if (!res.complete) fail(new OutboundError('unreachable', 'the connection closed before the answer was complete')) })
    if (decoder === undefined) {
      res.on('end', finish)
    } else {
      decoder.on('data', (chunk: Buffer) => { if (!settled) keep(chunk) })
      decoder.on('end', finish)
      decoder.on('error', (err) => fail(new OutboundError('malformed', `the ${encoding} body is corrupt: ${describe(err)}`, { cause: err })))
      res.on('end', () => { decoder!.end() })
    }
  })
  return { done, destroy }
}

function decoderFor (encoding: string): Transform | undefined {
  switch (encoding) {
    case 'identity': case '': return undefined
    case 'gzip': case 'x-gzip': return zlib().createGunzip()
    case 'deflate': return zlib().createInflate()
    case 'br': return zlib().createBrotliDecompress()
    default: throw new OutboundError('malformed', `unsupported content encoding ${JSON.stringify(encoding.slice(0, 40))}`)
  }
}

function tooLarge (what: string, maxBytes: number): OutboundError {
  return new OutboundError('too-large', `${what} exceeds the ${maxBytes}-byte limit`)
}

/** An error's code, or its message: Node's network errors name the address, never the URL's path. */
export function describe (err: unknown): string {
  const e = err as NodeJS.ErrnoException | undefined
  return e?.code ?? e?.message ?? String(err)
}
