/**
 * The deadline of an outbound call, and the error every outbound failure is reported with.
 *
 * Why a timer of our own rather than `AbortSignal.timeout()`: on Node 20, the signal that `fetch` is given
 * reaches the body stream only through a weak reference, and `AbortSignal.timeout()` keeps no strong one
 * either, so after a garbage collection the deadline may simply never fire and a peer that trickles one byte
 * a second holds the request open for ever. A `setTimeout` is held by the event loop until it fires or is
 * cleared, and its callback holds the controller, whose listeners destroy the socket and the streams.
 */
import { ErrorCodes, GatehouseError } from '../errors.js'

/**
 * - `timeout`: no complete answer before the deadline;
 * - `unreachable`: no connection, or the connection failed (reset, TLS, DNS);
 * - `too-large`: the answer (on the wire or decompressed) exceeds the byte cap;
 * - `malformed`: the answer cannot be read (unknown content encoding, corrupt compression) or the request
 *   could not be built (a header value with a control character);
 * - `aborted`: the caller stopped the call (e.g. the server is closing).
 */
export type OutboundFailure = 'timeout' | 'unreachable' | 'too-large' | 'malformed' | 'aborted'

/**
 * A failed outbound call. Its message is safe for logs: it names the failure and the peer's host at most,
 * never a URL path or query (a Bot API token travels in the path), a header value or a body.
 */
export class OutboundError extends GatehouseError {
  readonly reason: OutboundFailure
  constructor (reason: OutboundFailure, message: string, options?: { cause?: unknown }) {
    super(message, reason === 'timeout' ? ErrorCodes.UPSTREAM_TIMEOUT : ErrorCodes.UPSTREAM, options)
    this.name = 'OutboundError'
    this.reason = reason
  }
}

/**
 * One deadline shared by everything a call does (DNS, connecting, every redirect hop, the body, its
 * decompression). `signal` aborts with an `OutboundError('timeout')` when the time is up, or with
 * `OutboundError('aborted')` when the optional parent signal aborts first. Call `clear()` when done.
 */
export class Deadline {
  readonly signal: AbortSignal
  readonly expiresAt: number
  private readonly controller = new AbortController()
  private readonly timer: NodeJS.Timeout
  private readonly parent: AbortSignal | undefined
  // An outer deadline that expired passes its own reason on (a timeout stays a timeout); any other stop is `aborted`.
  private readonly onParentAbort = (): void => {
    const reason: unknown = this.parent?.reason
    this.abort(reason instanceof OutboundError ? reason : new OutboundError('aborted', 'the call was stopped'))
  }

  constructor (readonly ms: number, parent?: AbortSignal) {
    this.signal = this.controller.signal
    this.expiresAt = Date.now() + ms
    this.timer = setTimeout(() => { this.abort(new OutboundError('timeout', `no complete answer within ${ms} ms`)) }, ms)
    this.parent = parent
    if (parent?.aborted === true) this.onParentAbort()
    else parent?.addEventListener('abort', this.onParentAbort, { once: true })
  }

  /** Milliseconds left (0 once expired). */
  get remaining (): number {
    return Math.max(0, this.expiresAt - Date.now())
  }

  /** Throws the abort reason when the deadline has passed or the call was stopped. */
  throwIfAborted (): void {
    if (this.signal.aborted) throw this.signal.reason
  }

  /** Stops the timer and forgets the parent signal; the deadline no longer fires. */
  clear (): void {
    clearTimeout(this.timer)
    this.parent?.removeEventListener('abort', this.onParentAbort)
  }

  private abort (reason: OutboundError): void {
    this.clear()
    this.controller.abort(reason)
  }
}

/** Runs `op` under a fresh deadline of `ms` (stopped early by `parent`), clearing it afterwards. */
export async function withDeadline<T> (ms: number, op: (deadline: Deadline) => Promise<T>, parent?: AbortSignal): Promise<T> {
  const deadline = new Deadline(ms, parent)
  try {
    return await op(deadline)
  } finally {
    deadline.clear()
  }
}
