/**
 * fastify-gatehouse: the root entry. What a user of the root plugin and the common login methods reaches for
 * first: the plugin and its options, the user and the session, the hooks' types, the provider plugins, the errors
 * and the audit events. The rest is in the entry of its concern: `fastify-gatehouse/providers` (provider options,
 * the provider kit, senders, sign-in checks), `/toolkit` (the HTTP toolkit), `/stores`, `/servers`, `/testing`,
 * and `/compat` (go-pkgz's shapes). What 1.0 promises: docs/internals/architecture.md.
 */
import './augment.js'

// The plugin and its options.
export { authPlugin, authPlugin as default, type AuthOptions } from './auth.js'
export type {
  SessionOptions, CookieOptions, XsrfOptions, TokenSourceOptions, RevocationOptions, LoginOptions, FactorOptions
} from './plugins/core/options.js'
export type { RateLimitOptions } from './lib/throttle/options.js'
export type { ClientOptions } from './plugins/core/base/clients.js'
export type { AvatarOptions } from './plugins/avatar/plugin.js'
export type { Duration } from './lib/duration.js'

// fastify.auth and the request path.
export type {
  GatehouseAuth, AuthHook, TokenService, Session, Claims, ClaimsInput, ListedSession, TokenPairResponse,
  CredChecker, CheckedUser, Validator, ClaimsUpdater, UserUpdater, SecretOption, SessionKey
} from './plugins/core/base/types.js'
export type { StepUpOptions } from './lib/login/step-up.js'
export { User, type ReadonlyUser, type UserData } from './lib/user.js'
export type { CaptchaVerifier } from './lib/captcha/verifier.js'
export type { StateStore } from './lib/state-store.js'

// The provider plugins (their options: fastify-gatehouse/providers).
export {
  directProvider, oauth2Provider, oidcProvider, appleProvider, emailProvider, telegramProvider, passkeyProvider, totpProvider, devProvider
} from './providers/lazy.js'

// Errors and audit events.
export { ErrorCodes, GatehouseError, HttpError, OptionsError, RateLimitedError, type ErrorBody, type ErrorCode } from './lib/errors.js'
export { AUDIT_CHANNEL, type AuditEvent, type AuditEventOf, type AuditEventType, type AuditListener } from './lib/audit/events.js'
export { otelRequestHook } from './lib/telemetry/request-hook.js'

// ---------------------------------------------------------------------------------------------------------------
// Until 1.0: the names this entry had before and that moved to another entry, were renamed or leave the public API
// (docs/guide/upgrading.md). Each is deprecated; the values among them warn once when used (lib/deprecation.ts).
// ---------------------------------------------------------------------------------------------------------------

// Renamed.
export type {
  /** @deprecated Use `GatehouseAuth`, the one name of `fastify.auth`'s type; goes in 1.0. */
  GatehouseApi
} from './auth.js'
export type {
  /** @deprecated Use `StepUpOptions` (`fastify.auth.recent` is `stepUp`); goes in 1.0. */
  RecentOptions
} from './lib/login/step-up.js'
export {
  /** @deprecated Use `emailProvider` (`verify` also means token verification); goes in 1.0. */
  verifyProvider
} from './providers/lazy.js'
export {
  /** @deprecated Use `MailSendError` from `fastify-gatehouse/providers` (`sendError` answers HTTP errors); goes in 1.0. */
  SendError
} from './providers/email/sender.js'
export type {
  /** @deprecated Use `EmailProviderOptions` from `fastify-gatehouse/providers`; goes in 1.0. */
  VerifyProviderOptions
} from './providers/email/provider.js'
export type {
  /** @deprecated Use `TelegramProviderOptions` from `fastify-gatehouse/providers`; goes in 1.0. */
  TelegramOptions
} from './providers/telegram/options.js'
export {
  /** @deprecated Use `DEV_SERVER_PORT` from `fastify-gatehouse/servers`; goes in 1.0. */
  DEV_PORT
} from './servers/dev-port.js'

// Moved to fastify-gatehouse/providers (values: deprecated.ts).
export {
  appleKeyFromFile, discoverOidc, getProviderToken, revokeProviderToken, mapStandardClaims, builtinProviders, OAUTH2_BUILTIN_NAMES,
  breachedPasswords, normaliseAccountName, turnstileVerifier, hcaptchaVerifier, recaptchaV3Verifier, SmtpSender, providerKit, handlerProvider
} from './deprecated.js'
export {
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  BREACHED_PASSWORD_HEADER
} from './providers/direct-header.js'
export { RESERVED_PROVIDER_NAMES, isMailAddress, senderFunc } from './providers/deprecated.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  ProviderKit,
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  ProviderThrottle,
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  PurposeTokens,
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  MountOptions,
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  LoginHandler,
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  SignedInSession,
  /** @deprecated The type of `handlerProvider`'s `provider` option; goes from the root in 1.0. */
  ProviderOrFactory
} from './plugins/core/kit.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  AuthProvider,
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  LoginResult
} from './plugins/core/base/types.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  LoginRequest
} from './lib/login/login-request.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  DirectProviderOptions,
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  DirectBreachedPasswords
} from './providers/direct.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  HandlerProviderOptions
} from './providers/handler.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  OAuth2ProviderOptions,
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  OidcPluginOptions,
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  AppleProviderOptions,
  /** @deprecated Use `OAuth2ProviderOptions` (this is its built-in half); goes in 1.0. */
  BuiltinProviderOptions,
  /** @deprecated Use `OAuth2ProviderOptions` (this is its custom half); goes in 1.0. */
  CustomOAuth2ProviderOptions,
  /** @deprecated Part of `OAuth2ProviderOptions` (`name`, `cid`, `csecret`); goes from the root in 1.0. */
  OAuth2Client
} from './providers/oauth2/plugins.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  DevProviderOptions
} from './providers/oauth2/dev.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/compat` (`addVerifProvider`'s options); goes from the root in 1.0. */
  VerifyOptions
} from './providers/email/provider.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  EmailCodeOptions
} from './providers/email/code.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  Sender,
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  SendErrorKind,
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  SendOptions,
  /** @deprecated Import it from `fastify-gatehouse/compat`; goes from the root in 1.0. */
  SenderFunc
} from './providers/email/sender.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  SmtpSenderOptions
} from './providers/email/smtp.js'
export type {
  /** @deprecated Internal from 1.0 (the `escape` option is `'html' | 'none'`); goes in 1.0. */
  TemplateEscape
} from './providers/email/template.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  PasskeyProviderOptions
} from './providers/passkey/options.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  PasskeyInfo
} from './providers/passkey/context.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  TotpProviderOptions
} from './providers/totp/options.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  BuiltinProviderName,
  /** @deprecated Import it from `fastify-gatehouse/compat` (`addProvider`'s overrides); goes from the root in 1.0. */
  OAuth2Overrides
} from './providers/oauth2/builtins.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  ProviderSettings
} from './providers/oauth2/builtin-spec.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/compat` (`addCustomProvider`'s arguments); goes from the root in 1.0. */
  CustomClient,
  /** @deprecated Import it from `fastify-gatehouse/compat` (`addCustomProvider`'s options); goes from the root in 1.0. */
  CustomProviderOptions
} from './providers/oauth2/custom.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/compat` (`addOidcProvider`'s options); goes from the root in 1.0. */
  OidcProviderOptions
} from './providers/oauth2/oidc.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  AppleConfig,
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  AppleKeyLoader,
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  ApplePrivateKey
} from './providers/oauth2/apple.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  MappedUser,
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  MapContext,
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  MapUserFn,
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  OAuth2ProviderConfig
} from './providers/oauth2/engine.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  OidcSettings
} from './providers/oauth2/idtoken.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  KeepTokensOptions,
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  ProviderToken
} from './providers/oauth2/provider-tokens.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  SiteverifyOptions,
  /** @deprecated Internal from 1.0 (a `SiteverifyOptions` with the service's own field); goes in 1.0. */
  TurnstileOptions,
  /** @deprecated Internal from 1.0 (a `SiteverifyOptions` with the service's own field); goes in 1.0. */
  HcaptchaOptions,
  /** @deprecated Internal from 1.0 (a `SiteverifyOptions` with the service's own field); goes in 1.0. */
  RecaptchaV3Options
} from './lib/captcha/siteverify.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  BreachedPasswords,
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  BreachedPasswordsOptions,
  /** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
  BreachVerdict
} from './lib/breached-passwords.js'

// Moved to fastify-gatehouse/compat (values: deprecated.ts).
export { funcLogger, noopLogger, pinoLogger, stdLogger, userId } from './deprecated.js'
export type {
  /** @deprecated Import them from `fastify-gatehouse/compat`; goes from the root in 1.0. */
  ProviderMethods,
  /** @deprecated Import it from `fastify-gatehouse/compat`; goes from the root in 1.0. */
  DevProviderHandle,
  /** @deprecated Import it from `fastify-gatehouse/compat`; goes from the root in 1.0. */
  ProviderEntry
} from './provider-entries.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/compat` (the `validator` option takes a function, `Validator`); goes from the root in 1.0. */
  ValidatorFunc,
  /** @deprecated Import it from `fastify-gatehouse/compat` (`ClaimsUpdater` is the option's type); goes from the root in 1.0. */
  ClaimsUpdFunc,
  /** @deprecated Import it from `fastify-gatehouse/compat` (`UserUpdater` is the option's type); goes from the root in 1.0. */
  UserUpdFunc,
  /** @deprecated Import it from `fastify-gatehouse/compat` (`SecretOption` is the option's type); goes from the root in 1.0. */
  SecretFunc,
  /** @deprecated Import it from `fastify-gatehouse/compat` (`SecretOption` is the option's type); goes from the root in 1.0. */
  SecretReader,
  /** @deprecated Import it from `fastify-gatehouse/compat`; goes from the root in 1.0. */
  SecretValue,
  /** @deprecated Import it from `fastify-gatehouse/compat`; goes from the root in 1.0. */
  SecretKeyEntry
} from './plugins/core/base/types.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/compat`; goes from the root in 1.0. */
  Logger,
  /** @deprecated Import it from `fastify-gatehouse/compat`; goes from the root in 1.0. */
  LogLevel
} from './lib/logging/logger.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/compat`; goes from the root in 1.0. */
  BasicAuthChecker,
  /** @deprecated Import it from `fastify-gatehouse/compat`; goes from the root in 1.0. */
  BasicAuthResult
} from './lib/user.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/compat`; goes from the root in 1.0. */
  MigrationOptions,
  /** @deprecated Import it from `fastify-gatehouse/compat`; goes from the root in 1.0. */
  GoPkgzMigrationOptions
} from './plugins/core/sessions/migration.js'

// Moved to fastify-gatehouse/stores.
export type {
  /** @deprecated Import it from `fastify-gatehouse/stores`; goes from the root in 1.0. */
  WriteOptions,
  /** @deprecated Import it from `fastify-gatehouse/stores`; goes from the root in 1.0. */
  IncrementOptions,
  /** @deprecated Import it from `fastify-gatehouse/stores`; goes from the root in 1.0. */
  Counter,
  /** @deprecated Import it from `fastify-gatehouse/stores`; goes from the root in 1.0. */
  Subscription,
  /** @deprecated Import it from `fastify-gatehouse/stores`; goes from the root in 1.0. */
  PublishOptions
} from './lib/state-store.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/stores`; goes from the root in 1.0. */
  StateStoreOption
} from './stores/state/resolve.js'

// Out of the public API (values: deprecated.ts).
export {
  sendError, safeEqual, readLoginRequest, requestFields, AUDIT_EVENT_TYPES, Audit, MemoryRefreshCache, avatarPlugin
} from './deprecated.js'
export type {
  /** @deprecated Internal from 1.0: the root options are `AuthOptions`; goes in 1.0. */
  CoreOptions,
  /** @deprecated Internal from 1.0: `AuthOptions['revocation']`'s `sessionList`; goes in 1.0. */
  SessionListOptions,
  /** @deprecated Internal from 1.0: `FactorOptions['reauthentication']`; goes in 1.0. */
  ReauthenticationOptions,
  /** @deprecated Internal from 1.0: `FactorOptions['trustedDevices']`; goes in 1.0. */
  TrustedDevicesOptions
} from './plugins/core/options.js'
export type {
  /** @deprecated Internal from 1.0 (what a checker returns: `{ ok, user? }`); goes in 1.0. */
  CredCheckResult,
  /** @deprecated Internal from 1.0 (the `session.refreshCache` option is `{ get, set }`); goes in 1.0. */
  RefreshCache,
  /** @deprecated Internal from 1.0 (a provider's `avatar` in `LoginResult`); goes in 1.0. */
  AvatarSaver,
  /** @deprecated Internal from 1.0; goes in 1.0. */
  MaybePromise,
  /** @deprecated Internal from 1.0; goes in 1.0. */
  ResolvedGoPkgz,
  /** @deprecated Internal from 1.0; goes in 1.0. */
  ResolvedOptions,
  /** @deprecated Internal from 1.0 (the `purpose` claim); goes in 1.0. */
  TokenPurpose
} from './plugins/core/base/types.js'
export type {
  /** @deprecated Internal from 1.0: `AuthOptions['clients']`; goes in 1.0. */
  ClientRefreshOptions,
  /** @deprecated Internal from 1.0; goes in 1.0. */
  RegisteredClient
} from './plugins/core/base/clients.js'
export type {
  /** @deprecated Internal from 1.0; goes in 1.0. */
  JwsKey
} from './plugins/core/base/jws.js'
export type {
  /** @deprecated Internal from 1.0: `AuthOptions['avatar']`'s `fetch`; goes in 1.0. */
  AvatarFetchOptions
} from './plugins/avatar/plugin.js'
export type {
  /** @deprecated Internal from 1.0: `LoginOptions['rateLimit']`'s `failures`; goes in 1.0. */
  FailureOptions,
  /** @deprecated Internal from 1.0; goes in 1.0. */
  ResolvedRateLimit
} from './lib/throttle/options.js'
export type {
  /** @deprecated Internal from 1.0: `RateLimitOptions['clientKey']`; goes in 1.0. */
  ClientKey
} from './lib/throttle/client.js'
export type {
  /** @deprecated Internal from 1.0; goes in 1.0. */
  Throttle
} from './lib/throttle/throttle.js'
export type {
  /** @deprecated Internal from 1.0: `LoginOptions['crossSite']`; goes in 1.0. */
  CrossSiteOptions,
  /** @deprecated Internal from 1.0; goes in 1.0. */
  CrossSiteGuard
} from './lib/login/cross-site.js'
export type {
  /** @deprecated Internal from 1.0: a verifier's `verify(check)` argument; goes in 1.0. */
  CaptchaCheck,
  /** @deprecated Internal from 1.0: `LoginOptions['captcha']`; goes in 1.0. */
  CaptchaOption,
  /** @deprecated Internal from 1.0: what a verifier's `verify(check)` answers; goes in 1.0. */
  CaptchaVerdict,
  /** @deprecated Internal from 1.0; goes in 1.0. */
  ResolvedCaptcha
} from './lib/captcha/verifier.js'
export type {
  /** @deprecated Internal from 1.0: `LoginOptions['lastMethod']`; goes in 1.0. */
  LastLoginMethodOptions,
  /** @deprecated Internal from 1.0; goes in 1.0. */
  ResolvedLastLoginMethod
} from './plugins/core/base/last-login.js'
export type {
  /** @deprecated Internal from 1.0: `otelRequestHook`'s argument; goes in 1.0. */
  AttributeSetter
} from './lib/telemetry/request-hook.js'
export type {
  /** @deprecated Internal from 1.0: `Omit<AuditEventOf<T>, …>`; goes in 1.0. */
  AuditFields
} from './lib/audit/audit.js'
export type {
  /** @deprecated Internal from 1.0 (the fields every `AuditEvent` has); goes in 1.0. */
  AuditBase,
  /** @deprecated Internal from 1.0: `AuditEvent['outcome']`; goes in 1.0. */
  AuditOutcome,
  /** @deprecated Internal from 1.0: `AuditEventOf<'session.revoked'>['by']`; goes in 1.0. */
  RevokedBy,
  /** @deprecated Internal from 1.0 (the fields every registered client's event has); goes in 1.0. */
  ClientEventBase,
  /** @deprecated Use `AuditEventOf<'login.succeeded'>`; goes in 1.0. */
  LoginSucceededEvent,
  /** @deprecated Use `AuditEventOf<'login.failed'>`; goes in 1.0. */
  LoginFailedEvent,
  /** @deprecated Use `AuditEventOf<'login.second_factor_required'>`; goes in 1.0. */
  LoginSecondFactorRequiredEvent,
  /** @deprecated Use `AuditEventOf<'logout'>`; goes in 1.0. */
  LogoutEvent,
  /** @deprecated Use `AuditEventOf<'session.refreshed'>`; goes in 1.0. */
  SessionRefreshedEvent,
  /** @deprecated Use `AuditEventOf<'session.migrated'>`; goes in 1.0. */
  SessionMigratedEvent,
  /** @deprecated Use `AuditEventOf<'session.revoked'>`; goes in 1.0. */
  SessionRevokedEvent,
  /** @deprecated Use `AuditEventOf<'session.refused'>`; goes in 1.0. */
  SessionRefusedEvent,
  /** @deprecated Use `AuditEventOf<'lockout.started'>`; goes in 1.0. */
  LockoutStartedEvent,
  /** @deprecated Use `AuditEventOf<'rate_limited'>`; goes in 1.0. */
  RateLimitedEvent,
  /** @deprecated Use `AuditEventOf<'cross_site.refused'>`; goes in 1.0. */
  CrossSiteRefusedEvent,
  /** @deprecated Use `AuditEventOf<'confirmation.sent'>`; goes in 1.0. */
  ConfirmationSentEvent,
  /** @deprecated Use `AuditEventOf<'passkey.added'>`; goes in 1.0. */
  PasskeyAddedEvent,
  /** @deprecated Use `AuditEventOf<'passkey.removed'>`; goes in 1.0. */
  PasskeyRemovedEvent,
  /** @deprecated Use `AuditEventOf<'second_factor.added'>`; goes in 1.0. */
  SecondFactorAddedEvent,
  /** @deprecated Use `AuditEventOf<'second_factor.removed'>`; goes in 1.0. */
  SecondFactorRemovedEvent,
  /** @deprecated Use `AuditEventOf<'recovery_codes.created'>`; goes in 1.0. */
  RecoveryCodesCreatedEvent,
  /** @deprecated Use `AuditEventOf<'step_up.succeeded'>`; goes in 1.0. */
  StepUpSucceededEvent,
  /** @deprecated Use `AuditEventOf<'step_up.refused'>`; goes in 1.0. */
  StepUpRefusedEvent,
  /** @deprecated Use `AuditEventOf<'state_store.unavailable'>`; goes in 1.0. */
  StateStoreUnavailableEvent,
  /** @deprecated Use `AuditEventOf<'key.rotated'>`; goes in 1.0. */
  KeyRotatedEvent,
  /** @deprecated Use `AuditEventOf<'password.breached'>`; goes in 1.0. */
  PasswordBreachedEvent,
  /** @deprecated Use `AuditEventOf<'trusted_device.added'>`; goes in 1.0. */
  TrustedDeviceAddedEvent,
  /** @deprecated Use `AuditEventOf<'trusted_device.used'>`; goes in 1.0. */
  TrustedDeviceUsedEvent,
  /** @deprecated Use `AuditEventOf<'trusted_device.refused'>`; goes in 1.0. */
  TrustedDeviceRefusedEvent,
  /** @deprecated Use `AuditEventOf<'trusted_device.removed'>`; goes in 1.0. */
  TrustedDeviceRemovedEvent,
  /** @deprecated Use `AuditEventOf<'token.issued'>`; goes in 1.0. */
  TokenIssuedEvent,
  /** @deprecated Use `AuditEventOf<'token.refreshed'>`; goes in 1.0. */
  TokenRefreshedEvent,
  /** @deprecated Use `AuditEventOf<'token.reuse_detected'>`; goes in 1.0. */
  TokenReuseDetectedEvent,
  /** @deprecated Use `AuditEventOf<'token.revoked'>`; goes in 1.0. */
  TokenRevokedEvent,
  /** @deprecated Use `AuditEventOf<'device.approved'>`; goes in 1.0. */
  DeviceApprovedEvent,
  /** @deprecated Use `AuditEventOf<'device.denied'>`; goes in 1.0. */
  DeviceDeniedEvent
} from './lib/audit/events.js'
