/**
 * E-mail (verified, confirmation-token) login: `emailProvider`, go-pkgz/auth's "verified" provider (`verify`
 * before: that word also means token verification). `GET /<name>/login?user=&address=&aud=&from=` mails a short-lived,
 * purpose-bound confirmation token; `GET /<name>/login?token=&sess=1|0` exchanges it, once, for a session.
 * Sending stores nothing (the token is self-contained), so a failed send loses no state; the one-time
 * check records the token's jti in the state store until the token would have expired anyway.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError, OptionsError } from '../../lib/errors.js'
import { userId } from '../../lib/user.js'
import { requestLogger, type Logger } from '../../lib/logging/logger.js'
import type { Duration } from '../../lib/duration.js'
import { checkKeys, optionDuration, optionFunction, optionLifetime, optionName } from '../../lib/options.js'
import type { StateStoreOption } from '../../stores/state/resolve.js'
import type { StateStore } from '../../lib/state-store.js'
import { queryText, requestFields, type LoginRequest } from '../../lib/login/login-request.js'
import { continuePage } from '../../lib/login/cross-site.js'
import { providerKit, type AuthProvider, type Claims, type MountOptions, type ProviderKit } from '../../plugins/core/kit.js'
import { maskAddress } from '../../lib/audit/audit.js'
import { refuseReservedName } from '../oauth2/builtins.js'
import { Deadline } from '../../lib/http/deadline.js'
import { warnDeprecated } from '../../lib/deprecation.js'
import { inSpan, SpanKinds } from '../../lib/telemetry/spans.js'
import { MailSendError, isMailAddress, toSender, type Sender, type SenderFunc } from './sender.js'
import { checkTemplate, defaultEscape, renderTemplate, type TemplateEscape } from './template.js'
import { codeRules, EmailCodes, type EmailCodeOptions } from './code.js'

/** Options of the e-mail provider plugin (`emailProvider`). */
export interface EmailProviderOptions {
  /** Route name: `{authPrefix}/<name>/login`. Required. */
  name: string
  /** Message template with `{{.Address}} {{.User}} {{.Token}} {{.Site}}`. Required. */
  template: string
  /** Delivers the message: `{ send(address, text) }` (e.g. `SmtpSender`) or a function. Required. */
  sender: Sender | SenderFunc
  /** Lifetime of a confirmation token: ms or `'30m'`. Default 30 minutes. */
  tokenTtl?: Duration | undefined
  /**
   * Where used tokens are remembered: a StateStore or a `redis://` address. Share one between instances
   * behind one URL. Default: the core's state store.
   */
  stateStore?: StateStoreOption | undefined
  /**
   * How values are escaped in the template. Default `html` when the template contains a tag or the sender's
   * `contentType` is `text/html`, else `none`.
   */
  escape?: TemplateEscape | undefined
  /**
   * Deadline of one send, the whole delivery included: ms or `'30s'`. Default 30 seconds. A sender that has not
   * finished by then answers 503 and is told to stop through its `signal` (the SMTP sender closes its
   * connection; its own timeouts only bound idle periods, which a server trickling bytes never reaches).
   */
  sendTimeout?: Duration | undefined
  /**
   * Which `address` values are sent to: others answer 400 (`GATEHOUSE_BAD_REQUEST`) before anything is counted
   * or sent. Default: one bare mail address (`isMailAddress`); a sender that delivers elsewhere (an SMS gateway)
   * gives its own rule.
   */
  isAddress?: ((address: string) => boolean) | undefined
  /**
   * E-mail code sign-in: mail a typed 6-8 digit code (`{{.Code}}` in the template, which then has no
   * `{{.Token}}`) instead of a link; the code is sent back as `POST {address, code}`. `true` for the defaults
   * (6 digits, 10 minutes, 5 wrong tries per code). Off by default.
   */
  code?: boolean | EmailCodeOptions | undefined
}

/** The e-mail provider's options besides `name`, `template` and `sender`: what `addVerifProvider` takes last. */
export type VerifyOptions = Omit<EmailProviderOptions, 'name' | 'template' | 'sender'>

/**
 * Options of the e-mail provider, which was `verifyProvider`.
 * @deprecated Use `EmailProviderOptions`; goes in 1.0.
 */
export type VerifyProviderOptions = EmailProviderOptions

const MAX_USER = 128
const MAX_ADDRESS = 254
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/
const USED_KEY = 'verify:used:'
// Used-token records outlive the token a little, covering clock differences between instances.
const USED_MARGIN_MS = 60_000

/** The sign-in codes when `opts.code` asks for them; the template is checked for the flow it serves. */
function emailCodes (kit: ProviderKit, name: string, label: string, template: string, opts: VerifyOptions, store: StateStore): EmailCodes | undefined {
  const rules = codeRules(label, opts.code)
  checkTemplate(template, label, rules !== undefined)
  if (rules !== undefined && store.increment === undefined) throw new OptionsError(`${label}.code`, 'needs a state store with increment (counting wrong codes)')
  return rules === undefined ? undefined : new EmailCodes(kit, name, rules, store)
}

/** How the template's values are escaped: `opts.escape`, else as the body's real type asks. */
function escapeOf (label: string, template: string, send: { contentType?: unknown }, opts: VerifyOptions): 'html' | 'none' {
  // The body's real type decides too: a template without tags mailed as text/html is still HTML.
  const htmlBody = typeof send.contentType === 'string' && send.contentType.toLowerCase().startsWith('text/html')
  const escape = opts.escape ?? (htmlBody ? 'html' : defaultEscape(template))
  if (escape !== 'html' && escape !== 'none') throw new OptionsError(`${label}.escape`, 'must be "html" or "none"')
  return escape
}

/** Which addresses the provider sends to, and the refusal of any other. */
function addressRule (label: string, opts: VerifyOptions): { isAddress: (address: string) => boolean, notAnAddress: string } {
  const ownRule = optionFunction<(address: string) => boolean>(`${label}.isAddress`, opts.isAddress)
  // The SMTP sender's own refusal, now given for every sender before anything is counted or sent.
  return { isAddress: ownRule ?? isMailAddress, notAnAddress: ownRule === undefined ? 'not a single mail address' : 'not an address this provider sends to' }
}

/**
 * The provider object: what `emailProvider` mounts. Throws OptionsError on bad arguments, naming them under
 * `family` (`email`, or `verify` through the deprecated names).
 */
export function createEmailProvider (kit: ProviderKit, name: string, template: string, sender: Sender | SenderFunc, opts: VerifyOptions, store: StateStore, family = 'email'): AuthProvider {
  const label = `${family}.${name}`
  const codes = emailCodes(kit, name, label, template, opts, store)
  const send = toSender(sender, `${label}.sender`)
  const ttlMs = optionLifetime(`${label}.tokenTtl`, opts.tokenTtl, 30 * 60_000, (text) => { kit.logger.logf('[WARN] %s', text) })
  const sendTimeoutMs = optionDuration(`${label}.sendTimeout`, opts.sendTimeout, 30_000)
  const escape = escapeOf(label, template, send, opts)
  const { isAddress, notAnAddress } = addressRule(label, opts)

  function readAddress (fields: Record<string, unknown>): string {
    const address = queryText(fields, 'address', MAX_ADDRESS, true)!
    if (isAddress(address) !== true) throw new HttpError(400, 'address rejected', notAnAddress, ErrorCodes.BAD_REQUEST)
    return address
  }

  async function sendConfirmation (request: FastifyRequest, query: Record<string, unknown>, reply: FastifyReply, login: LoginRequest): Promise<unknown> {
    const user = queryText(query, 'user', MAX_USER, true)!
    const address = readAddress(query)
    const aud = login.aud
    // Per destination address and per client (rateLimit.sends): a mailbox cannot be flooded from this site.
    await kit.throttle.send(request, address)
    const payload: Record<string, unknown> = { provider: name, user, address }
    if (login.from !== undefined) payload.from = login.from
    if (login.sessionOnly) payload.sessionOnly = true
    // With codes the message carries the code alone: no link is signed.
    const code = codes === undefined ? undefined : await codes.issue(request, address, user, login)
    const token = codes === undefined ? await kit.confirmation.sign(payload, ttlMs, aud) : ''
    const message = renderTemplate(template, { Address: address, User: user, Token: token, Site: aud ?? '', Code: code }, escape)
    try {
      // The span names the provider, never the address or the message (it carries the confirmation link).
      await inSpan('gatehouse.verify.send', { 'gatehouse.provider': name }, async () => { await sendWithin(send, address, message, sendTimeoutMs) }, SpanKinds.CLIENT)
    } catch (err) {
      throw sendFailure(requestLogger(kit.logger, request), name, send.peer ?? 'sender', err)
    }
    requestLogger(kit.logger, request).logf('[INFO] verified provider %s: confirmation sent for user %s', name, user)
    const audit = kit.audit
    if (audit.on) audit.emit(request, 'confirmation.sent', { reason: codes === undefined ? 'sent' : 'code_sent', provider: name, aud, to: maskAddress(address) })
    if (codes !== undefined) return reply.send({ status: 'sent', user, address, ...codes.shape })
    return reply.send({ status: 'sent', user, address })
  }

  async function confirm (request: FastifyRequest, reply: FastifyReply, query: Record<string, unknown>, login: LoginRequest): Promise<unknown> {
    const token = query.token
    if (typeof token !== 'string' || token.length > 4096 || !JWT_SHAPE.test(token)) throw new HttpError(400, 'bad request', 'malformed confirmation token')
    // The flag may also be given when the link is opened (the mount read it: a malformed one was a 400 that
    // left the token usable).
    const askedNow = login.sessionOnly
    const claims = await kit.confirmation.verify(token)
    const { user, address, from, sessionOnly } = confirmFields(claims, name)
    const key = USED_KEY + claims.jti
    const keepMs = Math.max(1, claims.exp * 1000 - Date.now()) + USED_MARGIN_MS
    if (!(await store.setIfAbsent(key, '1', keepMs, { client: kit.throttle.clientKey(request) }))) throw new HttpError(401, 'unauthorized', 'confirmation token already used', ErrorCodes.ALREADY_USED)
    try {
      return await kit.completeLogin(request, reply, {
        user: { name: user, id: userId(name, address) },
        aud: claims.aud[0],
        from,
        // Asked for when the link was sent, or when it is opened.
        sessionOnly: sessionOnly || askedNow
      })
    } catch (err) {
      // No session was issued: give the token back rather than burn it on our own failure.
      await store.delete(key).catch(() => {})
      throw err
    }
  }

  return {
    name,
    async login (request, reply, login) {
      // A confirmation may come back as a POST from the page below; sending is a GET (or a POST) as before.
      const fields = requestFields(request)
      if (codes !== undefined && fields.code !== undefined) return await codes.signIn(request, reply, readAddress(fields), fields.code)
      if (codes === undefined && fields.token !== undefined) return await confirm(request, reply, fields, login)
      return await sendConfirmation(request, fields, reply, login)
    }
  }
}

/**
 * A confirmation link opened from another site (a webmail's link is a cross-site navigation) is not refused:
 * it gets a page whose button sends the token again as a same-origin POST, so the user's own click signs in
 * and another site cannot do it for them. Anything else cross-site is refused.
 */
function continueFromMail (kit: ProviderKit, name: string): MountOptions['crossSiteLogin'] {
  return (request, reply) => {
    const query = (request.query ?? {}) as Record<string, unknown>
    if (request.method !== 'GET' || typeof query.token !== 'string') return undefined
    const fields: Record<string, string> = { token: query.token }
    for (const flag of ['sess', 'session']) if (typeof query[flag] === 'string') fields[flag] = query[flag] as string
    const page = continuePage(`${kit.authPrefix}/${name}/login`, fields, { title: 'Sign in', button: 'Continue signing in' })
    return reply.headers(page.headers).send(page.body)
  }
}

function confirmFields (claims: Claims, name: string): { user: string; address: string; from: string | undefined; sessionOnly: boolean } {
  const { provider, user, address, from, sessionOnly } = claims
  // A token of another verified provider (same secret) must not sign in here.
  if (provider !== name) throw new HttpError(401, 'unauthorized', 'confirmation token of another provider', ErrorCodes.TOKEN_INVALID)
  if (typeof user !== 'string' || typeof address !== 'string') throw new HttpError(401, 'unauthorized', 'malformed confirmation token', ErrorCodes.TOKEN_INVALID)
  return { user, address, from: typeof from === 'string' ? from : undefined, sessionOnly: sessionOnly === true }
}

/**
 * Sends under a deadline: a timer of its own (held until it fires, whatever the garbage collector does) that
 * fails the send with an `unavailable` MailSendError and aborts the sender's signal, so the sender can close its
 * connection rather than hold it after we have answered.
 */
async function sendWithin (send: Sender, address: string, text: string, ms: number): Promise<void> {
  const deadline = new Deadline(ms)
  const expired = new Promise<never>((_resolve, reject) => {
    deadline.signal.addEventListener('abort', () => reject(new MailSendError('unavailable', `no answer within ${ms} ms`)), { once: true })
  })
  expired.catch(() => {})
  try {
    // The sender may throw synchronously or return a plain value: both become a promise here.
    await Promise.race([Promise.resolve().then(() => send.send(address, text, { signal: deadline.signal })), expired])
  } finally {
    deadline.clear()
  }
}

/**
 * The client's answer to a failed send, logged once with its cause. A refused address (400) shows the
 * sender's message (the SMTP sender's is fixed text; a host sender's is its own); a 5xx names only the kind of
 * peer that failed (`mail server unavailable`), never its address or its reply (CWE-209).
 */
function sendFailure (log: Logger, name: string, peer: string, err: unknown): HttpError {
  if (err instanceof HttpError) return err
  const cause = (err as { cause?: unknown })?.cause
  const message = err instanceof Error ? err.message : String(err)
  const why = cause instanceof Error && !message.includes(cause.message) ? `${message} (${cause.message})` : message
  const kind = err instanceof MailSendError ? err.kind : 'failed'
  log.logf('[WARN] verified provider %s: send failed (%s): %s', name, kind, why)
  if (kind === 'rejected') return new HttpError(400, 'address rejected', (err as MailSendError).message)
  if (kind === 'unavailable') return new HttpError(503, `${peer} unavailable`, 'the confirmation message could not be sent now; try again later')
  return new HttpError(502, `${peer} failed`, 'the confirmation message could not be sent')
}

/** Mounts one e-mail provider; its options are named under `family` (`email`, or `verify` for the old names). */
async function email (fastify: FastifyInstance, opts: EmailProviderOptions, family: string): Promise<void> {
  const o = checkKeys(opts, ['name', 'template', 'sender', 'tokenTtl', 'stateStore', 'escape', 'sendTimeout', 'isAddress', 'code'], family) as unknown as EmailProviderOptions
  const name = optionName(`${family}.name`, o.name)
  refuseReservedName(`${family}.name`, name)
  const { template, sender, ...tuning } = o
  const kit = providerKit(fastify, `${family}.${name}`)
  const store = await kit.openStateStore(tuning.stateStore, `${family}.${name}.stateStore`)
  // A confirmation (`token`) carries the audience of the login it confirms.
  // A code (`code`) likewise: the audience was kept with the code when it was sent.
  const confirming = (request: FastifyRequest): boolean => {
    const fields = requestFields(request)
    return fields.token !== undefined || (tuning.code !== undefined && tuning.code !== false && fields.code !== undefined)
  }
  kit.mount(createEmailProvider(kit, name, template, sender, tuning, store, family), { crossSiteLogin: continueFromMail(kit, name), continuesLogin: confirming })
}

/** E-mail (verified, confirmation-token) login as a plugin (`gatehouse-email`). */
export const emailProvider = fp(async (fastify: FastifyInstance, opts: EmailProviderOptions) => { await email(fastify, opts, 'email') }, { name: 'gatehouse-email', fastify: '5.x' })

/**
 * The e-mail provider under its first name (its options named `verify.<name>.…` in errors, as before).
 * @deprecated Use `emailProvider` (`verify` also means token verification); goes in 1.0.
 */
export const verifyProvider = fp(async (fastify: FastifyInstance, opts: EmailProviderOptions) => {
  warnDeprecated('verifyProvider')
  await email(fastify, opts, 'verify')
}, { name: 'gatehouse-verify', fastify: '5.x' })

/**
 * The e-mail provider with its options named `verify.<name>.…`, warning nothing: what go-pkgz/auth's
 * `addVerifProvider` registers (and a deprecated `{ kind: 'verify' }` entry, which warns itself).
 */
export const verifyFamilyProvider = fp(async (fastify: FastifyInstance, opts: EmailProviderOptions) => {
  await email(fastify, opts, 'verify')
}, { name: 'gatehouse-verify', fastify: '5.x' })
