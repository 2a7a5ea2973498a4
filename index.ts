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
