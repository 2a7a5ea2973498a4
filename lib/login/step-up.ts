/**
 * When a session last confirmed a second factor (a TOTP code, a recovery code, a passkey), kept in the state store
 * so every instance sees it: what `fastify.auth.stepUp()` checks before routes that need a fresh factor (step-up).
 *
 * Kept per session (its `jti`), never per user (ASVS 5.0 7.5.3): a code typed on one device opens nothing for the
 * user's other sessions, a stolen copy of an old session among them. A login completed with a second factor
 * records it for the session it creates.
 */
import type { Duration } from '../duration.js'
import type { StateStore } from '../state-store.js'

/** Options of `fastify.auth.stepUp()`. */
export interface StepUpOptions {
  /** How recently the factor must have been confirmed in this session: ms or like `'5m'` (at most 24 hours). */
  within: Duration
  /**
   * The factor required (`totp`, `recovery`, `passkey`, or `idp`: an OpenID provider's multi-factor sign-in where its
   * `mfa` option takes it); default any second factor.
   */
  factor?: string | undefined
}

/**
 * The options of `fastify.auth.recent()`, which is `stepUp()` now.
 * @deprecated Use `StepUpOptions` (`recent` is `stepUp`); goes in 1.0.
 */
export type RecentOptions = StepUpOptions

/** How long a confirmation is remembered at most; `stepUp({ within })` longer than this sees none. */
export const STEP_UP_KEEP_MS = 24 * 3600_000

const keyOf = (sessionId: string, factor: string): string => `stepup:${factor}:${sessionId}`

/** Records that session `sessionId` (a `jti`) confirmed `factor` now (and so "any" factor). */
export async function recordFactor (store: StateStore, sessionId: string, factor: string, now = Date.now()): Promise<void> {
  for (const f of new Set([factor, 'any'])) await store.set(keyOf(sessionId, f), String(now), STEP_UP_KEEP_MS)
}

/** When session `sessionId` last confirmed `factor` (any factor when undefined), ms since the epoch; undefined when never. */
export async function lastFactorAt (store: StateStore, sessionId: string, factor = 'any'): Promise<number | undefined> {
  const v = await store.get(keyOf(sessionId, factor))
  const at = v === undefined ? NaN : Number(v)
  return Number.isFinite(at) ? at : undefined
}
