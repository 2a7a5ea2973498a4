/**
 * Test helper: the in-memory state store with a network's worth of latency, for races. The memory store answers
 * within the same turn of the event loop, so two requests injected at once run one after the other and never
 * meet; behind a real store (Redis) their reads and writes interleave. Here every read and write waits for the
 * next turn (`setImmediate`) first, so that two requests started together read before either writes, as they
 * would on a network store: a missing atomic step (a `take` whose result is ignored) then shows.
 */
import { MemoryStateStore } from '../../stores/state/memory.js'
import type { StateStore } from '../../lib/state-store.js'

const turn = async (): Promise<void> => await new Promise((resolve) => { setImmediate(resolve) })

export function latencyStore (): StateStore {
  const inner = new MemoryStateStore()
  return {
    async get (key) { await turn(); return await inner.get(key) },
    async set (key, value, ttlMs, opts) { await turn(); await inner.set(key, value, ttlMs, opts) },
    async setIfAbsent (key, value, ttlMs, opts) { await turn(); return await inner.setIfAbsent(key, value, ttlMs, opts) },
    async take (key) { await turn(); return await inner.take(key) },
    async delete (key) { await turn(); return await inner.delete(key) },
    async increment (key, ttlMs, opts) { await turn(); return await inner.increment(key, ttlMs, opts) },
    async close () { await inner.close() }
  }
}
