/**
 * fastify-gatehouse: the root entry. The root plugin, the core and avatar plugins, every provider plugin, the
 * public types and the documented helpers. The HTTP toolkit is `fastify-gatehouse/toolkit`; stores are
 * `fastify-gatehouse/stores`; the embeddable OAuth2 servers are `fastify-gatehouse/servers`.
 */
import './augment.js'

export { authPlugin, authPlugin as default, type AuthOptions, type ProviderEntry } from './auth.js'
export type {
  BasicAuthOptions, CookieOptions, CoreOptions, ReauthenticationOptions, RevocationOptions, SessionListOptions, SessionOptions, TokenSourceOptions, TrustedDevicesOptions, XsrfOptions
} from './plugins/core/options.js'
export type {
  AuthHook, AuthProvider, AvatarSaver, BasicAuthChecker, BasicAuthResult, Claims, ClaimsInput, ClaimsUpdater, ClaimsUpdFunc,
  CheckedUser, CredChecker, CredCheckResult, GatehouseAuth, ListedSession, LoginResult, MaybePromise, RefreshCache, ResolvedGoPkgz, ResolvedOptions, SecretFunc, SecretKeyEntry, SecretReader,
  SecretValue, Session, SessionKey, TokenPairResponse, TokenPurpose, TokenService, UserUpdater, UserUpdFunc, Validator, ValidatorFunc
} from './plugins/core/types.js'
export type { ClientOptions, ClientRefreshOptions, RegisteredClient } from './plugins/core/clients.js'
export type { JwsKey } from './plugins/core/jws.js'
export type { ProviderMethods, DevProviderHandle } from './compat.js'
export type { GatehouseApi } from './auth.js'
export { MemoryRefreshCache } from './plugins/core/refresh-cache.js'
export { avatarPlugin, type AvatarOptions, type AvatarFetchOptions } from './plugins/avatar/plugin.js'

export { User, userId, type ReadonlyUser, type UserData } from './lib/user.js'
export { funcLogger, noopLogger, pinoLogger, stdLogger, type Logger, type LogLevel } from './lib/logger.js'
export { ErrorCodes, GatehouseError, HttpError, OptionsError, RateLimitedError, sendError, type ErrorBody, type ErrorCode } from './lib/errors.js'
export type { RateLimitOptions, FailureOptions, ResolvedRateLimit } from './lib/throttle/options.js'
export type { ClientKey } from './lib/throttle/client.js'
export type { Throttle } from './lib/throttle/throttle.js'
export { normaliseAccountName } from './lib/throttle/lockout.js'
export type { CrossSiteOptions, CrossSiteGuard } from './lib/cross-site.js'
export type { CaptchaCheck, CaptchaOption, CaptchaVerdict, CaptchaVerifier, ResolvedCaptcha } from './lib/captcha/verifier.js'
export {
  hcaptchaVerifier, recaptchaV3Verifier, turnstileVerifier, type HcaptchaOptions, type RecaptchaV3Options, type SiteverifyOptions, type TurnstileOptions
} from './lib/captcha/siteverify.js'
export type { LastLoginMethodOptions, ResolvedLastLoginMethod } from './plugins/core/last-login.js'
export { breachedPasswords, type BreachedPasswords, type BreachedPasswordsOptions, type BreachVerdict } from './lib/breached-passwords.js'
export type { MigrationOptions, GoPkgzMigrationOptions } from './plugins/core/migration.js'
export type { Duration } from './lib/duration.js'
export type { RecentOptions } from './lib/step-up.js'
export { safeEqual } from './lib/compare.js'
export { AUDIT_CHANNEL, AUDIT_EVENT_TYPES } from './lib/audit/events.js'
export type {
  AuditBase, AuditEvent, AuditEventOf, AuditEventType, AuditListener, AuditOutcome, ConfirmationSentEvent, CrossSiteRefusedEvent,
  KeyRotatedEvent, PasswordBreachedEvent, TrustedDeviceAddedEvent, TrustedDeviceRefusedEvent, TrustedDeviceRemovedEvent, TrustedDeviceUsedEvent, LockoutStartedEvent, LoginFailedEvent, LoginSecondFactorRequiredEvent, LoginSucceededEvent, LogoutEvent,
  PasskeyAddedEvent, PasskeyRemovedEvent, RateLimitedEvent, RecoveryCodesCreatedEvent, RevokedBy, SecondFactorAddedEvent,
  SecondFactorRemovedEvent, SessionMigratedEvent, SessionRefreshedEvent, SessionRefusedEvent, SessionRevokedEvent, StateStoreUnavailableEvent,
  StepUpRefusedEvent, StepUpSucceededEvent, ClientEventBase, TokenIssuedEvent, TokenRefreshedEvent, TokenReuseDetectedEvent, TokenRevokedEvent,
  DeviceApprovedEvent, DeviceDeniedEvent, AccessDeniedEvent
} from './lib/audit/events.js'
export type { Audit, AuditFields } from './lib/audit/audit.js'
export type { StateStore, WriteOptions, IncrementOptions, Counter, Subscription, PublishOptions } from './lib/state-store.js'
export type { StateStoreOption } from './stores/state/resolve.js'
export { readLoginRequest, requestFields } from './lib/login-request.js'
export { otelRequestHook, type AttributeSetter } from './lib/telemetry/request-hook.js'

export * from './providers/index.js'
