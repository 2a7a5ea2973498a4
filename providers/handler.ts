/**
 * A self-implemented provider as a plugin (`gatehouse-handler`): the provider object, or a function building it on
 * the provider kit (to complete its logins), mounted at `{authPrefix}/<name>/…` behind the same login prelude as
 * every provider. The root's `{ kind: 'handler', provider }` entry and go-pkgz/auth's `addCustomHandler` register
 * this plugin; `app.register(handlerProvider, { provider })` does the same.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { checkKeys } from '../lib/options.js'
import { providerKit, type ProviderOrFactory } from '../plugins/core/kit.js'

/** Options of the handler plugin. */
export interface HandlerProviderOptions {
  /** The provider (`{ name, login, callback?, logout? }`), or a function `(kit) => provider`. Required. */
  provider: ProviderOrFactory
}

/** What a "too late" or malformed handler is named by: its provider's name, or `handler` for a factory. */
export function handlerName (provider: unknown): string {
  return typeof provider === 'function' ? 'handler' : String((provider as { name?: unknown } | null | undefined)?.name)
}

async function handler (fastify: FastifyInstance, opts: HandlerProviderOptions): Promise<void> {
  const provider = checkKeys(opts, ['provider'], 'handler').provider as ProviderOrFactory
  const kit = providerKit(fastify, handlerName(provider))
  // The kit's mount checks the provider (a name, login()) and refuses a duplicate name.
  kit.mount(typeof provider === 'function' ? provider(kit) : provider)
}

/** A self-implemented provider, mounted as it is (`gatehouse-handler`). */
export const handlerProvider = fp(handler, { name: 'gatehouse-handler', fastify: '5.x' })
