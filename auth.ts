/**
 * The root plugin: `fastify.register(authPlugin, opts)`. A composer: it splits one options object into the
 * parts each plugin reads (core, avatar proxy, each provider), registers those plugins, and decorates
 * `fastify.auth` once: the core's API with the `add*Provider` methods of go-pkgz/auth v2 (provider-entries.ts). No
 * plugin below it sees another's options.
 *
 * The core, the avatar proxy and the provider entries are imported when the plugin is registered, not when the
 * package is (issue 46: importing `fastify-gatehouse` costs little more than importing Fastify); the provider kit
 * with them, for the root entry's deprecated `providerKit` (kit-handle.ts).
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { OptionsError } from './lib/errors.js'
import { checkKeys } from './lib/options.js'
import type { CoreOptions } from './plugins/core/options.js'
import type { AvatarOptions } from './plugins/avatar/options.js'
import type { ProviderEntry } from './provider-entries.js'
import type { GatehouseAuth } from './plugins/core/base/types.js'

export type { ProviderEntry }

/**
 * The type of `fastify.auth`, which is `GatehouseAuth` (with the `add*Provider` methods: augment.ts).
 * @deprecated Use `GatehouseAuth`, the one name of `fastify.auth`'s type; goes in 1.0.
 */
export type GatehouseApi = GatehouseAuth

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

/** The keys of the root plugin besides the core's (a record of them: the compiler refuses a list that misses one). */
const ROOT_KEYS = Object.keys({ avatar: true, providers: true } satisfies Record<keyof Omit<AuthOptions, keyof CoreOptions>, true>)

/** Splits the root options into each plugin's part; unknown keys are refused here, naming them. */
function split (opts: AuthOptions, coreKeys: readonly string[]): { core: CoreOptions; avatar: AvatarOptions | false; providers: ProviderEntry[] } {
  const all = checkKeys(opts, [...coreKeys, ...ROOT_KEYS])
  const core: Record<string, unknown> = {}
  for (const key of coreKeys) if (Object.hasOwn(all, key)) core[key] = all[key]
  const avatar = opts.avatar ?? {}
  if (avatar !== false && (avatar === null || typeof avatar !== 'object' || Array.isArray(avatar))) {
    throw new OptionsError('avatar', 'must be an object of avatar options or false')
  }
  const providers = opts.providers ?? []
  if (!Array.isArray(providers)) throw new OptionsError('providers', 'must be a list')
  return { core: core as unknown as CoreOptions, avatar, providers }
}

async function gatehouse (fastify: FastifyInstance, opts: AuthOptions): Promise<void> {
  const [{ openCore }, { CORE_OPTION_KEYS }, { avatarPlugin }, { providerMethods, registerEntry }] = await Promise.all([
    import('./plugins/core/plugin.js'), import('./plugins/core/options.js'), import('./plugins/avatar/plugin.js'), import('./provider-entries.js'),
    import('./plugins/core/kit.js')
  ])
  const parts = split(opts, CORE_OPTION_KEYS)
  // Nothing of the host's Fastify is decorated for cookies: the package reads and writes its own cookies itself
  // (core/cookie-jar.ts), and the auth routes' scopes have @fastify/cookie. A host may register @fastify/cookie
  // before or after this plugin, or not at all. Forms are parsed in the auth routes' own scopes (core/scope.ts).
  const core = await openCore(fastify, parts.core)
  // The app's API, composed once: the core's and the seed's registration methods (provider-entries.ts). Added onto the
  // core's object (the provider kit's `api` is the same one), not spread: its old names are getters that warn.
  const api: GatehouseAuth = Object.assign(core.api, providerMethods(fastify))
  fastify.decorate(core.decoratorName, api)
  if (parts.avatar !== false) await fastify.register(avatarPlugin, parts.avatar)
  for (const entry of parts.providers) registerEntry(fastify, entry)
}

/** The root plugin (`gatehouse`). Register once per application. */
export const authPlugin = fp(gatehouse, { name: 'gatehouse', fastify: '5.x' })
export default authPlugin
