/**
 * When a user last confirmed a second factor (a TOTP code, a recovery code), kept in the state store so every
 * instance sees it: what `fastify.auth.recent()` checks before routes that need a fresh factor (step-up).
 * Kept per user: a confirmation counts for that user's sessions on every device for `within`.
 */
import type { Duration } from './duration.js'
import type { StateStore } from './state-store/types.js'

/** Options of `fastify.auth.recent()`. */
export interface RecentOptions {
  /** How recently the factor must have been confirmed: ms or like `'5m'` (at most 24 hours). */
  within: Duration
  /** The factor required (`totp`, `recovery`); default any second factor. */
  factor?: string | undefined
}

/** How long a confirmation is remembered at most; `recent({ within })` longer than this sees none. */
export const STEP_UP_KEEP_MS = 24 * 3600_000

const keyOf = (userId: string, factor: string): string => `stepup:${factor}:${userId}`

/** Records that `userId` confirmed `factor` now (and so "any" factor). */
export async function recordFactor (store: StateStore, userId: string, factor: string, now = Date.now()): Promise<void> {
  for (const f of new Set([factor, 'any'])) await store.set(keyOf(userId, f), String(now), STEP_UP_KEEP_MS)
}

/** When `userId` last confirmed `factor` (any factor when undefined), ms since the epoch; undefined when never. */
export async function lastFactorAt (store: StateStore, userId: string, factor = 'any'): Promise<number | undefined> {
  const v = await store.get(keyOf(userId, factor))
  const at = v === undefined ? NaN : Number(v)
  return Number.isFinite(at) ? at : undefined
}
