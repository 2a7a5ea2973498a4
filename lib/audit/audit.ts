/**
 * Publishing audit events (events.ts) of one root plugin: on the `gatehouse:audit` diagnostics channel, shared
 * by every instance in the process, and to the instance's own `onEvent` option.
 *
 * Free when unused: every place that emits asks `audit.on` first and builds nothing (not even the fields object)
 * when nobody listens; `on` is one property read and `channel.hasSubscribers`.
 */
import diagnostics from 'node:diagnostics_channel'
import type { FastifyRequest } from 'fastify'
import type { Logger } from '../logging/logger.js'
import { AUDIT_CHANNEL, type AuditBase, type AuditEvent, type AuditEventOf, type AuditEventType, type AuditListener, type AuditOutcome } from './events.js'

/** The channel every root plugin publishes on (also what `diagnostics_channel.channel('gatehouse:audit')` returns). */
export const auditChannel = diagnostics.channel(AUDIT_CHANNEL)

/** What the emitting place gives: the event's own fields, its reason, and the common fields it knows. */
export type AuditFields<T extends AuditEventType> = Omit<AuditEventOf<T>, keyof AuditBase | 'type'> & {
  reason: string
  outcome?: AuditOutcome | undefined
  provider?: string | undefined
  userId?: string | undefined
  aud?: string | undefined
}

/** The outcome of each type unless the emitting place says otherwise. */
const OUTCOMES: Record<AuditEventType, AuditOutcome> = {
  'login.succeeded': 'success',
  'login.failed': 'failure',
  'login.second_factor_required': 'pending',
  logout: 'success',
  'session.refreshed': 'success',
  'session.revoked': 'success',
  'session.refused': 'failure',
  'lockout.started': 'failure',
  rate_limited: 'failure',
  'cross_site.refused': 'failure',
  'confirmation.sent': 'success',
  'passkey.added': 'success',
  'passkey.removed': 'success',
  'second_factor.added': 'success',
  'second_factor.removed': 'success',
  'recovery_codes.created': 'success',
  'step_up.succeeded': 'success',
  'step_up.refused': 'failure',
  'access.denied': 'failure',
  'state_store.unavailable': 'failure',
  'key.rotated': 'success',
  'password.breached': 'failure',
  'trusted_device.added': 'success',
  'trusted_device.used': 'success',
  'trusted_device.refused': 'failure',
  'trusted_device.removed': 'success',
  'session.migrated': 'success',
  'token.issued': 'success',
  'token.refreshed': 'success',
  'token.reuse_detected': 'failure',
  'token.revoked': 'success',
  'device.approved': 'success',
  'device.denied': 'failure'
}

export class Audit {
  /** Events built so far (tests check that none is built while nobody listens). */
  built = 0
  private readonly reported = new WeakSet<Error>()

  constructor (
    private readonly listener: AuditListener | undefined,
    private readonly logger: Logger,
    private readonly clientKey: (request: FastifyRequest) => string
  ) {}

  /** Whether anybody listens: ask before building an event's fields. */
  get on (): boolean {
    return this.listener !== undefined || auditChannel.hasSubscribers
  }

  /** Builds the event and hands it to `onEvent` and the channel. Call only when `on`. */
  emit<T extends AuditEventType> (request: FastifyRequest | undefined, type: T, fields: AuditFields<T>): void {
    if (!this.on) return
    this.built++
    const event = Object.freeze({
      type,
      at: Date.now(),
      requestId: request?.id,
      ip: request === undefined ? undefined : this.clientKey(request),
      provider: undefined,
      userId: undefined,
      aud: undefined,
      outcome: OUTCOMES[type],
      ...fields
    }) as unknown as AuditEvent
    this.tell(event)
    if (auditChannel.hasSubscribers) auditChannel.publish(event)
  }

  /**
   * `state_store.unavailable` for a store failure answered 503, once per error however many places see it on
   * its way out (the session reader, then the routes' error handler).
   */
  storeDown (request: FastifyRequest | undefined, err: Error, provider?: string): void {
    if (!this.on || this.reported.has(err)) return
    this.reported.add(err)
    this.emit(request, 'state_store.unavailable', { reason: 'unavailable', provider })
  }

  /** `onEvent`, whose failure is logged and never reaches the request. */
  private tell (event: AuditEvent): void {
    const listener = this.listener
    if (listener === undefined) return
    const failed = (err: unknown): void => {
      this.logger.logf('[WARN] onEvent failed on %s: %s', event.type, err instanceof Error ? err.message : String(err))
    }
    try {
      const r = listener(event)
      if (r !== undefined && r !== null && typeof (r as Promise<void>).then === 'function') (r as Promise<void>).then(undefined, failed)
    } catch (err) {
      failed(err)
    }
  }
}

/** An audit that never emits, whoever listens (parts built on their own, outside a root plugin). */
class SilentAudit extends Audit {
  override get on (): boolean { return false }
}
export const silentAudit: Audit = new SilentAudit(undefined, { logf () {} }, () => '')

/**
 * An e-mail address (or any destination) masked for an event: its first character and its domain
 * (`a…@example.com`); without an `@`, the first character only.
 */
export function maskAddress (address: string): string {
  const at = address.lastIndexOf('@')
  const first = address.trim().slice(0, 1)
  return at < 0 ? `${first}…` : `${first}…@${address.slice(at + 1)}`
}
