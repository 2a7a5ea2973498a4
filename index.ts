/**
 * fastify-gatehouse: the one public entry point.
 */
export { authPlugin, authPlugin as default } from './plugins/auth.js'
export { corePlugin } from './plugins/core.js'
export type { AuthOptions, XsrfOptions, ProviderEntry, ResolvedOptions } from './plugins/core/options.js'
export { OptionsError } from './plugins/core/options.js'
export type {
  AuthProvider, AvatarSaver, BasicAuthChecker, BasicAuthResult, Claims, ClaimsInput, ClaimsUpdater, ClaimsUpdFunc,
  CredChecker, GatehouseAuth, LoginResult, RefreshCache, SecretFunc, SecretReader, TokenPurpose, TokenService,
  UserUpdater, UserUpdFunc, Validator, ValidatorFunc
} from './plugins/core/types.js'
export { User, userId, type UserData } from './plugins/core/user.js'
export { funcLogger, noopLogger, pinoLogger, stdLogger, type Logger } from './plugins/core/logger.js'
export { MemoryRefreshCache } from './plugins/core/refresh-cache.js'
export { parseDuration, type Duration } from './plugins/core/duration.js'
export { HttpError, sendError, type ErrorBody } from './plugins/shared/errors.js'
export { safeEqual } from './plugins/shared/compare.js'
export { xsrfHook } from './hooks/xsrf.js'
export type { ProviderMethods } from './plugins/core/add-providers.js'

// Providers
export { directProvider } from './providers/direct.js'
export * from './providers/oauth2/index.js'
export * from './providers/oauth2-server/index.js'
export * from './providers/verify/index.js'
export * from './providers/telegram/index.js'
export * from './plugins/state-store/index.js'

// Avatars
export * from './plugins/avatar.js'
export * from './stores/index.js'

// HTTP toolkit
export * from './plugins/toolkit/index.js'
