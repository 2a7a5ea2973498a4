/**
 * `fastify-gatehouse/providers`: what a provider is built and configured with. The provider plugins themselves
 * are registered from the root entry (`import { oauth2Provider } from 'fastify-gatehouse'`); here are their
 * option types, the provider kit a self-implemented provider is built on (`providerKit(fastify)`), the OAuth2
 * engine's data, Apple's key loader, the e-mail senders, the provider tokens an app keeps, and the sign-in checks
 * (captcha verifiers, breached passwords) the providers and the root's `login` options take.
 *
 * ```ts
 * import { authPlugin, directProvider } from 'fastify-gatehouse'
 * import { breachedPasswords, type DirectProviderOptions } from 'fastify-gatehouse/providers'
 *
 * const local: DirectProviderOptions = { name: 'local', checker, breachedPasswords: { check: breachedPasswords() } }
 * await app.register(authPlugin, { secret, url })
 * await app.register(directProvider, local)
 * ```
 *
 * A plugin's options object is also its entry in the root's `providers` list, with `kind`.
 */

// The provider kit: what a provider is given by the auth core.
export { providerKit, type ProviderKit, type ProviderThrottle, type PurposeTokens } from '../plugins/core/kit.js'
export type { AuthProvider, LoginResult, MountOptions, LoginHandler, SignedInSession } from '../plugins/core/kit.js'
export type { LoginRequest } from '../lib/login/login-request.js'

// Options of the provider plugins (each plugin is exported by the root entry).
export { handlerProvider } from './lazy.js'
export type { HandlerProviderOptions } from './handler.js'
export type { DirectProviderOptions, DirectBreachedPasswords } from './direct.js'
export type { OAuth2ProviderOptions, OidcPluginOptions, AppleProviderOptions } from './oauth2/plugins.js'
export type { DevProviderOptions } from './oauth2/dev.js'
export type { EmailProviderOptions } from './email/provider.js'
export type { TelegramProviderOptions } from './telegram/options.js'
export type { PasskeyProviderOptions } from './passkey/options.js'
export type { TotpProviderOptions } from './totp/options.js'

// The OAuth2 engine's data: the built-ins, how a provider's user is mapped, OIDC discovery.
export { builtinProviders, OAUTH2_BUILTIN_NAMES, type BuiltinProviderName } from './oauth2/builtins.js'
export type { ProviderSettings } from './oauth2/builtin-spec.js'
export { discoverOidc, mapStandardClaims } from './oauth2/oidc.js'
export type { MappedUser, MapContext, MapUserFn, OAuth2ProviderConfig } from './oauth2/engine.js'
export type { OidcSettings } from './oauth2/idtoken.js'

// Apple's private key.
export { appleKeyFromFile, type AppleConfig, type AppleKeyLoader, type ApplePrivateKey } from './oauth2/apple.js'

// Mail: the SMTP sender, the sender interface, delivery errors, e-mail codes.
export { SmtpSender, type SmtpSenderOptions } from './email/smtp.js'
export { MailSendError, type Sender, type SendErrorKind, type SendOptions } from './email/sender.js'
export type { EmailCodeOptions } from './email/code.js'

// The provider tokens an app keeps (an OAuth2 provider's `keepTokens`).
export { getProviderToken, revokeProviderToken, type KeepTokensOptions, type ProviderToken } from './oauth2/provider-tokens.js'

// Sign-in checks: captcha verifiers (the root's `login.captcha`), breached passwords (the direct provider's).
export { hcaptchaVerifier, recaptchaV3Verifier, turnstileVerifier, type SiteverifyOptions } from '../lib/captcha/siteverify.js'
export { breachedPasswords, type BreachedPasswords, type BreachedPasswordsOptions, type BreachVerdict } from '../lib/breached-passwords.js'
export { BREACHED_PASSWORD_HEADER } from './direct-header.js'
export { normaliseAccountName } from '../lib/throttle/lockout.js'
export type { PasskeyInfo } from './passkey/context.js'

// Until 1.0: the names this entry had before (docs/guide/upgrading.md). Each is deprecated; the values warn once.
export {
  directProvider, oauth2Provider, oidcProvider, appleProvider, devProvider, telegramProvider, passkeyProvider, totpProvider
} from './deprecated.js'
export {
  /** @deprecated Use `emailProvider` from the root entry (`verify` also means token verification); goes in 1.0. */
  verifyProvider
} from './lazy.js'
export {
  /** @deprecated Use `MailSendError` (`sendError` is the toolkit's HTTP answer); goes in 1.0. */
  SendError
} from './email/sender.js'
export type {
  /** @deprecated Use `EmailProviderOptions`; goes in 1.0. */
  VerifyProviderOptions,
  /** @deprecated Import it from `fastify-gatehouse/compat` (`addVerifProvider`'s options); goes from here in 1.0. */
  VerifyOptions
} from './email/provider.js'
export type {
  /** @deprecated Use `TelegramProviderOptions`; goes in 1.0. */
  TelegramOptions
} from './telegram/options.js'
export type {
  /** @deprecated Use `OAuth2ProviderOptions` (this is its built-in half); goes in 1.0. */
  BuiltinProviderOptions,
  /** @deprecated Use `OAuth2ProviderOptions` (this is its custom half); goes in 1.0. */
  CustomOAuth2ProviderOptions,
  /** @deprecated Part of `OAuth2ProviderOptions` (`name`, `cid`, `csecret`); goes from here in 1.0. */
  OAuth2Client
} from './oauth2/plugins.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/compat` (`addProvider`'s overrides); goes from here in 1.0. */
  OAuth2Overrides
} from './oauth2/builtins.js'
export type {
  /** @deprecated Import them from `fastify-gatehouse/compat` (`addCustomProvider`'s arguments); goes from here in 1.0. */
  CustomClient,
  /** @deprecated Import it from `fastify-gatehouse/compat` (`addCustomProvider`'s options); goes from here in 1.0. */
  CustomProviderOptions
} from './oauth2/custom.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/compat` (`addOidcProvider`'s options); goes from here in 1.0. */
  OidcProviderOptions
} from './oauth2/oidc.js'
export type {
  /** @deprecated The type of `handlerProvider`'s `provider` option; goes from this entry in 1.0. */
  ProviderOrFactory
} from '../plugins/core/kit.js'
export type {
  /** @deprecated Internal (the template's escaping is the `escape` option's `'html' | 'none'`); goes in 1.0. */
  TemplateEscape
} from './email/template.js'
export { DEV_PORT } from '../servers/dev-port.js'
export { RESERVED_PROVIDER_NAMES, isMailAddress, senderFunc } from './deprecated.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/compat`; goes from here in 1.0. */
  SenderFunc
} from './email/sender.js'
