/**
 * The audit events (`gatehouse:audit`): one typed record per security decision the package makes, for a host to
 * ship to its SIEM. The catalogue with every field and reason code is docs/reference/events.md.
 *
 * What an event never carries: a token, a password, a secret, a one-time value (OAuth2 code or state, confirmation
 * link, TOTP or recovery code), the session id (it doubles as the XSRF value) or a full e-mail address (masked by
 * `maskAddress`). The whole test suite checks every event it causes for these (test/helpers/secret-check.ts).
 */

/** The name of the `node:diagnostics_channel` channel the events are published on. */
export const AUDIT_CHANNEL = 'gatehouse:audit'

/** Whether the decision let the request through (`success`), refused it (`failure`) or is waiting on the user (`pending`). */
export type AuditOutcome = 'success' | 'failure' | 'pending'

/** The fields every event carries. */
export interface AuditBase {
  /** `request.id` of the request the decision was made in; undefined outside a request (`revokeUser` from a job). */
  readonly requestId: string | undefined
  /** When the decision was made (ms since the epoch). */
  readonly at: number
  /** The provider the request was for (its mounted name), when the decision belongs to one. */
  readonly provider: string | undefined
  readonly outcome: AuditOutcome
  /** A stable, snake_case code saying why (the catalogue lists them per event). */
  readonly reason: string
  /** The user id the session carries (providers hash it: `github_3f1c…`), when known. */
  readonly userId: string | undefined
  /** The client as throttling sees it (`rateLimit.clientKey`: the address, IPv6 by /64). */
  readonly ip: string | undefined
  /** The session's audience (`site`), when known. */
  readonly aud: string | undefined
}

/** A login ended with a session. */
export interface LoginSucceededEvent extends AuditBase {
  readonly type: 'login.succeeded'
  /** True when the cookies are session-only (`session=1`). */
  readonly sessionOnly: boolean
}
/** A login request or callback was refused (the reason says why: `bad_credentials`, `locked`, `throttled`, …). */
export interface LoginFailedEvent extends AuditBase {
  readonly type: 'login.failed'
  /** The HTTP status the client got. */
  readonly status: number
}
/** The first factor passed; the login waits for a second one (passkey or authenticator app). */
export interface LoginSecondFactorRequiredEvent extends AuditBase { readonly type: 'login.second_factor_required' }
/** A user signed out through a `/logout` route. */
export interface LogoutEvent extends AuditBase {
  readonly type: 'logout'
  /** True when every session of the user was ended (`?all=1`). */
  readonly everywhere: boolean
}
/** An expired cookie session got a new token (same session). */
export interface SessionRefreshedEvent extends AuditBase { readonly type: 'session.refreshed' }
/**
 * A session token of a go-pkgz/auth service was exchanged for a session of this package (`migration.goPkgz`;
 * reason `go_pkgz`).
 */
export interface SessionMigratedEvent extends AuditBase {
  readonly type: 'session.migrated'
  /** True when the cookies are session-only (the Go token's `sess_only`). */
  readonly sessionOnly: boolean
  /** Where the Go token came from. */
  readonly source: 'header' | 'cookie'
}
/** Who ended a session (or all of a user's): the `reason` repeats it. */
export type RevokedBy = 'logout' | 'revokeSession' | 'revokeUser' | 'key_removed' | 'sign_in'
/** A session, or every session of a user, was ended server-side. */
export interface SessionRevokedEvent extends AuditBase {
  readonly type: 'session.revoked'
  readonly by: RevokedBy
  /** One session, or every session of the user. */
  readonly scope: 'session' | 'user'
}
/** A presented session was refused (`expired`, `session_expired`, `revoked`, `xsrf`, `audience`, `validator`, `invalid`). */
export interface SessionRefusedEvent extends AuditBase {
  readonly type: 'session.refused'
  /** Where the refused token came from. */
  readonly source: 'query' | 'header' | 'cookie' | 'bearer' | 'extract'
}
/** Failed credential checks locked an account name or a client address. */
export interface LockoutStartedEvent extends AuditBase {
  readonly type: 'lockout.started'
  /** What is locked: the account name (any client) or the client address (any account). */
  readonly scope: 'account' | 'ip'
  /** How long the lock lasts (ms). */
  readonly durationMs: number
}
/** A request was refused 429 by a rate limit (the `reason` names the limit). */
export interface RateLimitedEvent extends AuditBase {
  readonly type: 'rate_limited'
  /** When a new attempt may succeed (ms from now). */
  readonly retryAfterMs: number
}
/** A cross-site request to a login, confirm or logout route was refused. */
export interface CrossSiteRefusedEvent extends AuditBase {
  readonly type: 'cross_site.refused'
  /** The route kind refused. */
  readonly route: 'login' | 'logout'
  /** The request's `Origin` header, when sent. */
  readonly origin: string | undefined
  /** The request's `Sec-Fetch-Site` header, when sent. */
  readonly fetchSite: string | undefined
}
/** A confirmation message (verified login) was handed to the sender. */
export interface ConfirmationSentEvent extends AuditBase {
  readonly type: 'confirmation.sent'
  /** The destination, masked (`a…@example.com`). */
  readonly to: string
}
/** A passkey was registered for the signed-in user. */
export interface PasskeyAddedEvent extends AuditBase { readonly type: 'passkey.added' }
/** A passkey of the signed-in user was removed. */
export interface PasskeyRemovedEvent extends AuditBase { readonly type: 'passkey.removed' }
/** A signed-in user added a second factor (reason `totp`: an authenticator app, confirmed by its first code). */
export interface SecondFactorAddedEvent extends AuditBase { readonly type: 'second_factor.added' }
/** A signed-in user removed a second factor (reason `totp`: the authenticator app and its recovery codes). */
export interface SecondFactorRemovedEvent extends AuditBase { readonly type: 'second_factor.removed' }
/** New recovery codes were made for the signed-in user (reason `enrolment` or `replaced`); the codes are not told. */
export interface RecoveryCodesCreatedEvent extends AuditBase {
  readonly type: 'recovery_codes.created'
  /** How many codes were made. */
  readonly count: number
}
/** A session confirmed a second factor for step-up (reason: the factor, `totp`, `recovery_code` or `passkey`). */
export interface StepUpSucceededEvent extends AuditBase { readonly type: 'step_up.succeeded' }
/**
 * A step-up was refused: a wrong factor (reason `totp`, `recovery_code`, `passkey`) or a route behind
 * `recent()` without a recent confirmation in this session (`not_recent`).
 */
export interface StepUpRefusedEvent extends AuditBase { readonly type: 'step_up.refused' }
/**
 * A signed-in user was refused a route for want of a privilege (403): the `admin` hook (reason `admin`) or
 * `rbac(roles)` (reason `role`).
 */
export interface AccessDeniedEvent extends AuditBase {
  readonly type: 'access.denied'
  /** The request's method. */
  readonly method: string
  /** The route's pattern as registered (`/api/users/:id`), never the URL with its values. */
  readonly route: string
  /** What would have let the user in: the roles of `rbac(roles)`, or `['admin']`. */
  readonly required: readonly string[]
}
/** The state store could not answer: the request got 503 `GATEHOUSE_STATE_STORE`. */
export interface StateStoreUnavailableEvent extends AuditBase { readonly type: 'state_store.unavailable' }
/** A session token signed by a key that no longer signs (an older key of the ring) was accepted. */
export interface KeyRotatedEvent extends AuditBase {
  readonly type: 'key.rotated'
  /** The `kid` of the older key. */
  readonly kid: string
  /** The `kid` of the key that signs now. */
  readonly currentKid: string
}

/**
 * A sign-in's password was right but is known from data breaches (the direct provider's `breachedPasswords`):
 * reason `warned` (signed in, flagged) or `refused` (403).
 */
export interface PasswordBreachedEvent extends AuditBase {
  readonly type: 'password.breached'
  /** How many times the breach corpus has seen it. */
  readonly count: number
}

/** A browser was trusted to skip the second factor of its user (reason: the factor just confirmed, `totp`, `passkey`). */
export interface TrustedDeviceAddedEvent extends AuditBase { readonly type: 'trusted_device.added' }
/** A trusted browser's login skipped the second factor (reason `trusted`). */
export interface TrustedDeviceUsedEvent extends AuditBase { readonly type: 'trusted_device.used' }
/**
 * A device cookie was presented and not honoured (reason `other_user`: signed for another user; `forgotten`: removed
 * or expired; `invalid`: forged, of another purpose or unreadable). The second factor is asked for as usual.
 */
export interface TrustedDeviceRefusedEvent extends AuditBase { readonly type: 'trusted_device.refused' }
/** Trusted browsers of a user were forgotten (reason `session_list` or `revokeUser`). */
export interface TrustedDeviceRemovedEvent extends AuditBase {
  readonly type: 'trusted_device.removed'
  /** How many were forgotten. */
  readonly count: number
}

/** What every token event of a registered client carries. */
export interface ClientEventBase extends AuditBase {
  /** The registered client (`clients[i].id`). */
  readonly clientId: string
}
/** A client got its first token pair (a new refresh family): `sign_in`, `authorization_code`, `device_code`. */
export interface TokenIssuedEvent extends ClientEventBase { readonly type: 'token.issued' }
/** A refresh token was exchanged (and rotated) for a new pair. */
export interface TokenRefreshedEvent extends ClientEventBase { readonly type: 'token.refreshed' }
/** A rotated refresh token was presented again: two parties hold the family, and it ended. */
export interface TokenReuseDetectedEvent extends ClientEventBase {
  readonly type: 'token.reuse_detected'
  /** True: the whole family ended, its access tokens included. */
  readonly familyEnded: boolean
}
/** A client revoked its refresh token (RFC 7009): its family ended. */
export interface TokenRevokedEvent extends ClientEventBase { readonly type: 'token.revoked' }

/** A signed-in user approved a device client's sign-in (RFC 8628) on the device page. */
export interface DeviceApprovedEvent extends ClientEventBase { readonly type: 'device.approved' }
/** A device sign-in was denied by the user (`denied`), or a user code matched nothing (`unknown_code`: a typo or a guess). */
export interface DeviceDeniedEvent extends AuditBase {
  readonly type: 'device.denied'
  /** The client of the code; undefined for an unknown code. */
  readonly clientId: string | undefined
}

/** Every audit event, discriminated by `type`. */
export type AuditEvent =
  | LoginSucceededEvent | LoginFailedEvent | LoginSecondFactorRequiredEvent | LogoutEvent
  | SessionRefreshedEvent | SessionRevokedEvent | SessionRefusedEvent | SessionMigratedEvent
  | LockoutStartedEvent | RateLimitedEvent | CrossSiteRefusedEvent | ConfirmationSentEvent
  | PasskeyAddedEvent | PasskeyRemovedEvent | SecondFactorAddedEvent | SecondFactorRemovedEvent | RecoveryCodesCreatedEvent
  | StepUpSucceededEvent | StepUpRefusedEvent | AccessDeniedEvent | StateStoreUnavailableEvent | KeyRotatedEvent | PasswordBreachedEvent
  | TrustedDeviceAddedEvent | TrustedDeviceUsedEvent | TrustedDeviceRefusedEvent | TrustedDeviceRemovedEvent
  | TokenIssuedEvent | TokenRefreshedEvent | TokenReuseDetectedEvent | TokenRevokedEvent | DeviceApprovedEvent | DeviceDeniedEvent

/** The name of an event type. */
export type AuditEventType = AuditEvent['type']

/** The event of one type. */
export type AuditEventOf<T extends AuditEventType> = Extract<AuditEvent, { type: T }>

/** Receives every audit event of one root plugin (the `onEvent` option). Errors it throws are logged, never answered. */
export type AuditListener = (event: AuditEvent) => void | Promise<void>

/** Every event type, in catalogue order. */
export const AUDIT_EVENT_TYPES: readonly AuditEventType[] = [
  'login.succeeded', 'login.failed', 'login.second_factor_required', 'logout', 'session.refreshed', 'session.revoked',
  'session.refused', 'lockout.started', 'rate_limited', 'cross_site.refused', 'confirmation.sent', 'passkey.added',
  'passkey.removed', 'second_factor.added', 'second_factor.removed', 'recovery_codes.created', 'step_up.succeeded',
  'step_up.refused', 'access.denied', 'state_store.unavailable', 'key.rotated', 'password.breached',
  'trusted_device.added', 'trusted_device.used',
  'trusted_device.refused', 'trusted_device.removed', 'session.migrated',
  'token.issued', 'token.refreshed', 'token.reuse_detected', 'token.revoked', 'device.approved', 'device.denied'
]
