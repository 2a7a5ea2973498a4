/**
 * `fastify-gatehouse/toolkit`: the HTTP toolkit. Every plugin can be registered on its own, without the auth
 * plugins; per-request checks also come as hook functions for route options, `maybe` and `wrap`.
 */
import './toolkit-augment.js'

export * from './plugins/toolkit/index.js'
export * from './plugins/toolkit/breached-passwords.js'
export { ErrorCodes, GatehouseError, HttpError, OptionsError, sendError, type ErrorBody, type ErrorCode } from './lib/errors.js'
// Until 1.0 (docs/guide/upgrading.md): the printf loggers, which moved to fastify-gatehouse/compat.
export { funcLogger, noopLogger, pinoLogger, stdLogger } from './lib/logging/deprecated-loggers.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/compat`; goes from the toolkit in 1.0. */
  Logger,
  /** @deprecated Import it from `fastify-gatehouse/compat`; goes from the toolkit in 1.0. */
  LogLevel
} from './lib/logging/logger.js'
