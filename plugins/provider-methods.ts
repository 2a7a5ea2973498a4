/**
 * go-pkgz/auth v2's registration calls on `fastify.auth` (`addProvider`, `addDirectProvider`, …), added by the root
 * plugin. Each is a thin wrapper that registers the matching provider plugin, so a provider added this way is
 * the same as one registered directly. They work until the server is ready; after that each throws the same
 * OptionsError.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import { OptionsError } from '../lib/errors.js'
import type { CredChecker } from './core/types.js'
import type { RunningOAuth2Server } from '../servers/dev-server.js'
import { directProvider } from '../providers/direct.js'
import { appleProvider, oauth2Provider, oidcProvider, type OAuth2ProviderOptions } from '../providers/oauth2/plugins.js'
import type { OAuth2Overrides } from '../providers/oauth2/builtins.js'
import type { CustomClient, CustomProviderOptions } from '../providers/oauth2/custom.js'
import type { OidcProviderOptions } from '../providers/oauth2/oidc.js'
import { appleConfig, type AppleConfig, type AppleKeyLoader } from '../providers/oauth2/apple.js'
import { devProvider, type DevProviderOptions } from '../providers/oauth2/dev.js'
import { verifyProvider, type VerifyOptions } from '../providers/verify/provider.js'
import type { Sender, SenderFunc } from '../providers/verify/sender.js'
import { telegramProvider } from '../providers/telegram/provider.js'
import type { TelegramOptions } from '../providers/telegram/options.js'

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
  /** Sign in with Apple; rejects when the private key cannot be loaded. */
  addAppleProvider(config: AppleConfig, keyLoader: AppleKeyLoader): Promise<void>
  /** Telegram-bot login (polls the Bot API in the background while the app runs). */
  addTelegramProvider(opts: TelegramOptions): void
}

/**
 * The methods, bound to the instance the root plugin was registered on. `isReady` tells whether the server
 * has become ready (the core's registry is closed then).
 */
export function providerMethods (fastify: FastifyInstance, isReady: () => boolean): ProviderMethods {
  // Registering after start is refused by Fastify too; one OptionsError says so for every method alike.
  const register = <T extends object>(what: string, plugin: FastifyPluginAsync<T>, opts: T): void => {
    if (isReady()) throw tooLate(what)
    try {
      fastify.register(plugin as FastifyPluginAsync, opts as Record<string, unknown>)
    } catch (err) {
      throw tooLate(what, err)
    }
  }
  const methods: ProviderMethods = {
    addProvider (name, cid, csecret, overrides) {
      if (name === 'dev') { methods.addDevProvider(); return }
      register(name, oauth2Provider, { ...overrides, name, cid, csecret } as OAuth2ProviderOptions)
    },
    addDevProvider (port, opts = {}) {
      let server: RunningOAuth2Server | undefined
      const onServer = (s: RunningOAuth2Server): void => { server = s; opts.onServer?.(s) }
      register('dev', devProvider, { ...opts, ...(port === undefined ? {} : { port }), onServer })
      fastify.addHook('onClose', async () => { server = undefined })
      return { get server () { return server } }
    },
    addDirectProvider (name, checker) { register(name, directProvider, { name, checker }) },
    addVerifProvider (name, template, sender, opts) { register(name, verifyProvider, { ...opts, name, template, sender }) },
    addCustomProvider (name, client, opts) {
      if (client === null || typeof client !== 'object') throw new OptionsError(`oauth2.${String(name)}.client`, 'must be {cid, csecret}')
      register(name, oauth2Provider, { ...opts, name, cid: client.cid, csecret: client.csecret })
    },
    addOidcProvider (name, client, opts) {
      if (client === null || typeof client !== 'object') throw new OptionsError(`oidc.${String(name)}.client`, 'must be {cid, csecret}')
      register(name, oidcProvider, { ...opts, name, cid: client.cid, csecret: client.csecret })
    },
    async addAppleProvider (config, keyLoader) {
      // The key is loaded and tried now, so that a bad key rejects this call (as go-pkgz/auth's does), and loaded once.
      if (typeof keyLoader !== 'function') throw new OptionsError('apple.keyLoader', 'is required (e.g. appleKeyFromFile(path))')
      let key: Awaited<ReturnType<AppleKeyLoader>>
      try { key = await keyLoader() } catch (err) {
        throw new OptionsError('apple.keyLoader', `could not load the private key: ${(err as Error)?.message ?? String(err)}`, { cause: err })
      }
      const loaded: AppleKeyLoader = async () => key
      await appleConfig(config, loaded)
      register('apple', appleProvider, { ...config, keyLoader: loaded })
    },
    addTelegramProvider (opts) { register(String(opts?.name ?? 'telegram'), telegramProvider, opts) }
  }
  return methods
}

function tooLate (what: string, cause?: unknown): OptionsError {
  return new OptionsError('providers', `cannot take "${what}" after the server is ready: add providers before listen() or ready()`, { cause })
}
