/**
 * The root plugin: `fastify.register(authPlugin, opts)`. A composer: it splits one options object into the
 * parts each plugin reads (core, avatar proxy, each provider), registers those plugins, and adds the
 * `fastify.auth.add*Provider` methods of go-pkgz/auth v2. No plugin below it sees another's options.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { OptionsError } from '../lib/errors.js'
import { checkKeys, keyList } from '../lib/options.js'
import { corePlugin } from './core.js'
import { registerLazyCookies } from './core/cookie-jar.js'
import { CORE_OPTION_KEYS, type CoreOptions } from './core/options.js'
import { avatarPlugin } from './avatar.js'
import type { AvatarOptions } from './avatar/options.js'
import { providerMethods, registerEntry, type ProviderEntry } from './provider-methods.js'

export type { ProviderEntry }

/** Options of the root plugin: the core's, the avatar proxy's (`avatar`) and the providers. */
export interface AuthOptions extends CoreOptions {
  /**
   * The avatar proxy (see the README's "Avatars"): `{ prefix, store, resizeLimit, maxAge, fetch }`, on by default
   * with an in-memory store. `false`: no avatar proxy, and providers' picture links are dropped from the user.
   */
  avatar?: AvatarOptions | false
  /** Providers to mount at registration (or register the provider plugins yourself, after this one). */
  providers?: ProviderEntry[]
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
  // Reuse the host's registrations when it already has them: registering these twice throws. Loaded here,
  // not at import, so that importing the package stays cheap.
  // Without the host's own @fastify/cookie, `request.cookies` is parsed only when something reads it.
  if (!fastify.hasDecorator('parseCookie')) await registerLazyCookies(fastify)
  if (!fastify.hasContentTypeParser('application/x-www-form-urlencoded')) {
    await fastify.register((await import('@fastify/formbody')).default, { bodyLimit: 64 * 1024 })
  }
  await fastify.register(corePlugin, parts.core)
  if (parts.avatar !== false) await fastify.register(avatarPlugin, parts.avatar)
  Object.assign(fastify.auth, providerMethods(fastify))
  for (const entry of parts.providers) registerEntry(fastify, entry)
}

/** The root plugin (`gatehouse`). Register once per application. */
export const authPlugin = fp(gatehouse, { name: 'gatehouse', fastify: '5.x' })
export default authPlugin
