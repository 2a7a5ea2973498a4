/**
 * How a verified provider delivers its confirmation message. Any object with `send(address, text)` will do;
 * `senderFunc` adapts a plain function. Senders report failures with `SendError` so the provider can tell
 * the user's mistake (a refused address: 400) from the upstream's trouble (502/503).
 */
import { ErrorCodes, GatehouseError, OptionsError } from '../../lib/errors.js'
import type { MaybePromise } from '../../lib/user.js'

export interface Sender {
  send(address: string, text: string): MaybePromise<void>
  /** MIME type the text is delivered as; `text/html` makes the provider HTML-escape template values. */
  readonly contentType?: string
}
export type SenderFunc = (address: string, text: string) => MaybePromise<void>

/**
 * - `rejected`: the address is not acceptable (malformed, or refused by the upstream) → 400
 * - `unavailable`: the upstream cannot be reached or timed out → 503
 * - `failed`: the upstream answered with an error (authentication, TLS, protocol) → 502
 */
export type SendErrorKind = 'rejected' | 'unavailable' | 'failed'

const KIND_CODES: Record<SendErrorKind, string> = { rejected: ErrorCodes.BAD_REQUEST, unavailable: ErrorCodes.UNAVAILABLE, failed: ErrorCodes.UPSTREAM }

/** A delivery failure, classified by `kind` (its `code` follows the kind). */
export class SendError extends GatehouseError {
  readonly kind: SendErrorKind
  constructor (kind: SendErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, KIND_CODES[kind], options)
    this.name = 'SendError'
    this.kind = kind
  }
}

/** Adapts a function to the `Sender` interface. */
export function senderFunc (fn: SenderFunc): Sender {
  if (typeof fn !== 'function') throw new OptionsError('sender', 'must be a function (address, text)')
  return { send: (address, text) => fn(address, text) }
}

/** A `Sender` from either form; throws OptionsError naming the option (`what`). */
export function toSender (value: Sender | SenderFunc, what = 'sender'): Sender {
  if (typeof value === 'function') return senderFunc(value)
  if (value !== null && typeof value === 'object' && typeof value.send === 'function') return value
  throw new OptionsError(what, 'must be a function (address, text) or an object with send(address, text)')
}
