/**
 * `fastify-gatehouse/toolkit`: the HTTP toolkit. Every plugin can be registered on its own, without the auth
 * plugins; per-request checks also come as hook functions for route options, `maybe` and `wrap`.
 */
import './toolkit-augment.js'

export * from './plugins/toolkit/index.js'
export * from './plugins/toolkit/breached-passwords.js'
export { ErrorCodes, GatehouseError, HttpError, OptionsError, sendError, type ErrorBody, type ErrorCode } from './lib/errors.js'
export { funcLogger, noopLogger, pinoLogger, stdLogger, type Logger, type LogLevel } from './lib/logger.js'
