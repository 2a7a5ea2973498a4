/**
 * How a verified provider delivers its confirmation message. Any object with `send(address, text)` will do;
 * `senderFunc` adapts a plain function. Senders report failures with `MailSendError` so the provider can tell
 * the user's mistake (a refused address: 400) from the upstream's trouble (502/503).
 */
import { ErrorCodes, GatehouseError, OptionsError } from '../../lib/errors.js'
import type { MaybePromise } from '../../lib/user.js'
import { deprecatedObject, warnDeprecated } from '../../lib/deprecation.js'

/** What a send is given besides the address and the text. */
export interface SendOptions {
  /**
   * Aborts when the provider's `sendTimeout` has passed: stop and release the connection (the SMTP sender
   * closes its socket). The provider answers 503 at the deadline whether or not the sender stops.
   */
  signal: AbortSignal
}

export interface Sender {
  send(address: string, text: string, options?: SendOptions): MaybePromise<void>
  /** MIME type the text is delivered as; `text/html` makes the provider HTML-escape template values. */
  readonly contentType?: string | undefined
  /**
   * The kind of peer it delivers through, named in client-facing errors (`mail server unavailable`); never
   * an address. Default `sender`.
   */
  readonly peer?: string | undefined
}
export type SenderFunc = (address: string, text: string, options?: SendOptions) => MaybePromise<void>

/**
 * - `rejected`: the address is not acceptable (malformed, or refused by the upstream) → 400, the message shown
 * - `unavailable`: the upstream cannot be reached or timed out → 503, a generic message shown
 * - `failed`: the upstream answered with an error (authentication, TLS, policy, protocol) → 502, a generic
 *   message shown
 * The message of a 5xx kind, and the cause of any, go to the log only.
 */
export type SendErrorKind = 'rejected' | 'unavailable' | 'failed'

const KIND_CODES: Record<SendErrorKind, string> = { rejected: ErrorCodes.BAD_REQUEST, unavailable: ErrorCodes.UNAVAILABLE, failed: ErrorCodes.UPSTREAM }

/**
 * A delivery failure of a mail (or any) sender, classified by `kind` (its `code` follows the kind). Not
 * `sendError`, the toolkit's helper that answers an HTTP error.
 */
export class MailSendError extends GatehouseError {
  readonly kind: SendErrorKind
  constructor (kind: SendErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, KIND_CODES[kind], options)
    this.name = 'MailSendError'
    this.kind = kind
  }
}

/**
 * The class `MailSendError` under its first name: the same class (`new`, `instanceof`), warning once when used.
 * @deprecated Use `MailSendError` (`sendError` is the toolkit's HTTP answer); goes in 1.0.
 */
export const SendError: typeof MailSendError = deprecatedObject(() => { warnDeprecated('SendError') }, MailSendError)
/** @deprecated Use `MailSendError`; goes in 1.0. */
export type SendError = MailSendError

// One mailbox, no display name, no list: the address comes from the browser and must not fan out.
const SINGLE_ADDRESS = /^[^\s@<>()[\]\\,;:"]{1,64}@[^\s@<>()[\]\\,;:"]{1,253}$/

/** True for one bare mail address (`a@b`, at most 254 characters): the verified provider's default address rule. */
export function isMailAddress (address: string): boolean {
  return address.length <= 254 && SINGLE_ADDRESS.test(address)
}

/** Adapts a function to the `Sender` interface. */
export function senderFunc (fn: SenderFunc): Sender {
  if (typeof fn !== 'function') throw new OptionsError('sender', 'must be a function (address, text)')
  return { send: (address, text, options) => fn(address, text, options) }
}

/** A `Sender` from either form; throws OptionsError naming the option (`what`). */
export function toSender (value: Sender | SenderFunc, what = 'sender'): Sender {
  if (typeof value === 'function') return senderFunc(value)
  if (value !== null && typeof value === 'object' && typeof value.send === 'function') {
    if (value.peer !== undefined && (typeof value.peer !== 'string' || !/^[a-z][a-z0-9 -]{0,39}$/i.test(value.peer))) {
      throw new OptionsError(`${what}.peer`, 'must be a short name of the kind of peer, e.g. "mail server"')
    }
    return value
  }
  throw new OptionsError(what, 'must be a function (address, text) or an object with send(address, text)')
}
