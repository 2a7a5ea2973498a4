/**
 * The values the root entry exported before 1.0 and that now live in another entry, or in none: each keeps
 * working until 1.0 and warns once when used (lib/deprecation.ts; the list is docs/guide/upgrading.md). Loaded by
 * the root entry, so each loads no more than it must: what it wraps is imported when it is used, wherever the
 * wrapped function answers later anyway (a plugin, a promise, a loader).
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import { deprecatedFunction, deprecatedObject, warnMoved } from './lib/deprecation.js'
import { userId as userIdOf } from './lib/user.js'
import { safeEqual as equal } from './lib/compare.js'
import { readLoginRequest as readLogin, requestFields as fieldsOf } from './lib/login/login-request.js'
import { sendError as answerError } from './lib/errors.js'
import { AUDIT_EVENT_TYPES as eventTypes } from './lib/audit/events.js'
import { Audit as AuditClass } from './lib/audit/audit.js'
import { MemoryRefreshCache as RefreshCacheClass } from './plugins/core/base/refresh-cache.js'
import { normaliseAccountName as normalise } from './lib/throttle/lockout.js'
import { mapStandardClaims as standardClaims } from './providers/oauth2/fields.js'
import { builtinProviders as builtins, OAUTH2_BUILTIN_NAMES as builtinNames } from './providers/oauth2/builtins.js'
import { breachedPasswords as breached } from './lib/breached-passwords.js'
import { hcaptchaVerifier as hcaptcha, recaptchaV3Verifier as recaptcha, turnstileVerifier as turnstile } from './lib/captcha/siteverify.js'
import { SmtpSender as Smtp } from './providers/email/smtp.js'
import type { providerKit as kitOf } from './plugins/core/kit.js'
import { kitHandle } from './plugins/core/base/kit-handle.js'
import { OptionsError } from './lib/errors.js'
import { handlerProvider as handler } from './providers/lazy.js'
import type { appleKeyFromFile as appleKey } from './providers/oauth2/apple.js'
import type { discoverOidc as discover } from './providers/oauth2/oidc.js'
import type { getProviderToken as getToken, revokeProviderToken as revokeToken } from './providers/oauth2/provider-tokens.js'
import type { AvatarOptions } from './plugins/avatar/options.js'

const PROVIDERS = 'fastify-gatehouse/providers'
const COMPAT = 'fastify-gatehouse/compat'
const moved = (name: string, to: string | null, instead?: string) => () => { warnMoved(name, to, instead) }

// Moved to fastify-gatehouse/providers.
/** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
export const appleKeyFromFile: typeof appleKey = (path) => {
  warnMoved('appleKeyFromFile', PROVIDERS)
  return async () => (await import('./providers/oauth2/apple.js')).appleKeyFromFile(path)()
}
/** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
export const discoverOidc: typeof discover = async (issuer, opts) => {
  warnMoved('discoverOidc', PROVIDERS)
  return await (await import('./providers/oauth2/oidc.js')).discoverOidc(issuer, opts)
}
/** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
export const getProviderToken: typeof getToken = async (request, name) => {
  warnMoved('getProviderToken', PROVIDERS)
  return await (await import('./providers/oauth2/provider-tokens.js')).getProviderToken(request, name)
}
/** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
export const revokeProviderToken: typeof revokeToken = async (request, name) => {
  warnMoved('revokeProviderToken', PROVIDERS)
  return await (await import('./providers/oauth2/provider-tokens.js')).revokeProviderToken(request, name)
}
/** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
export const mapStandardClaims: typeof standardClaims = deprecatedFunction(moved('mapStandardClaims', PROVIDERS), standardClaims)
/** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
export const builtinProviders: typeof builtins = deprecatedObject(moved('builtinProviders', PROVIDERS), builtins)
/** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
export const OAUTH2_BUILTIN_NAMES: typeof builtinNames = deprecatedObject(moved('OAUTH2_BUILTIN_NAMES', PROVIDERS), builtinNames)
/** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
export const breachedPasswords: typeof breached = deprecatedFunction(moved('breachedPasswords', PROVIDERS), breached)
/** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
export const normaliseAccountName: typeof normalise = deprecatedFunction(moved('normaliseAccountName', PROVIDERS), normalise)
/** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
export const turnstileVerifier: typeof turnstile = deprecatedFunction(moved('turnstileVerifier', PROVIDERS), turnstile)
/** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
export const hcaptchaVerifier: typeof hcaptcha = deprecatedFunction(moved('hcaptchaVerifier', PROVIDERS), hcaptcha)
/** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
export const recaptchaV3Verifier: typeof recaptcha = deprecatedFunction(moved('recaptchaV3Verifier', PROVIDERS), recaptcha)
/** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
export const SmtpSender: typeof Smtp = deprecatedObject(moved('SmtpSender', PROVIDERS), Smtp)
/** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
export type SmtpSender = Smtp
/** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
export const providerKit: typeof kitOf = (fastify, who = 'providers') => {
  warnMoved('providerKit', PROVIDERS)
  // Set once the root plugin was registered (it loads the kit); before, the kit's own error.
  if (kitHandle.providerKit === undefined) throw new OptionsError(who, 'needs the auth core: register authPlugin first')
  return kitHandle.providerKit(fastify, who) as ReturnType<typeof kitOf>
}
/** @deprecated Import it from `fastify-gatehouse/providers`; goes from the root in 1.0. */
export const handlerProvider: typeof handler = deprecatedObject(moved('handlerProvider', PROVIDERS), handler)

// Moved to fastify-gatehouse/compat (go-pkgz's shapes).
export { funcLogger, noopLogger, pinoLogger, stdLogger } from './lib/logging/deprecated-loggers.js'
/** @deprecated Import it from `fastify-gatehouse/compat`; goes from the root in 1.0. */
export const userId: typeof userIdOf = deprecatedFunction(moved('userId', COMPAT), userIdOf)

// Out of the public API.
/** @deprecated Internal from 1.0: `sendError` is the toolkit's (`fastify-gatehouse/toolkit`); goes from the root in 1.0. */
export const sendError: typeof answerError = deprecatedFunction(moved('sendError', 'fastify-gatehouse/toolkit'), answerError)
/** @deprecated Internal from 1.0 (compare secrets with `crypto.timingSafeEqual`); goes in 1.0. */
export const safeEqual: typeof equal = deprecatedFunction(moved('safeEqual', null, 'compare secrets with crypto.timingSafeEqual'), equal)
/** @deprecated Internal from 1.0 (a provider gets the login request as the third argument of `login()`); goes in 1.0. */
export const readLoginRequest: typeof readLogin = deprecatedFunction(moved('readLoginRequest', null, 'a provider gets it as the third argument of login()'), readLogin)
/** @deprecated Internal from 1.0 (a provider gets the login request as the third argument of `login()`); goes in 1.0. */
export const requestFields: typeof fieldsOf = deprecatedFunction(moved('requestFields', null, 'a provider gets the login request as the third argument of login()'), fieldsOf)
/** @deprecated Internal from 1.0 (the event catalogue is docs/reference/events.md, the type `AuditEventType`); goes in 1.0. */
export const AUDIT_EVENT_TYPES: typeof eventTypes = deprecatedObject(moved('AUDIT_EVENT_TYPES', null, 'the type AuditEventType names every event'), eventTypes)
/** @deprecated Internal from 1.0 (listen with the `onEvent` option or the `gatehouse:audit` channel); goes in 1.0. */
export const Audit: typeof AuditClass = deprecatedObject(moved('Audit', null, 'listen with onEvent or the gatehouse:audit channel'), AuditClass)
/** @deprecated Internal from 1.0 (listen with the `onEvent` option or the `gatehouse:audit` channel); goes in 1.0. */
export type Audit = AuditClass
/** @deprecated Internal from 1.0 (the default of `session.refreshCache`); goes in 1.0. */
export const MemoryRefreshCache: typeof RefreshCacheClass = deprecatedObject(moved('MemoryRefreshCache', null, 'it is the default of session.refreshCache'), RefreshCacheClass)
/** @deprecated Internal from 1.0 (the default of `session.refreshCache`); goes in 1.0. */
export type MemoryRefreshCache = RefreshCacheClass

/**
 * The avatar proxy as a plugin of its own.
 * @deprecated Internal from 1.0: `authPlugin` registers it (its `avatar` option; `false` for none); goes in 1.0.
 */
export const avatarPlugin: FastifyPluginAsync<AvatarOptions> = fp(async (fastify: FastifyInstance, opts: AvatarOptions) => {
  warnMoved('avatarPlugin', null, 'authPlugin registers it (its avatar option)')
  await fastify.register((await import('./plugins/avatar/plugin.js')).avatarPlugin, opts)
}, { name: 'gatehouse-avatar', fastify: '5.x' })
