/** The cases of the soak (bench/soak.ts), shared by the driver and its server process (bench/soak-server.ts). */
import type { AuthOptions } from '../auth.js'
import type { MemoryStateStoreOptions } from '../stores/state/index.js'

/** A soak case: the session options and the memory store's bounds it runs with. */
export interface SoakCase { label: string; session: AuthOptions['session']; store: MemoryStateStoreOptions }

export const SOAK_CASES: Record<string, SoakCase> = {
  'ending-sessions': {
    label: 'sessions of 30 s (revocations expire with them), store at its defaults',
    session: { maxAge: '30s', tokenDuration: '10s' },
    store: {}
  },
  'bounded-store': {
    label: 'default sessions (31 days: revocations outlive the soak), store bounded at 2 MiB',
    session: {},
    store: { maxBytes: 2 * 1024 * 1024 }
  }
}

/**
 * What a sample reports: bytes of heap in use after collection, resident set, the store's entries and estimated
 * bytes, and the sessions in the verified-session cache (up to `session.cacheSize`, 10 000 by default).
 */
export interface SoakSample { heapUsed: number; rss: number; entries: number; storeBytes: number; cached: number }

export const SOAK_PASSWORD = 'soak-password'
