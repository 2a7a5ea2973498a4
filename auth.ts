/**
 * The root plugin: `fastify.register(authPlugin, opts)`. A composer: it splits one options object into the
 * parts each plugin reads (core, avatar proxy, each provider), registers those plugins, and decorates
 * `fastify.auth` once: the core's API with the `add*Provider` methods of go-pkgz/auth v2 (compat.ts). No plugin below it sees another's options.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { ErrorCodes, GatehouseError, OptionsError } from './lib/errors.js'
import { checkKeys, keyList } from './lib/options.js'
import { openCore } from './plugins/core/plugin.js'
import { registerLazyCookies } from './plugins/core/cookie-jar.js'
import { CORE_OPTION_KEYS, type CoreOptions } from './plugins/core/options.js'
import { avatarPlugin } from './plugins/avatar/plugin.js'
import type { AvatarOptions } from './plugins/avatar/options.js'
import { providerMethods, registerEntry, type ProviderEntry, type ProviderMethods } from './compat.js'
import type { GatehouseAuth } from './plugins/core/types.js'

export type { ProviderEntry }

/**
 * The app's API as `fastify.auth` carries it: the core's (`GatehouseAuth`) and the `add*Provider` methods. The
 * type to declare a renamed decorator (`decoratorName`) with.
 */
export type GatehouseApi = GatehouseAuth & ProviderMethods

/** Options of the root plugin: the core's, the avatar proxy's (`avatar`) and the providers. */
export interface AuthOptions extends CoreOptions {
  /**
   * The avatar proxy (see the README's "Avatars"): `{ prefix, store, resizeLimit, maxAge, fetch }`, on by default
   * with an in-memory store. `false`: no avatar proxy, and providers' picture links are dropped from the user.
   */
  avatar?: AvatarOptions | false | undefined
  /** Providers to mount at registration (or register the provider plugins yourself, after this one). */
  providers?: ProviderEntry[] | undefined
}

/** The keys of the root plugin besides the core's. */
const ROOT_KEYS = keyList<Omit<AuthOptions, keyof CoreOptions>>({ avatar: true, providers: true })

/** Splits the root options into each plugin's part; unknown keys are refused here, naming them. */
function split (opts: AuthOptions): { core: CoreOptions; avatar: AvatarOptions | false; providers: ProviderEntry[] } {
  const all = checkKeys(opts, [...CORE_OPTION_KEYS, ...ROOT_KEYS])
  const core: Record<string, unknown> = {}
  for (const key of CORE_OPTION_KEYS) if (Object.hasOwn(all, key)) core[key] = all[key]
  const avatar = opts.avatar ?? {}
  if (avatar !== false && (avatar === null || typeof avatar !== 'object' || Array.isArray(avatar))) {
    throw new OptionsError('avatar', 'must be an object of avatar options or false')
  }
  const providers = opts.providers ?? []
  if (!Array.isArray(providers)) throw new OptionsError('providers', 'must be a list')
  return { core: core as unknown as CoreOptions, avatar, providers }
}

async function gatehouse (fastify: FastifyInstance, opts: AuthOptions): Promise<void> {
  const parts = split(opts)
  // Reuse the host's @fastify/cookie when it has one: registering it twice throws. Loaded here, not at import,
  // so that importing the package stays cheap. Without the host's own, `request.cookies` is parsed only when
  // something reads it. Forms are parsed in the auth routes' own scopes (core/scope.ts).
  if (!fastify.hasDecorator('parseCookie')) {
    await registerLazyCookies(fastify)
    explainLateCookie(fastify)
  }
  const core = await openCore(fastify, parts.core)
  // The app's API, composed once: the core's and the seed's registration methods (compat.ts).
  const api: GatehouseApi = { ...core.api, ...providerMethods(fastify) }
  fastify.decorate(core.decoratorName, api)
  if (parts.avatar !== false) await fastify.register(avatarPlugin, parts.avatar)
  for (const entry of parts.providers) registerEntry(fastify, entry)
}

const COOKIE_DECORATORS = new Set(['parseCookie', 'serializeCookie', 'signCookie', 'unsignCookie'])

/**
 * @fastify/cookie registered by the host after this plugin (which registered it, finding none) fails on its first
 * decorator with Fastify's "decorator 'serializeCookie' has already been added": that error is given a cause and
 * a remedy here. Every other decoration goes through Fastify's own `decorate`, unchanged.
 */
function explainLateCookie (fastify: FastifyInstance): void {
  const decorate = fastify.decorate as (this: FastifyInstance, name: string, ...rest: unknown[]) => FastifyInstance
  fastify.decorate = function (this: FastifyInstance, name: string, ...rest: unknown[]) {
    try {
      return decorate.call(this, name, ...rest)
    } catch (err) {
      if (!COOKIE_DECORATORS.has(name) || (err as { code?: string | undefined }).code !== 'FST_ERR_DEC_ALREADY_PRESENT') throw err
      throw new GatehouseError(`fastify-gatehouse: @fastify/cookie is registered after authPlugin, which found none and registered it (decorator "${name}" exists): register @fastify/cookie before authPlugin, which then uses yours`, ErrorCodes.OPTION, { cause: err })
    }
  } as FastifyInstance['decorate']
}

/** The root plugin (`gatehouse`). Register once per application. */
export const authPlugin = fp(gatehouse, { name: 'gatehouse', fastify: '5.x' })
export default authPlugin
