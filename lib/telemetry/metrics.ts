/**
 * The package's metrics, through the registered meter: counters fed by the audit events (`gatehouse:audit`,
 * subscribed only once a meter provider is there) and histograms timed by the login and state-store wrappers.
 * Labels are provider names, outcomes and the events' stable reason codes: never a user, an address or a value.
 */
import { subscribe } from 'node:diagnostics_channel'
import type { Counter, Histogram, Meter } from '@opentelemetry/api'
import { AUDIT_CHANNEL, type AuditEvent } from '../audit/events.js'
import { telemetry } from './api.js'

/** The instruments, once a meter is registered. */
export interface Instruments {
  readonly meter: Meter
  /** `gatehouse.logins`: ended logins by provider, outcome and reason. */
  readonly logins: Counter
  /** `gatehouse.refusals`: refused sessions and cross-site requests by event and reason. */
  readonly refusals: Counter
  /** `gatehouse.lockouts`: lockouts started, by scope (account or ip). */
  readonly lockouts: Counter
  /** `gatehouse.rate_limited`: 429 answers by limit. */
  readonly rateLimited: Counter
  /** `gatehouse.state_store.unavailable`: 503 answers because the state store could not answer. */
  readonly storeUnavailable: Counter
  /** `gatehouse.login.duration` (s): a login request's handling, by provider, step and outcome. */
  readonly loginDuration: Histogram
  /** `gatehouse.state_store.duration` (s): one state-store call, by operation. */
  readonly stateStoreDuration: Histogram
}

/** The process's instruments (undefined until a meter provider is found at a registration). */
export const instruments: { current: Instruments | undefined } = { current: undefined }

/**
 * Creates the instruments and subscribes to the audit channel when telemetry found a meter and had not yet;
 * a no-op otherwise. Called at each root plugin's registration, after `enableTelemetry`.
 */
export function startMetrics (): void {
  const meter = telemetry.state?.meter
  if (meter === undefined || instruments.current?.meter === meter) return
  const first = instruments.current === undefined
  instruments.current = createInstruments(meter)
  if (first) subscribe(AUDIT_CHANNEL, (message) => { countEvent(message as AuditEvent) })
}

function createInstruments (meter: Meter): Instruments {
  const seconds = { unit: 's', advice: { explicitBucketBoundaries: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] } }
  return {
    meter,
    logins: meter.createCounter('gatehouse.logins', { description: 'Logins that ended, by provider, outcome and reason' }),
    refusals: meter.createCounter('gatehouse.refusals', { description: 'Refused sessions and cross-site requests, by event and reason' }),
    lockouts: meter.createCounter('gatehouse.lockouts', { description: 'Lockouts started, by scope' }),
    rateLimited: meter.createCounter('gatehouse.rate_limited', { description: 'Requests refused 429 by a rate limit, by limit' }),
    storeUnavailable: meter.createCounter('gatehouse.state_store.unavailable', { description: 'Requests answered 503 because the state store could not answer' }),
    loginDuration: meter.createHistogram('gatehouse.login.duration', { description: 'Handling of one login request', ...seconds }),
    stateStoreDuration: meter.createHistogram('gatehouse.state_store.duration', { description: 'One state-store call', ...seconds })
  }
}

/** One audit event into the counters. */
export function countEvent (e: AuditEvent): void {
  const m = instruments.current
  if (m === undefined) return
  const reason = e.reason
  switch (e.type) {
    case 'login.succeeded':
    case 'login.failed':
    case 'login.second_factor_required':
      m.logins.add(1, { 'gatehouse.provider': e.provider ?? 'none', 'gatehouse.outcome': e.outcome, 'gatehouse.reason': reason })
      break
    case 'session.refused':
    case 'cross_site.refused':
      m.refusals.add(1, { 'gatehouse.event': e.type, 'gatehouse.reason': reason })
      break
    case 'lockout.started':
      m.lockouts.add(1, { 'gatehouse.lockout.scope': e.scope })
      break
    case 'rate_limited':
      m.rateLimited.add(1, { 'gatehouse.reason': reason })
      break
    case 'state_store.unavailable':
      m.storeUnavailable.add(1, { 'gatehouse.provider': e.provider ?? 'none' })
      break
  }
}
