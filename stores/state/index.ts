export { type StateStore, type WriteOptions, type IncrementOptions, type Counter, type StoredEntry, StateStoreError } from '../../lib/state-store.js'
export { MemoryStateStore, type MemoryStateStoreOptions } from './memory.js'
export { RedisStateStore, type RedisStateStoreOptions } from './redis.js'
export { openStateStore, isStateStore, type OpenedStateStore, type StateStoreOption } from './resolve.js'
