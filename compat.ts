/**
 * The one path every provider takes into an app: a provider entry (`{ kind, …its plugin's options }`) is
 * handed to that kind's plugin, which validates it, once. The root's `providers` list goes through
 * `registerEntry`, and so do go-pkgz/auth v2's registration calls on `fastify.auth` (`addProvider`,
 * `addDirectProvider`, …), which only build the entry from their positional arguments. They work until the
 * server is ready; after that each throws the same OptionsError.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import { OptionsError } from './lib/errors.js'
import { didYouMean } from './lib/options.js'
import { afterReady } from './plugins/core/mount.js'
import type { ProviderOrFactory } from './plugins/core/kit.js'
import type { CredChecker } from './plugins/core/types.js'
import type { RunningOAuth2Server } from './servers/dev-server.js'
import { directProvider, type DirectProviderOptions } from './providers/direct.js'
import { handlerName, handlerProvider, type HandlerProviderOptions } from './providers/handler.js'
import {
  appleProvider, oauth2Provider, oidcProvider, preparedOAuth2Provider,
  type AppleProviderOptions, type OAuth2ProviderOptions, type OidcPluginOptions
} from './providers/oauth2/plugins.js'
import type { OAuth2Overrides } from './providers/oauth2/builtins.js'
import type { CustomClient, CustomProviderOptions } from './providers/oauth2/custom.js'
import type { OidcProviderOptions } from './providers/oauth2/oidc.js'
import { appleConfig, type AppleConfig, type AppleKeyLoader } from './providers/oauth2/apple.js'
import { devProvider, type DevProviderOptions } from './providers/oauth2/dev.js'
import { verifyProvider, type VerifyOptions, type VerifyProviderOptions } from './providers/verify/provider.js'
import type { Sender, SenderFunc } from './providers/verify/sender.js'
import { telegramProvider } from './providers/telegram/provider.js'
import type { TelegramOptions } from './providers/telegram/options.js'
import { passkeyProvider } from './providers/passkey/provider.js'
import type { PasskeyProviderOptions } from './providers/passkey/options.js'
import { totpProvider } from './providers/totp/provider.js'
import { samlProvider } from './providers/saml/provider.js'
import type { SamlProviderOptions } from './providers/saml/options.js'
import type { TotpProviderOptions } from './providers/totp/options.js'
import { coreOf } from './plugins/core/internals.js'

/**
 * A provider in the root's `providers` list: its plugin's options plus `kind`. The entry minus `kind` is what
 * `app.register(<kind>Provider, options)` would take.
 */
export type ProviderEntry =
  | ({ kind: 'direct' } & DirectProviderOptions)
  | ({ kind: 'oauth2' } & OAuth2ProviderOptions)
  | ({ kind: 'oidc' } & OidcPluginOptions)
  | ({ kind: 'apple' } & AppleProviderOptions)
  | ({ kind: 'dev' } & DevProviderOptions)
  | ({ kind: 'verify' } & VerifyProviderOptions)
  | ({ kind: 'telegram' } & TelegramOptions)
  | ({ kind: 'passkey' } & PasskeyProviderOptions)
  | ({ kind: 'totp' } & TotpProviderOptions)
  | ({ kind: 'saml' } & SamlProviderOptions)
  /**
   * A self-implemented provider (the `handlerProvider` plugin, as `addCustomHandler` registers it): the provider,
   * or a function building it on the provider kit (which completes its logins).
   */
  | ({ kind: 'handler' } & HandlerProviderOptions)

/** The plugin of each kind of entry. */
const PLUGINS: Record<ProviderEntry['kind'], FastifyPluginAsync<never>> = {
  direct: directProvider,
  oauth2: oauth2Provider,
  oidc: oidcProvider,
  apple: appleProvider,
  dev: devProvider,
  verify: verifyProvider,
  telegram: telegramProvider,
  passkey: passkeyProvider,
  totp: totpProvider,
  saml: samlProvider,
  handler: handlerProvider
}

/** What `addDevProvider` returns: the dev server once the app is ready. */
export interface DevProviderHandle {
  /** The running dev server (its `url` has the bound port), once the app is ready; undefined before and after. */
  readonly server: RunningOAuth2Server | undefined
}

/** Registration methods `authPlugin` adds to `fastify.auth`. Call them before the server is ready. */
export interface ProviderMethods {
  /** A built-in OAuth2 provider (github, google, facebook, microsoft, yandex, battlenet, patreon, discord, twitter) or `dev`. */
  addProvider(name: string, cid: string, csecret: string, overrides?: OAuth2Overrides): void
  /** The `dev` provider and its fake OAuth2 server (default port 8084), started and stopped with the app. */
  addDevProvider(port?: number, opts?: DevProviderOptions): DevProviderHandle
  /** Direct (credential-checker) login. */
  addDirectProvider(name: string, checker: CredChecker): void
  /** Verified (confirmation-token) login: template with `{{.Address}} {{.User}} {{.Token}} {{.Site}}`, sender. */
  addVerifProvider(name: string, template: string, sender: Sender | SenderFunc, opts?: VerifyOptions): void
  /** Any third-party OAuth2 provider under a name that is not a built-in's. */
  addCustomProvider(name: string, client: CustomClient, opts: CustomProviderOptions): void
  /** A generic OpenID Connect provider found through the issuer's discovery document (discovery runs at ready). */
  addOidcProvider(name: string, client: CustomClient, opts: OidcProviderOptions): void
  /** Sign in with Apple; rejects when the configuration or the private key is bad. */
  addAppleProvider(config: AppleConfig, keyLoader: AppleKeyLoader): Promise<void>
  /** Telegram-bot login (polls the Bot API in the background while the app runs). */
  addTelegramProvider(opts: TelegramOptions): void
  /**
   * Mounts a self-implemented provider at `{authPrefix}/<name>/…` when the app loads its plugins (so a bad or
   * duplicate provider fails `ready()` with an OptionsError), behind the same login prelude as every provider.
   * Give a function `(kit) => provider` to complete logins through the provider kit.
   */
  addCustomHandler(provider: ProviderOrFactory): void
}

/** Registers one entry's provider on `fastify` (in the order the app loads its plugins). */
export function registerEntry (fastify: FastifyInstance, entry: ProviderEntry): void {
  if (entry === null || typeof entry !== 'object') throw new OptionsError('providers', 'must hold provider entries ({kind, …})')
  const { kind, ...opts } = entry
  const plugin = Object.hasOwn(PLUGINS, String(kind)) ? PLUGINS[kind] : undefined
  if (plugin === undefined) {
    const kinds = Object.keys(PLUGINS)
    throw new OptionsError('providers', `has an entry of unknown kind ${JSON.stringify(kind)} (${kinds.join(', ')})${didYouMean(String(kind), kinds)}`)
  }
  const name = kind === 'handler' ? handlerName((opts as { provider?: unknown }).provider) : String((opts as { name?: unknown }).name ?? kind)
  // Registering after start is refused by Fastify too; one OptionsError says so for every way alike.
  if (coreOf(fastify).ready) throw afterReady(name)
  try {
    fastify.register(plugin as FastifyPluginAsync, opts)
  } catch (err) {
    throw afterReady(name, err)
  }
}

/** The seed's methods, bound to the instance the root plugin was registered on: each builds an entry. */
export function providerMethods (fastify: FastifyInstance): ProviderMethods {
  const add = (entry: ProviderEntry): void => { registerEntry(fastify, entry) }
  const methods: ProviderMethods = {
    addProvider (name, cid, csecret, overrides) {
      if (name === 'dev') { methods.addDevProvider(); return }
      add({ ...overrides, kind: 'oauth2', name, cid, csecret } as ProviderEntry)
    },
    addDevProvider (port, opts = {}) {
      let server: RunningOAuth2Server | undefined
      const onServer = (s: RunningOAuth2Server): void => { server = s; opts.onServer?.(s) }
      add({ ...opts, kind: 'dev', ...(port === undefined ? {} : { port }), onServer })
      fastify.addHook('onClose', async () => { server = undefined })
      return { get server () { return server } }
    },
    addDirectProvider (name, checker) { add({ kind: 'direct', name, checker }) },
    addVerifProvider (name, template, sender, opts) { add({ ...opts, kind: 'verify', name, template, sender }) },
    addCustomProvider (name, client, opts) {
      add({ ...opts, kind: 'oauth2', name, ...clientOf(client, `oauth2.${String(name)}.client`) } as ProviderEntry)
    },
    addOidcProvider (name, client, opts) {
      add({ ...opts, kind: 'oidc', name, ...clientOf(client, `oidc.${String(name)}.client`) })
    },
    async addAppleProvider (config, keyLoader) {
      // Validated (and the key loaded and tried) here, once, so that a bad key rejects this call as go-pkgz/auth's
      // does; the prepared configuration is mounted as it is.
      if (coreOf(fastify).ready) throw afterReady('apple')
      const prepared = await appleConfig(config, keyLoader)
      if (coreOf(fastify).ready) throw afterReady('apple')
      fastify.register(preparedOAuth2Provider, { config: prepared })
    },
    addTelegramProvider (opts) { add({ ...opts, kind: 'telegram' }) },
    addCustomHandler (provider) { add({ kind: 'handler', provider }) }
  }
  return methods
}

function clientOf (client: CustomClient, option: string): { cid: string; csecret: string } {
  if (client === null || typeof client !== 'object') throw new OptionsError(option, 'must be {cid, csecret}')
  return { cid: client.cid, csecret: client.csecret }
}
