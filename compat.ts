/**
 * `fastify-gatehouse/compat`: go-pkgz/auth's and go-pkgz/rest's shapes, for an app ported from Go (see the guide
 * "Migrating from go-pkgz/auth"). The seed's `add*Provider` methods are on `fastify.auth` either way; here are
 * their types and arguments, the printf loggers, the `*Func` adapters beside their interfaces, the option groups
 * of go-pkgz's features (basic auth as `admin`, the session migration), and the toolkit's `rest` and expvar
 * helpers. A new app needs none of this: the root entry and `fastify-gatehouse/toolkit` have the Fastify-shaped
 * way of each.
 */

// go-pkgz/auth's Service: the add* methods (on fastify.auth), the provider entries, the dev server's handle.
export type { ProviderEntry, ProviderMethods, DevProviderHandle } from './provider-entries.js'
export type { CustomClient, CustomProviderOptions } from './providers/oauth2/custom.js'
export type { OAuth2Overrides } from './providers/oauth2/builtins.js'
export type { OidcProviderOptions } from './providers/oauth2/oidc.js'
export type { VerifyOptions } from './providers/email/provider.js'
export { senderFunc, type SenderFunc } from './providers/email/sender.js'
export { userId } from './lib/user.js'

// go-pkgz/auth's options with no Fastify-shaped twin: basic auth as `admin`, moving sessions over from Go.
export type { AdminBasicAuthOptions } from './plugins/core/options.js'
export type { BasicAuthChecker, BasicAuthResult } from './lib/user.js'
export type { MigrationOptions, GoPkgzMigrationOptions } from './plugins/core/sessions/migration.js'

// The interface-plus-`Func` pairs of go-pkgz/auth: the options take either form.
export type { ValidatorFunc, ClaimsUpdFunc, UserUpdFunc, SecretFunc, SecretReader, SecretValue, SecretKeyEntry } from './plugins/core/base/types.js'

// go-pkgz/lgr's printf logger (the `logger` option; by default the package writes through Fastify's log).
export { funcLogger, noopLogger, pinoLogger, stdLogger, type Logger, type LogLevel } from './lib/logging/logger.js'

// go-pkgz/rest's helpers (`rest.Wrap`, `rest.RenderJSON`, …), its expvar publishing and its from/to parameters.
export {
  wrap, renderJSON, renderJSONFromBytes, renderJSONWithHTML, encodeJSON, decodeJSON, sendErrorJSON, errorLogger,
  type JSONObject, type RouteHandler, type ErrorSender
} from './plugins/toolkit/helpers.js'
export { publish, VarRegistry, expvarSnapshot, type VarFunc } from './plugins/toolkit/metrics.js'
export { parseFromTo, parseTimestamp, type FromTo, type FromToOptions } from './plugins/toolkit/from-to.js'
