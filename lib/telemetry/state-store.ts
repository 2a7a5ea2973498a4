/**
 * The state store as telemetry sees it: every call (`get`, `take`, `setIfAbsent`, …) in a span
 * `gatehouse.state_store.<operation>` and timed into the `gatehouse.state_store.duration` histogram. Keys and
 * values are never attributes (a key can hold an OAuth2 state or a confirmation token's id). Only stores opened
 * while telemetry is on are wrapped; without it the store is used as it is.
 */
import type { StateStore } from '../state-store.js'
import { telemetry } from './api.js'
import { errorType, inSpan, SpanKinds } from './spans.js'
import { instruments } from './metrics.js'

/** The calls a wrapped store traces; `close` and `subscribe` (long-lived) are passed through. */
const TRACED = ['setIfAbsent', 'set', 'increment', 'get', 'getMany', 'take', 'delete', 'exchange', 'publish'] as const

/** Called on the store itself: a class with `#private` fields needs `this` to be the store. */
const PASSED = ['close', 'subscribe'] as const

/** One wrapper per store, so that cores sharing a store object share what is keyed by it (the session index). */
const wrapped = new WeakMap<StateStore, StateStore>()

/**
 * `store` with its calls traced and timed, or `store` itself when telemetry is off. The wrapper inherits from
 * the store (`instanceof` and the store's own properties still answer as the store's).
 */
export function tracedStateStore (store: StateStore): StateStore {
  if (telemetry.state === undefined) return store
  let traced = wrapped.get(store)
  if (traced !== undefined) return traced
  traced = Object.create(store) as StateStore
  for (const operation of [...TRACED, ...PASSED]) {
    const method = store[operation] as ((...args: unknown[]) => Promise<unknown>) | undefined
    if (typeof method !== 'function') continue
    const value = (PASSED as readonly string[]).includes(operation)
      ? method.bind(store)
      : async (...args: unknown[]) => await timedCall(operation, async () => await method.apply(store, args))
    Object.defineProperty(traced, operation, { value })
  }
  wrapped.set(store, traced)
  return traced
}

async function timedCall<T> (operation: string, call: () => Promise<T>): Promise<T> {
  const started = performance.now()
  let failure: string | undefined
  try {
    return await inSpan(`gatehouse.state_store.${operation}`, { 'db.operation.name': operation }, call, SpanKinds.CLIENT)
  } catch (err) {
    failure = errorType(err)
    throw err
  } finally {
    const attributes = failure === undefined ? { 'db.operation.name': operation } : { 'db.operation.name': operation, 'error.type': failure }
    instruments.current?.stateStoreDuration.record((performance.now() - started) / 1000, attributes)
  }
}
