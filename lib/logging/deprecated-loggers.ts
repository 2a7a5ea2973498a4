/**
 * The printf loggers (go-pkgz/lgr's shape) under the names the root entry and `fastify-gatehouse/toolkit` exported
 * before 1.0: they live in `fastify-gatehouse/compat` now. Each warns once when used (lib/deprecation.ts).
 */
import { deprecatedFunction, deprecatedObject, warnMoved } from '../deprecation.js'
import { funcLogger as funcLog, noopLogger as noopLog, pinoLogger as pinoLog, stdLogger as stdLog } from './logger.js'

const moved = (name: string) => () => { warnMoved(name, 'fastify-gatehouse/compat', 'by default the package logs through Fastify\'s log') }

/** @deprecated Import it from `fastify-gatehouse/compat` (by default the package logs through Fastify's log); goes from here in 1.0. */
export const funcLogger: typeof funcLog = deprecatedFunction(moved('funcLogger'), funcLog)
/** @deprecated Import it from `fastify-gatehouse/compat` (by default the package logs through Fastify's log); goes from here in 1.0. */
export const noopLogger: typeof noopLog = deprecatedObject(moved('noopLogger'), noopLog)
/** @deprecated Import it from `fastify-gatehouse/compat` (by default the package logs through Fastify's log); goes from here in 1.0. */
export const pinoLogger: typeof pinoLog = deprecatedFunction(moved('pinoLogger'), pinoLog)
/** @deprecated Import it from `fastify-gatehouse/compat` (by default the package logs through Fastify's log); goes from here in 1.0. */
export const stdLogger: typeof stdLog = deprecatedFunction(moved('stdLogger'), stdLog)
