/**
 * The root plugin: `fastify.register(authPlugin, opts)`. A composer: it splits one options object into the
 * parts each plugin reads (core, avatar proxy, each provider), registers those plugins, and adds the
 * `fastify.auth.add*Provider` methods of go-pkgz/auth v2. No plugin below it sees another's options.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { OptionsError } from '../lib/errors.js'
import { FASTIFY_KEYS } from '../lib/options.js'
import { corePlugin } from './core.js'
import { CORE_OPTION_KEYS, type CoreOptions } from './core/options.js'
import { avatarPlugin } from './avatar.js'
import type { AvatarFetchOptions, AvatarOptions } from './avatar/options.js'
import type { AvatarStore } from '../stores/types.js'
import { providerMethods, registerEntry, type ProviderEntry } from './provider-methods.js'

export type { ProviderEntry }

/** Options of the root plugin: the core's, the avatar proxy's (prefixed `avatar`) and the providers. */
export interface AuthOptions extends CoreOptions {
  /** Prefix of the avatar routes. Default `/avatar`. */
  avatarPrefix?: string
  /** Avatar store instance or address (`memory://`, `file://`, `bolt://`, `mongodb://`). Default in-memory. */
  avatarStore?: string | AvatarStore
  /** Resize avatars to at most this many pixels per side at store time; 0 disables. Default 0. */
  avatarResizeLimit?: number
  /** `max-age` of served avatars in seconds. Default 3600. */
  avatarMaxAge?: number
  /** Limits on fetching providers' pictures (size, time, redirects, pixels, private targets). */
  avatarFetch?: AvatarFetchOptions
  /** Providers to mount at registration (or register the provider plugins yourself, after this one). */
  providers?: ProviderEntry[]
}

/** Root option → avatar plugin option. */
const AVATAR_KEYS: Record<string, keyof AvatarOptions> = {
  avatarPrefix: 'prefix', avatarStore: 'store', avatarResizeLimit: 'resizeLimit', avatarMaxAge: 'maxAge', avatarFetch: 'fetch'
}

/** Splits the root options into each plugin's part; unknown keys are refused here, naming them. */
function split (opts: AuthOptions): { core: CoreOptions; avatar: AvatarOptions; providers: ProviderEntry[] } {
  if (opts === null || typeof opts !== 'object') throw new OptionsError('(options)', 'must be an object')
  const core: Record<string, unknown> = {}
  const avatar: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(opts)) {
    if (CORE_OPTION_KEYS.includes(key)) core[key] = value
    else if (Object.hasOwn(AVATAR_KEYS, key)) { if (value !== undefined) avatar[AVATAR_KEYS[key]!] = value } else if (key !== 'providers' && !FASTIFY_KEYS.includes(key)) throw new OptionsError(key, 'is not a known option')
  }
  const providers = opts.providers ?? []
  if (!Array.isArray(providers)) throw new OptionsError('providers', 'must be a list')
  return { core: core as unknown as CoreOptions, avatar: avatar as AvatarOptions, providers }
}

async function gatehouse (fastify: FastifyInstance, opts: AuthOptions): Promise<void> {
  const parts = split(opts)
  // Reuse the host's registrations when it already has them: registering these twice throws. Loaded here,
  // not at import, so that importing the package stays cheap.
  if (!fastify.hasDecorator('parseCookie')) await fastify.register((await import('@fastify/cookie')).default)
  if (!fastify.hasContentTypeParser('application/x-www-form-urlencoded')) {
    await fastify.register((await import('@fastify/formbody')).default, { bodyLimit: 64 * 1024 })
  }
  await fastify.register(corePlugin, parts.core)
  await fastify.register(avatarPlugin, parts.avatar)
  Object.assign(fastify.auth, providerMethods(fastify))
  for (const entry of parts.providers) registerEntry(fastify, entry)
}

/** The root plugin (`gatehouse`). Register once per application. */
export const authPlugin = fp(gatehouse, { name: 'gatehouse', fastify: '5.x' })
export default authPlugin
