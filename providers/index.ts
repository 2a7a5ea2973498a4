/**
 * `fastify-gatehouse/providers`: every login-method family as a Fastify plugin, each registered after the root
 * plugin (`authPlugin`) and mounting one provider at `{authPrefix}/<name>/…`; and the provider kit a
 * self-implemented provider is built on (`providerKit(fastify)`). A plugin's options object is also its entry in
 * the root's `providers` list, with `kind`:
 *
 * ```ts
 * await app.register(authPlugin, { secret, url })
 * await app.register(oauth2Provider, { name: 'github', cid, csecret })
 * await app.register(directProvider, { name: 'local', checker })
 * // the same, in the root's options:
 * await app.register(authPlugin, { secret, url, providers: [{ kind: 'oauth2', name: 'github', cid, csecret }, { kind: 'direct', name: 'local', checker }] })
 * ```
 */
export { providerKit, type ProviderKit, type ProviderOrFactory, type ProviderThrottle, type PurposeTokens } from '../plugins/core/kit.js'
export type { MountOptions, LoginHandler, SignedInSession } from '../plugins/core/kit.js'
export type { LoginRequest } from '../lib/login-request.js'
export { directProvider, BREACHED_PASSWORD_HEADER, type DirectProviderOptions, type DirectBreachedPasswords } from './direct.js'
export { handlerProvider, type HandlerProviderOptions } from './handler.js'
export {
  oauth2Provider, oidcProvider, appleProvider,
  type OAuth2Client, type OAuth2ProviderOptions, type BuiltinProviderOptions, type CustomOAuth2ProviderOptions,
  type OidcPluginOptions, type AppleProviderOptions
} from './oauth2/plugins.js'
export { builtinProviders, OAUTH2_BUILTIN_NAMES, RESERVED_PROVIDER_NAMES, type BuiltinProviderName, type OAuth2Overrides } from './oauth2/builtins.js'
export type { ProviderSettings } from './oauth2/builtin-spec.js'
export type { CustomClient, CustomProviderOptions } from './oauth2/custom.js'
export { discoverOidc, mapStandardClaims, type OidcProviderOptions } from './oauth2/oidc.js'
export { appleKeyFromFile, type AppleConfig, type AppleKeyLoader, type ApplePrivateKey } from './oauth2/apple.js'
export type { MappedUser, MapContext, MapUserFn, OAuth2ProviderConfig } from './oauth2/engine.js'
export type { OidcSettings } from './oauth2/idtoken.js'
export { devProvider, DEV_PORT, type DevProviderOptions } from './oauth2/dev.js'
export { verifyProvider, type VerifyOptions, type VerifyProviderOptions } from './verify/provider.js'
export type { EmailCodeOptions } from './verify/code.js'
export { SendError, isMailAddress, senderFunc, type Sender, type SenderFunc, type SendErrorKind, type SendOptions } from './verify/sender.js'
export { SmtpSender, type SmtpSenderOptions } from './verify/smtp.js'
export type { TemplateEscape } from './verify/template.js'
export { telegramProvider } from './telegram/provider.js'
export type { TelegramOptions } from './telegram/options.js'
export { passkeyProvider } from './passkey/provider.js'
export type { PasskeyProviderOptions } from './passkey/options.js'
export type { PasskeyInfo } from './passkey/context.js'
export { totpProvider } from './totp/provider.js'
export type { TotpProviderOptions } from './totp/options.js'
export { samlProvider } from './saml/provider.js'
export { mapSamlUser, type SamlAssertion, type SamlMappedUser, type SamlMapUser } from './saml/user.js'
export type { SamlProviderOptions, SamlIdp, SamlIdpMetadata, SamlIdpMetadataUrl, SamlIdpSettings, SamlIdpResolver } from './saml/options.js'
export { getProviderToken, revokeProviderToken, type KeepTokensOptions, type ProviderToken } from './oauth2/provider-tokens.js'
