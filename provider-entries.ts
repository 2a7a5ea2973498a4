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
import { warnDeprecated } from './lib/deprecation.js'
import { afterReady } from './plugins/core/signin/mount.js'
import type { ProviderOrFactory } from './plugins/core/kit.js'
import type { CredChecker } from './plugins/core/base/types.js'
import type { RunningOAuth2Server } from './servers/dev-server.js'
import type { DirectProviderOptions } from './providers/direct.js'
import { handlerName, type HandlerProviderOptions } from './providers/handler.js'
import type { AppleProviderOptions, OAuth2ProviderOptions, OidcPluginOptions } from './providers/oauth2/plugins.js'
import type { OAuth2Overrides } from './providers/oauth2/builtins.js'
import type { CustomClient, CustomProviderOptions } from './providers/oauth2/custom.js'
import type { OidcProviderOptions } from './providers/oauth2/oidc.js'
import type { AppleConfig, AppleKeyLoader } from './providers/oauth2/apple.js'
import type { DevProviderOptions } from './providers/oauth2/dev.js'
import type { EmailProviderOptions, VerifyOptions } from './providers/email/provider.js'
import type { Sender, SenderFunc } from './providers/email/sender.js'
import type { TelegramProviderOptions } from './providers/telegram/options.js'
import type { PasskeyProviderOptions } from './providers/passkey/options.js'
import type { TotpProviderOptions } from './providers/totp/options.js'
import {
  appleProvider, devProvider, directProvider, emailProvider, handlerProvider, oauth2Provider, oidcProvider, passkeyProvider,
  telegramProvider, totpProvider, verifyFamilyProvider
} from './providers/lazy.js'
import { coreOf } from './plugins/core/signin/internals.js'

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
  | ({ kind: 'email' } & EmailProviderOptions)
  // Deprecated (warns once): `{ kind: 'email' }` is the same provider, its options named `email.<name>.…`; goes in 1.0.
  | ({ kind: 'verify' } & EmailProviderOptions)
  | ({ kind: 'telegram' } & TelegramProviderOptions)
  | ({ kind: 'passkey' } & PasskeyProviderOptions)
  | ({ kind: 'totp' } & TotpProviderOptions)
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
  email: emailProvider,
  verify: verifyFamilyProvider,
  telegram: telegramProvider,
  passkey: passkeyProvider,
  totp: totpProvider,
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
  addTelegramProvider(opts: TelegramProviderOptions): void
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
  if (kind === 'verify') warnDeprecated("providers entry { kind: 'verify' }")
  const name = kind === 'handler' ? handlerName((opts as { provider?: unknown }).provider) : String((opts as { name?: unknown }).name ?? kind)
  registerPlugin(fastify, plugin, name, opts)
}

/** Registers a provider plugin (in the order the app loads its plugins), or throws the one "too late" error. */
function registerPlugin (fastify: FastifyInstance, plugin: FastifyPluginAsync<never>, name: string, opts: object): void {
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
  const register = (plugin: FastifyPluginAsync<never>, name: unknown, opts: object): void => { registerPlugin(fastify, plugin, String(name), opts) }
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
    // go-pkgz/auth's name, not deprecated: its options keep their `verify.<name>.…` names.
    addVerifProvider (name, template, sender, opts) { register(verifyFamilyProvider, name, { ...opts, name, template, sender }) },
    addCustomProvider (name, client, opts) {
      add({ ...opts, kind: 'oauth2', name, ...clientOf(client, `oauth2.${String(name)}.client`) } as ProviderEntry)
    },
    addOidcProvider (name, client, opts) {
      warnDeprecated('fastify.auth.addOidcProvider')
      add({ ...opts, kind: 'oidc', name, ...clientOf(client, `oidc.${String(name)}.client`) })
    },
    async addAppleProvider (config, keyLoader) {
      // Validated (and the key loaded and tried) here, once, so that a bad key rejects this call as go-pkgz/auth's
      // does; the prepared configuration is mounted as it is.
      if (coreOf(fastify).ready) throw afterReady('apple')
      const [{ appleConfig }, { preparedOAuth2Provider }] = await Promise.all([import('./providers/oauth2/apple.js'), import('./providers/oauth2/plugins.js')])
      const prepared = await appleConfig(config, keyLoader)
      if (coreOf(fastify).ready) throw afterReady('apple')
      fastify.register(preparedOAuth2Provider, { config: prepared })
    },
    addTelegramProvider (opts) {
      warnDeprecated('fastify.auth.addTelegramProvider')
      add({ ...opts, kind: 'telegram' })
    },
    addCustomHandler (provider) { add({ kind: 'handler', provider }) }
  }
  return methods
}

function clientOf (client: CustomClient, option: string): { cid: string; csecret: string } {
  if (client === null || typeof client !== 'object') throw new OptionsError(option, 'must be {cid, csecret}')
  return { cid: client.cid, csecret: client.csecret }
}
