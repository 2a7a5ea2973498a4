/**
 * The one outbound HTTP call of the package (OAuth2 token, userinfo, discovery and JWKS requests, avatar
 * fetches, the Telegram Bot API): `node:http`/`node:https` with a deadline that destroys the socket and the
 * streams when it fires (see deadline.ts for why not `fetch` with an AbortSignal), a byte cap on the wire and
 * after decompression (body.ts), no redirect followed (a caller that wants them re-checks each target), and
 * one connection per call (nothing pooled that a later call could find half-dead).
 */
import type http from 'node:http'
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http'
import type https from 'node:https'
import type { LookupFunction } from 'node:net'
import { ACCEPT_ENCODING, describe, readBody, type BodyRead } from './body.js'
import { OutboundError, type Deadline } from './deadline.js'
import { failSpan, httpClientAttributes, inSpan, SpanKinds } from '../telemetry/spans.js'
import { requireLazy } from '../lazy.js'

// Required, not imported: on Node 24 an ES import of node:http builds its namespace, which loads zlib, and the
// toolkit (breachedPasswords sends requests) loads zlib only on use.
const client = (secure: boolean): typeof http | typeof https => requireLazy<typeof http | typeof https>(secure ? 'node:https' : 'node:http')

export { Deadline, OutboundError, withDeadline, type OutboundFailure } from './deadline.js'

/** Sent unless the caller sets its own: some APIs (GitHub) refuse requests without a User-Agent. */
const USER_AGENT = 'fastify-gatehouse'

export interface OutboundRequest {
  method?: string | undefined
  headers?: Record<string, string> | undefined
  body?: string | Buffer | undefined
  /** The call's deadline: connecting, the status line and the whole body, decompression included. */
  deadline: Deadline
  /** Largest body read, on the wire and after decompression. */
  maxBytes: number
  /** Deadline of the TCP connection alone (within `deadline`). */
  connectTimeoutMs?: number | undefined
  /** Resolves the host instead of DNS (the avatar fetch pins the addresses it has checked). */
  lookup?: LookupFunction | undefined
  /** Whether the body of an answer with this status is wanted; when not, it is discarded unread. Default: always. */
  readBodyOf?: ((status: number) => boolean) | undefined
  /** The name of the call's span when tracing is on (`gatehouse.oauth2.token`). Default `gatehouse.http`. */
  span?: string | undefined
  /** The path the span's `url.full` shows instead of the real one, when the path holds a secret (a Bot API token). */
  tracePath?: string | undefined
}

export interface OutboundAnswer {
  status: number
  headers: IncomingHttpHeaders
  /** The decoded body (empty when `readBodyOf` declined it). */
  body: Buffer
}

/**
 * Sends one request and reads the answer. Rejects with an `OutboundError` only: `timeout` when the deadline
 * passes (the socket is destroyed at that moment), `unreachable`, `too-large`, `malformed` or `aborted`.
 */
export async function outboundRequest (url: URL, o: OutboundRequest): Promise<OutboundAnswer> {
  const method = o.method ?? 'GET'
  return await inSpan(o.span ?? 'gatehouse.http', httpClientAttributes(url, method, o.tracePath), async (span) => {
    const answer = await send(url, o)
    span?.setAttribute('http.response.status_code', answer.status)
    if (span !== undefined && answer.status >= 400) failSpan(span, String(answer.status))
    return answer
  }, SpanKinds.CLIENT)
}

async function send (url: URL, o: OutboundRequest): Promise<OutboundAnswer> {
  o.deadline.throwIfAborted()
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundError('malformed', `scheme ${url.protocol} is not http(s)`)
  const signal = o.deadline.signal
  return await new Promise<OutboundAnswer>((resolve, reject) => {
    let settled = false
    let req: http.ClientRequest | undefined
    let body: BodyRead | undefined
    let connectTimer: NodeJS.Timeout | undefined
    const settle = (err: Error | undefined, answer?: OutboundAnswer): void => {
      if (settled) return
      settled = true
      signal.removeEventListener('abort', onAbort)
      clearTimeout(connectTimer)
      if (err !== undefined) {
        body?.destroy()
        req?.destroy()
        reject(err)
      } else {
        resolve(answer!)
      }
    }
    const onAbort = (): void => { settle(signal.reason as Error) }
    signal.addEventListener('abort', onAbort, { once: true })

    const headers: Record<string, string> = { 'user-agent': USER_AGENT, 'accept-encoding': ACCEPT_ENCODING, ...o.headers }
    if (o.body !== undefined) headers['content-length'] = String(Buffer.byteLength(o.body))
    try {
      req = client(url.protocol === 'https:').request(url, {
        method: o.method ?? 'GET',
        headers,
        agent: false,
        ...(o.lookup === undefined ? {} : { lookup: o.lookup })
      })
    } catch (err) {
      // A header value Node refuses (a control character): its message names the header, never the value.
      return settle(new OutboundError('malformed', `the request could not be built: ${describe(err)}`))
    }
    // on, not once: a late second error (a reset while the body streams) must not go unhandled.
    req.on('error', (err) => settle(new OutboundError('unreachable', `${url.host}: ${describe(err)}`, { cause: err })))
    if (o.connectTimeoutMs !== undefined) {
      const ms = o.connectTimeoutMs
      req.once('socket', (socket) => {
        if (!socket.connecting) return
        connectTimer = setTimeout(() => settle(new OutboundError('unreachable', `${url.host}: no connection within ${ms} ms`)), ms)
        socket.once('connect', () => clearTimeout(connectTimer))
      })
    }
    req.once('response', (res: IncomingMessage) => {
      const status = res.statusCode ?? 0
      if (o.readBodyOf !== undefined && !o.readBodyOf(status)) {
        res.destroy()
        return settle(undefined, { status, headers: res.headers, body: Buffer.alloc(0) })
      }
      body = readBody(res, o.maxBytes)
      body.done.then(
        (bytes) => settle(undefined, { status, headers: res.headers, body: bytes }),
        (err: Error) => settle(err)
      )
    })
    req.end(o.body)
  })
}
