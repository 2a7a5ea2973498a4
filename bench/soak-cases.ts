/** The cases of the soak (bench/soak.ts), shared by the driver and its server process (bench/soak-server.ts). */
import type { AuthOptions } from '../auth.js'
import type { MemoryStateStoreOptions } from '../stores/state/index.js'

/**
 * A soak case: the session options and the memory store's bounds it runs with; or (`demo`) the demo application as
 * it starts (its defaults, avatars kept in an lmdb file), loaded with the mix of bench/soak-mix.ts.
 */
export interface SoakCase { label: string; session: AuthOptions['session']; store: MemoryStateStoreOptions; demo?: boolean }

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
  },
  'demo-mix': {
    label: 'the demo at its defaults (toolkit, avatars in lmdb, memory state store): password and dev OAuth2 sign-ins from distinct addresses, private calls, sign-outs',
    session: {},
    store: {},
    demo: true
  }
}

/**
 * What a sample reports: bytes of heap in use after collection, resident set, the store's entries and estimated
 * bytes, and the sessions in the verified-session cache (up to `session.cacheSize`, 10 000 by default).
 */
export interface SoakSample { heapUsed: number; rss: number; entries: number; storeBytes: number; cached: number }

export const SOAK_PASSWORD = 'soak-password'
