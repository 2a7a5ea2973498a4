/**
 * The HTTP toolkit's public API, re-exported by toolkit.ts (`fastify-gatehouse/toolkit`): each plugin can be
 * registered on its own; per-request checks also come as hook functions for route options, `maybe` and `wrap`.
 * Internals stay in their modules. Configuration mistakes throw an `OptionsError` naming the option as
 * `<plugin>.<option>` (`sizeLimit.limit`, `basicAuth.bcryptHash`, `rewrite.rules[2]`, …).
 */
export { appInfoPlugin, appInfoHook, type AppInfoOptions } from './app-info.js'
export { pingPlugin, pingHook } from './ping.js'
export { healthPlugin, type CheckFunc, type CheckResult, type HealthOptions, type NamedCheck } from './health.js'
export { requestLoggerPlugin, sanitizeUrl, SECRET_KEY_WORDS, type RequestLoggerOptions } from './logger.js'
export { recovererPlugin, recovererErrorHandler, type RecovererOptions } from './recoverer.js'
export { onlyFromPlugin, onlyFromHook, type OnlyFromOptions } from './only-from.js'
export { metricsPlugin, type MetricsOptions, type MetricsFormat } from './metrics.js'
export { prometheusText } from './prometheus.js'
export { profilerPlugin, type ProfilerOptions } from './profiler.js'
export { blackWordsPlugin, blackWordsHook, type BlackWordsOptions } from './black-words.js'
export { sizeLimitPlugin, sizeLimitHook, type SizeLimitOptions } from './size-limit.js'
export {
  requestIdPlugin, requestIdHook, requestId, REQUEST_ID_HEADER,
  /** @deprecated Use `requestIdPlugin`; goes in 1.0. */
  tracePlugin
} from './request-id.js'
export { deprecationPlugin, deprecationHook, type DeprecationOptions } from './deprecation.js'
export { rewritePlugin, rewriteUrl, type RewriteOptions, type RewriteRule, type RewriteRules } from './rewrite.js'
export { noCachePlugin, noCacheHook, NO_CACHE_HEADERS } from './no-cache.js'
export { headersPlugin, headersHook, type HeadersOptions } from './headers.js'
export { gzipPlugin, type GzipOptions } from './gzip.js'
export { corsPlugin, type CorsOptions } from './cors.js'
export { secureHeadersPlugin, type SecureHeadersOptions } from './secure-headers.js'
export { crossOriginProtectionPlugin, crossOriginProtectionHook, type CrossOriginProtectionOptions } from './cross-origin.js'
export { timeoutPlugin, timeoutHook, type TimeoutOptions } from './timeout.js'
export { cacheControlPlugin, cacheControlHook, cacheEtag, type CacheControlOptions } from './cache-control.js'
export { cleanPathPlugin, stripSlashesPlugin, cleanPath, stripSlashes } from './clean-path.js'
export { realIpPlugin, realIpHook, realIp, type RealIpOptions } from './real-ip.js'
export { maybe, reject, maybePlugin, rejectPlugin, type HookStage, type MaybeOptions, type RejectOptions } from './maybe.js'
export { benchmarksPlugin, Benchmarks, type BenchmarkReport, type BenchmarksOptions } from './benchmarks.js'
export {
  basicAuth, withUserPasswd, withPrompt, withBcryptHash, withArgon2Hash, basicAuthPlugin, parseBasicCredentials,
  type BasicAuthOptions, type BasicChecker, type BasicCredentials, type BasicAuthHookOptions
} from './basic-auth.js'
export type { BasicAuthThrottleOptions, BasicAuthThrottle } from './basic-auth-throttle.js'
export { bcryptHash, argon2Hash, bcryptVerify, argon2Verify, decodeArgon2Secret, type Argon2Params, type Argon2Secret } from './password-hash.js'
export { fileServerPlugin, type FileServerOptions } from './file-server.js'
export type { RequestHook, RequestPredicate } from './hook.js'

// Until 1.0: the names this entry had before (docs/guide/upgrading.md); each is deprecated, the values warn once.
export {
  wrap, renderJSON, renderJSONFromBytes, renderJSONWithHTML, encodeJSON, decodeJSON, sendErrorJSON, errorLogger, publish, VarRegistry,
  expvarSnapshot, parseFromTo, parseTimestamp, appInfoHeaders, deprecationHeaders, isPing, runChecks, etagMatches, containsBlackWord
} from './deprecated.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/compat`; goes from the toolkit in 1.0. */
  JSONObject,
  /** @deprecated Import it from `fastify-gatehouse/compat`; goes from the toolkit in 1.0. */
  RouteHandler,
  /** @deprecated Import it from `fastify-gatehouse/compat`; goes from the toolkit in 1.0. */
  ErrorSender
} from './helpers.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/compat`; goes from the toolkit in 1.0. */
  FromTo,
  /** @deprecated Import it from `fastify-gatehouse/compat`; goes from the toolkit in 1.0. */
  FromToOptions
} from './from-to.js'
export type {
  /** @deprecated Import it from `fastify-gatehouse/compat`; goes from the toolkit in 1.0. */
  VarFunc
} from './metrics.js'
export type {
  /** @deprecated Internal from 1.0 (an entry of the health plugin's answer); goes in 1.0. */
  HealthEntry
} from './health.js'
export type {
  /** @deprecated Internal from 1.0 (a window of `BenchmarkReport`); goes in 1.0. */
  BenchmarkStats
} from './benchmarks.js'
export type {
  /** @deprecated Internal from 1.0 (use `RequestHook`); goes in 1.0. */
  ToolkitHook
} from './hook.js'
