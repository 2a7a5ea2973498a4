/**
 * Mounting a provider: its routes `{authPrefix}/<name>/{login,callback,logout}` (GET and POST each), on the
 * Fastify instance of whoever mounts it (a provider plugin's own instance, or a child of the root's for
 * `addCustomHandler`). The registry of names lives with the core's internals, so names stay unique and
 * `/list` sees every provider, however it was mounted.
 *
 * The mount owns the login prelude of every provider, built-in or self-implemented: before `login()` runs,
 * a cross-site request is refused (403 `GATEHOUSE_CROSS_SITE`, see lib/login/cross-site.ts), the request is counted
 * (`rateLimit.login`, 429), and `aud`/`site`, `from` and `session`/`sess` are read and checked (400, 403 for an
 * audience outside `audiences`); the provider gets them as its third argument. `/logout` is cross-site guarded
 * too; `/callback` is not, since providers call it cross-site by design and state, PKCE and the handshake
 * cookie protect it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify'
import { HttpError, OptionsError } from '../../../lib/errors.js'
import { NAME_RE } from '../../../lib/options.js'
import { MAX_AUD, MAX_FROM, type LoginRequest } from '../../../lib/login/login-request.js'
import { openStateStore } from '../../../stores/state/resolve.js'
import { loginStep, tracedStateStore } from '../../../lib/telemetry/index.js'
import type { StateStore } from '../../../lib/state-store.js'
import type { AuthProvider } from '../base/types.js'
import { coreOf, type CoreInternals } from './internals.js'
import { loginPrelude, type PreludeRules } from './login.js'
import { applyAuthScope, routeDoc } from './scope.js'
import { auditCrossSite, auditLoginFailure, checkCrossSite } from './login-audit.js'
import { clearSiteCookies } from '../sessions/cookies.js'

/** Login forms, Apple's form_post and passkey assertions are small; anything larger is not a login. */
const LOGIN_BODY_LIMIT = 64 * 1024

/** How a provider's routes are mounted. */
export interface MountOptions {
  /**
   * Answers a cross-site request to `/login` instead of the 403 (e.g. a confirmation link opened from a webmail:
   * a page whose same-origin form goes on). Returning undefined refuses it as usual.
   */
  crossSiteLogin?: ((request: FastifyRequest, reply: FastifyReply) => FastifyReply | undefined | Promise<FastifyReply | undefined>) | undefined
  /**
   * Whether a `/login` request counts against `rateLimit.login`. Default: every one. (Telegram's browser polls
   * `/login?token=` while the user has not pressed start yet: those requests are not counted.)
   */
  countsAsLogin?: ((request: FastifyRequest) => boolean) | undefined
  /**
   * Whether a `/login` request continues a login begun earlier (a confirmation link, a passkey's answer), whose
   * audience that first step kept: then an audience is not required of it (one given is still checked).
   * Default: none does.
   */
  continuesLogin?: ((request: FastifyRequest) => boolean) | undefined
  /**
   * Further steps of the login, each mounted at `POST /login/<step>` behind the same prelude as `/login` (the
   * passkey provider's `/login/options`), always counted; an audience is required when `audiences` is set unless
   * the step's `continuesLogin` says the request continues a login whose audience is kept elsewhere.
   */
  loginSteps?: Record<string, LoginHandler | { handler: LoginHandler; continuesLogin?: ((request: FastifyRequest) => boolean) | undefined }> | undefined
}

/** A login route's handler: runs after the prelude, with the request's common fields checked. */
export type LoginHandler = (request: FastifyRequest, reply: FastifyReply, login: LoginRequest) => unknown

/**
 * What Fastify can check of a login's query: one bounded text per common field. A failure is answered by the
 * prelude, after the cross-site guard and the count, as 400 `bad request`; the prelude still reads the fields
 * itself (control characters, a POSTed form's fields).
 */
const LOGIN_QUERY_SCHEMA = {
  type: 'object',
  properties: {
    aud: { type: 'string', maxLength: MAX_AUD },
    site: { type: 'string', maxLength: MAX_AUD },
    from: { type: 'string', maxLength: MAX_FROM },
    session: { type: 'string', enum: ['', '0', '1', 'true', 'false'] },
    sess: { type: 'string', enum: ['', '0', '1', 'true', 'false'] }
  }
} as const

/**
 * Checks the provider and reserves its name now (so a duplicate fails at once, naming it), then registers its
 * routes on `instance`. After the server is ready this throws an OptionsError, for every way of adding one.
 */
export function mountProvider (instance: FastifyInstance, provider: AuthProvider, opts: MountOptions = {}): void {
  const core = coreOf(instance)
  checkProvider(provider)
  if (core.ready) throw afterReady(provider.name)
  if (core.providers.has(provider.name)) throw new OptionsError('providers', `has two providers named "${provider.name}"`)
  try {
    instance.register(async (scope) => { providerRoutes(scope, core, provider, opts) }, { prefix: `${core.options.authPrefix}/${provider.name}` })
  } catch (err) {
    throw afterReady(provider.name, err)
  }
  core.providers.set(provider.name, provider)
}

/** The one "too late" error, for a provider or a provider kit used once the server is ready. */
export function afterReady (name: string, cause?: unknown): OptionsError {
  return new OptionsError('providers', `cannot take "${name}" after the server is ready: add providers before listen() or ready()`, { cause })
}

function checkProvider (provider: AuthProvider): void {
  if (provider === null || typeof provider !== 'object') throw new OptionsError('providers', 'must hold provider objects')
  const name = provider.name
  if (typeof name !== 'string' || !NAME_RE.test(name)) throw new OptionsError('providers', `has a provider named ${JSON.stringify(name)}; names are 1-64 letters, digits, "_" or "-"`)
  if (typeof provider.login !== 'function') throw new OptionsError('providers', `has a provider "${name}" without login()`)
  for (const m of ['callback', 'logout'] as const) {
    if (provider[m] !== undefined && typeof provider[m] !== 'function') throw new OptionsError('providers', `has a provider "${name}" whose ${m} is not a function`)
  }
}

function providerRoutes (scope: FastifyInstance, core: CoreInternals, provider: AuthProvider, opts: MountOptions): void {
  applyAuthScope(scope, core.logger, core.options.audit)
  const guard = core.options.crossSite
  const name = provider.name
  const login = (method: HTTPMethods[], step: string, handler: LoginHandler, rulesOf: (request: FastifyRequest) => PreludeRules): void => {
    scope.route({
      method,
      url: step === 'start' ? '/login' : `/login/${step}`,
      bodyLimit: LOGIN_BODY_LIMIT,
      schema: routeDoc(`Signs in with ${name}${step === 'start' ? '' : ` (step ${step})`}`, { querystring: LOGIN_QUERY_SCHEMA }),
      // Checked in the prelude, after the cross-site guard and the count: a malformed request is refused as before.
      attachValidation: true,
      handler: async (request, reply) => await loginStep(name, step, reply, async () => {
        const rules = rulesOf(request)
        try {
          if (guard !== false && guard.isCrossSite(request)) {
            const answered = await opts.crossSiteLogin?.(request, reply)
            if (answered !== undefined) return answered
            auditCrossSite(core, request, 'login', name)
            guard.check(request)
          }
          return await handler(request, reply, await loginPrelude(core, request, rules))
        } catch (err) {
          auditLoginFailure(core, request, err, name, rules.counted)
          throw err
        }
      })
    })
  }
  login(['GET', 'POST'], 'start', (request, reply, fields) => provider.login(request, reply, fields),
    (request) => ({ counted: opts.countsAsLogin?.(request) ?? true, continues: opts.continuesLogin?.(request) ?? false, provider: name }))
  for (const [step, given] of Object.entries(opts.loginSteps ?? {})) {
    const { handler, continuesLogin } = typeof given === 'function' ? { handler: given, continuesLogin: undefined } : given
    login(['POST'], step, handler, (request) => ({ counted: true, continues: continuesLogin?.(request) ?? false, provider: name }))
  }
  scope.route({
    method: ['GET', 'POST'],
    url: '/callback',
    bodyLimit: LOGIN_BODY_LIMIT,
    schema: routeDoc(`Where ${name} sends the browser back after its sign-in`),
    handler: async (request, reply) => await loginStep(name, 'callback', reply, async () => {
      try {
        return await (provider.callback !== undefined ? provider.callback(request, reply) : noCallback(name))
      } catch (err) {
        auditLoginFailure(core, request, err, name, true)
        throw err
      }
    })
  })
  scope.route({
    method: ['GET', 'POST'],
    url: '/logout',
    bodyLimit: LOGIN_BODY_LIMIT,
    schema: routeDoc(`Signs out (${name})`),
    handler: async (request, reply) => {
      checkCrossSite(core, request, 'logout', name)
      if (provider.logout === undefined) return await core.logout(request, reply)
      clearSiteCookies(reply)
      return await provider.logout(request, reply)
    }
  })
}

/** The one answer of a provider that has no callback step. */
function noCallback (name: string): never {
  throw new HttpError(404, 'not found', `provider "${name}" has no callback`)
}

/** Names of the mounted providers, in registration order. */
export function providerNames (core: CoreInternals): string[] {
  return [...core.providers.keys()]
}

/**
 * The state store of a provider: its own option when given (an address it opens is closed with `instance`),
 * else the core's state store.
 */
export async function providerStateStore (instance: FastifyInstance, option: unknown, optionName: string): Promise<StateStore> {
  const core = coreOf(instance)
  if (option === undefined) return core.stateStore
  const { store, owned } = await openStateStore(option, optionName, (err) => core.logger.logf('[WARN] state store: %s', err.message))
  if (owned) instance.addHook('onClose', async () => { await store.close() })
  return tracedStateStore(store)
}
