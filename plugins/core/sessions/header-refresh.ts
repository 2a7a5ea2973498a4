/**
 * Header refresh (`tokenSources.headerRefresh`, go-pkgz's `SendJWTHeader`) spends the token it refreshes: an
 * expired header token is refreshed once, on whichever instance sees it first, and is refused from then on, so a
 * copy of it cannot be turned into fresh tokens again and again. The mark lives in the state store for as long as
 * the token could still be refreshed (the session's lifetime, or its idle timeout from the token's `iat`).
 */
import { createHash } from 'node:crypto'
import type { StateStore } from '../../../lib/state-store.js'
import type { SessionLifetime } from './lifetime.js'
import type { Claims } from '../base/types.js'

const SPENT = 'header-refreshed:'

/** Marks an expired header token spent; resolves false when it was already. */
export type SpendToken = (token: string, claims: Claims, now: number) => Promise<boolean>

export function headerTokenSpender (store: StateStore, lifetime: SessionLifetime): SpendToken {
  return async (token, claims, now) => {
    let until = (claims.auth_time! + lifetime.maxAgeSeconds) * 1000
    if (lifetime.idleTimeoutMs > 0) until = Math.min(until, claims.iat * 1000 + lifetime.idleTimeoutMs)
    const key = SPENT + createHash('sha256').update(token).digest('base64url')
    return await store.setIfAbsent(key, '1', Math.max(1000, Math.ceil(until - now)))
  }
}
