/**
 * The audit of a presented session the session reader refused: which check said no, as the stable reason of a
 * `session.refused` event (or `state_store.unavailable` when the store could not answer). Called only on the way
 * out of a refusal, never on a served request.
 */
import type { FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError } from '../../../lib/errors.js'
import type { Audit } from '../../../lib/audit/audit.js'
import type { SessionRefusedEvent } from '../../../lib/audit/events.js'
import { StateStoreError } from '../../../lib/state-store.js'
import { audOf } from '../base/claims.js'
import { VALIDATOR_REFUSAL } from './post-check.js'
import { FROM_BEARER, FROM_COOKIE, FROM_EXTRACTOR, FROM_HEADER, FROM_QUERY, type TokenSource } from './token-reader.js'
import { UNKNOWN_KEY } from '../keys/verify.js'
import type { Claims } from '../base/types.js'

const REASONS: Record<string, string> = {
  [ErrorCodes.XSRF]: 'xsrf',
  [ErrorCodes.FORBIDDEN]: 'audience',
  [ErrorCodes.TOKEN_EXPIRED]: 'expired',
  [ErrorCodes.SESSION_EXPIRED]: 'session_expired',
  [ErrorCodes.SESSION_REVOKED]: 'revoked'
}

/** The reason of a refusal: the check's, or `validator`, `unknown_key`, else `invalid` (signature, claims, form). */
export function refusalReason (err: HttpError): string {
  if (err.details === VALIDATOR_REFUSAL) return 'validator'
  if (keyRemoved(err)) return 'unknown_key'
  return REASONS[err.code] ?? 'invalid'
}

/** True for the refusal of a token whose key is in no ring. */
export function keyRemoved (err: unknown): boolean {
  return err instanceof HttpError && err.details === UNKNOWN_KEY
}

const SOURCE_NAMES: Record<TokenSource, SessionRefusedEvent['source']> = {
  [FROM_QUERY]: 'query', [FROM_HEADER]: 'header', [FROM_COOKIE]: 'cookie', [FROM_BEARER]: 'bearer', [FROM_EXTRACTOR]: 'extract'
}

/** Where a token came from, as events name it. */
export function sourceName (source: TokenSource): SessionRefusedEvent['source'] {
  return SOURCE_NAMES[source]
}

/** The user id verified claims carry, when they carry one. */
export function userIdOf (claims: Claims | undefined): string | undefined {
  const id = claims?.user?.id
  return typeof id === 'string' ? id : undefined
}

/**
 * Emits what a refusal tells (when anybody listens) and gives the error back to be thrown. `claims` are the
 * verified claims when the refusal came after verification (else the token's user and audience are not told).
 */
export function refused (audit: Audit, err: unknown, request: FastifyRequest, source: TokenSource, claims?: Claims): unknown {
  if (!(err instanceof HttpError) || !audit.on) return err
  if (err instanceof StateStoreError) {
    audit.storeDown(request, err)
    return err
  }
  audit.emit(request, 'session.refused', {
    reason: refusalReason(err),
    source: sourceName(source),
    userId: userIdOf(claims),
    aud: claims === undefined ? undefined : audOf(claims)
  })
  return err
}
