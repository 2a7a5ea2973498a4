/**
 * The root plugin: `fastify.register(authPlugin, opts)`. Composes cookies, form bodies, the auth core, the
 * avatar proxy and every provider named in `opts.providers` from one options object.
 */
import fp from 'fastify-plugin'
import cookie from '@fastify/cookie'
import formbody from '@fastify/formbody'
import type { FastifyInstance } from 'fastify'
import { corePlugin } from './core.js'
import { avatarPlugin, type AvatarOptions } from './avatar.js'
import { OptionsError, type AuthOptions, type ProviderEntry } from './core/options.js'
import type { GatehouseAuth } from './core/types.js'

async function gatehouse (fastify: FastifyInstance, opts: AuthOptions): Promise<void> {
  // Reuse the host's registrations when it already has them: registering these twice throws.
  if (!fastify.hasDecorator('parseCookie')) await fastify.register(cookie)
  if (!fastify.hasContentTypeParser('application/x-www-form-urlencoded')) await fastify.register(formbody, { bodyLimit: 64 * 1024 })
  await fastify.register(corePlugin, opts)
  const o = fastify.auth.options
  await fastify.register(avatarPlugin, {
    store: o.avatarStore as AvatarOptions['store'],
    prefix: o.avatarPrefix,
    resizeLimit: o.avatarResizeLimit,
    url: o.url,
    ...(o.avatarFetch !== undefined ? { fetch: o.avatarFetch } : {})
  })
  for (const entry of fastify.auth.options.providers) await addEntry(fastify.auth, entry)
}

async function addEntry (auth: GatehouseAuth, entry: ProviderEntry): Promise<void> {
  switch (entry?.kind) {
    case 'direct': return auth.addDirectProvider(entry.name, entry.checker)
    case 'handler': return auth.addCustomHandler(entry.handler)
    case 'oauth2': return auth.addProvider(entry.name, entry.cid, entry.csecret, entry.overrides)
    case 'dev': auth.addDevProvider(entry.port, entry.options); return
    case 'custom': return auth.addCustomProvider(entry.name, entry.client, entry.options)
    case 'oidc': return await auth.addOidcProvider(entry.name, entry.client, entry.options)
    case 'apple': return await auth.addAppleProvider(entry.config, entry.keyLoader)
    case 'verify': return auth.addVerifProvider(entry.name, entry.template, entry.sender, entry.options)
    case 'telegram': return auth.addTelegramProvider(entry.options)
    default: throw new OptionsError('providers', `has an entry of unknown kind ${JSON.stringify((entry as { kind?: unknown })?.kind)}`)
  }
}

/** The root plugin. Register once per application. */
export const authPlugin = fp(gatehouse, { name: 'gatehouse', fastify: '5.x' })
export default authPlugin
