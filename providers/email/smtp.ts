/**
 * SMTP sender over nodemailer, with the mail-sender parameters of go-pkgz/auth v2. Names here (Go name):
 * host (Host), port (Port), username (SMTPUserName), password (SMTPPassword), startTLS (StartTLS),
 * insecureSkipVerify (InsecureSkipVerify), from (From), subject (Subject), contentType (ContentType),
 * charset (Charset), heloName (HELOHost). `tls` (implicit TLS, port 465) and `timeout` go beyond the Go library.
 */
import { OptionsError } from '../../lib/errors.js'
import type { createTransport } from 'nodemailer'
import { requireDriver } from '../../lib/optional-driver.js'
import type { Duration } from '../../lib/duration.js'
import { optionDuration } from '../../lib/options.js'
import { MailSendError, isMailAddress, type Sender, type SendOptions } from './sender.js'

export interface SmtpSenderOptions {
  /** SMTP server host name or address. Required. (Host) */
  host: string
  /** SMTP server port. Default 465 with `tls`, else 25. (Port) */
  port?: number | undefined
  /** User for SMTP AUTH; no authentication when unset. (SMTPUserName) */
  username?: string | undefined
  /** Password for SMTP AUTH. (SMTPPassword) */
  password?: string | undefined
  /** Require a STARTTLS upgrade before authenticating and sending; fail when the server offers none. (StartTLS) */
  startTLS?: boolean | undefined
  /** Connect with TLS from the first byte (usually port 465). Default false. */
  tls?: boolean | undefined
  /** Accept any server certificate. For tests and self-signed servers only. Default false. (InsecureSkipVerify) */
  insecureSkipVerify?: boolean | undefined
  /** Sender address, e.g. `"Site" <no-reply@example.com>`. Required. (From) */
  from: string
  /** Subject line. Default `Confirmation`. (Subject) */
  subject?: string | undefined
  /** MIME type of the body: `text/plain` or `text/html`. Default `text/plain`. (ContentType) */
  contentType?: string | undefined
  /** Body charset: `utf-8`, `us-ascii` or `iso-8859-1`. Default `utf-8`. (Charset) */
  charset?: string | undefined
  /** Connect, greeting and idle-socket timeout: ms or `'10s'`. Default 10 s. */
  timeout?: Duration | undefined
  /**
   * The host name this client gives in its EHLO/HELO greeting (HELOHost; nodemailer's `name`): a server that checks
   * it against the sender's address wants the public name of this machine. Default: the machine's host name.
   */
  heloName?: string | undefined
}

// Node can encode these natively; anything else would be sent mislabelled.
const CHARSETS: Record<string, BufferEncoding> = { 'utf-8': 'utf8', utf8: 'utf8', 'us-ascii': 'ascii', ascii: 'ascii', 'iso-8859-1': 'latin1', latin1: 'latin1' }
// nodemailer's codes for "could not talk to the server", and the socket codes it wraps (as originalCode).
// Anything else, TLS certificate errors included, is the server or the configuration failing: 502.
const UNAVAILABLE = new Set(['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS'])
const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE'])
// After our side closed (done, or stopped at the deadline), the socket is destroyed if the server has not
// closed its side within this time.
const SOCKET_CLOSE_TIMEOUT_MS = 500

interface SmtpReply { responseCode?: number | undefined; response?: string | undefined }
type SmtpError = Error & SmtpReply & { code?: string | undefined; originalCode?: string | undefined; command?: string | undefined; rejectedErrors?: SmtpReply[] | undefined }

/** A host name (labels of letters, digits, hyphens) or a bracketed address literal (RFC 5321 §4.1.3), up to 253 characters. */
const HELO_NAME = /^(?=.{1,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\]|\[IPv6:[0-9A-Fa-f:.]+\])$/

const bad = (name: string, why: string): OptionsError => new OptionsError(`SmtpSender.${name}`, why)

export class SmtpSender implements Sender {
  /** Named in client-facing errors: `mail server unavailable`, `mail server failed`. */
  readonly peer = 'mail server'
  private readonly transport: ReturnType<typeof createTransport>
  private readonly from: string
  private readonly subject: string
  /** MIME type of the body; the verified provider escapes template values for HTML when it is `text/html`. */
  readonly contentType: string
  private readonly encoding: BufferEncoding
  private readonly charset: string
  private readonly where: string

  constructor (opts: SmtpSenderOptions) {
    if (opts === null || typeof opts !== 'object') throw new OptionsError('SmtpSender', 'options must be an object')
    if (typeof opts.host !== 'string' || opts.host === '') throw bad('host', 'is required')
    const tls = bool('tls', opts.tls)
    const port = opts.port ?? (tls ? 465 : 25)
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw bad('port', 'must be an integer 1..65535')
    if (typeof opts.from !== 'string' || opts.from === '' || /[\r\n]/.test(opts.from)) throw bad('from', 'is required (one line)')
    if (opts.subject !== undefined && (typeof opts.subject !== 'string' || /[\r\n]/.test(opts.subject))) throw bad('subject', 'must be one line of text')
    if (opts.username !== undefined && typeof opts.username !== 'string') throw bad('username', 'must be a string')
    if (opts.password !== undefined && typeof opts.password !== 'string') throw bad('password', 'must be a string')
    this.contentType = (opts.contentType ?? 'text/plain').toLowerCase()
    if (!['text/plain', 'text/html'].includes(this.contentType)) throw bad('contentType', 'must be "text/plain" or "text/html"')
    this.charset = (opts.charset ?? 'utf-8').toLowerCase()
    const encoding = CHARSETS[this.charset]
    if (encoding === undefined) throw bad('charset', `must be one of ${Object.keys(CHARSETS).join(', ')}`)
    this.encoding = encoding
    const timeout = optionDuration('SmtpSender.timeout', opts.timeout, 10_000)
    const heloName = opts.heloName
    // It goes on the EHLO line as it is: a host name or an address literal ([192.0.2.1]), nothing that could end the line.
    if (heloName !== undefined && (typeof heloName !== 'string' || !HELO_NAME.test(heloName))) throw bad('heloName', 'must be a host name (e.g. mail.example.com) or an address literal ([192.0.2.1])')
    this.from = opts.from
    this.subject = opts.subject ?? 'Confirmation'
    this.where = `${opts.host}:${port}`
    // nodemailer is loaded when a mail sender is configured, not when the package is imported.
    const nodemailer = requireDriver<{ createTransport: typeof createTransport }>('nodemailer', { option: 'SmtpSender', feature: 'sending mail over SMTP' })
    this.transport = nodemailer.createTransport({
      host: opts.host,
      port,
      secure: tls,
      requireTLS: bool('startTLS', opts.startTLS),
      tls: { rejectUnauthorized: !bool('insecureSkipVerify', opts.insecureSkipVerify) },
      auth: opts.username !== undefined && opts.username !== '' ? { user: opts.username, pass: opts.password ?? '' } : undefined,
      connectionTimeout: timeout,
      greetingTimeout: timeout,
      socketTimeout: timeout,
      socketCloseTimeout: SOCKET_CLOSE_TIMEOUT_MS,
      ...(heloName === undefined ? {} : { name: heloName })
    })
  }

  /** Sends one message; `options.signal` (the provider's send deadline) stops it and closes the connection. */
  async send (address: string, text: string, options?: SendOptions): Promise<void> {
    if (typeof address !== 'string' || !isMailAddress(address)) {
      throw new MailSendError('rejected', 'not a single mail address')
    }
    try {
      await this.transport.sendMail({
        from: this.from,
        to: address,
        subject: this.subject,
        // One alternative is sent as the whole body, with exactly our content type and charset.
        alternatives: [{ contentType: `${this.contentType}; charset=${this.charset}`, content: Buffer.from(text, this.encoding) }],
        ...(options?.signal === undefined ? {} : { signal: options.signal })
      })
    } catch (err) {
      throw this.classify(err as SmtpError)
    }
  }

  /** Closes idle connections. */
  close (): void { this.transport.close() }

  /**
   * Sorts a failure. Only a recipient refused for being a bad mailbox is the caller's mistake (400); a refusal
   * on policy grounds (RFC 3463 class x.7.x: "relaying denied"), at MAIL FROM or at DATA is our configuration
   * or the server failing (502); a temporary refusal (4xx) or no connection is 503. The messages keep the
   * server's reply and address for the log; the provider shows clients none of it.
   */
  private classify (err: SmtpError): MailSendError {
    const msg = `SMTP ${this.where}: ${err.message}`
    if (err.name === 'AbortError') return new MailSendError('unavailable', `${msg} (stopped at the send deadline)`, { cause: err })
    if (err.code === 'EENVELOPE' && err.command === 'RCPT TO') {
      const reply = err.rejectedErrors?.[0] ?? err
      const code = reply.responseCode ?? err.responseCode ?? 0
      const status = /\b[245]\.(\d{1,3})\.\d{1,3}\b/.exec(reply.response ?? err.message)
      if (code >= 400 && code < 500) return new MailSendError('unavailable', msg, { cause: err })
      if (status?.[1] === '7') return new MailSendError('failed', msg, { cause: err })
      return new MailSendError('rejected', 'the mail server refused this recipient', { cause: err })
    }
    const unreachable = err.originalCode !== undefined ? NETWORK.has(err.originalCode) : err.code !== undefined && UNAVAILABLE.has(err.code)
    if (unreachable) return new MailSendError('unavailable', msg, { cause: err })
    return new MailSendError('failed', msg, { cause: err })
  }
}

function bool (name: string, v: unknown): boolean {
  if (v === undefined) return false
  if (typeof v !== 'boolean') throw bad(name, 'must be a boolean')
  return v
}
