/**
 * The `add*Provider` methods of `fastify.auth`: thin bindings from the seed's registration calls to the
 * provider modules. Kept apart from the core so the core reads as the session machinery alone.
 */
import type { AuthProvider, GatehouseAuth } from './types.js'
import {
  addAppleProvider, addCustomProvider, addDevProvider, addOAuth2Provider, addOidcProvider,
  type AppleConfig, type AppleKeyLoader, type CustomClient, type CustomProviderOptions, type DevProvider, type DevProviderOptions,
  type OAuth2Overrides, type OidcProviderOptions
} from '../../providers/oauth2/index.js'
import { addVerifProvider, type Sender, type SenderFunc, type VerifyOptions } from '../../providers/verify/index.js'
import { addTelegramProvider, type TelegramOptions } from '../../providers/telegram/index.js'

/** Registration methods added to `fastify.auth`. Call them before the server is ready. */
export interface ProviderMethods {
  /** A built-in OAuth2 provider (github, google, facebook, microsoft, yandex, battlenet, patreon, discord, twitter) or `dev`. */
  addProvider(name: string, cid: string, csecret: string, overrides?: OAuth2Overrides): void
  /**
   * The `dev` provider and its fake OAuth2 server (default port 8084), started and stopped with the app.
   * Returns the provider; its `server.url` is the running server's address once the app is ready.
   */
  addDevProvider(port?: number, opts?: DevProviderOptions): DevProvider
  /** Verified (confirmation-token) login: template with `{{.Address}} {{.User}} {{.Token}} {{.Site}}`, sender. */
  addVerifProvider(name: string, template: string, sender: Sender | SenderFunc, opts?: VerifyOptions): void
  /** Any third-party OAuth2 provider under a name that is not a built-in's. */
  addCustomProvider(name: string, client: CustomClient, opts: CustomProviderOptions): void
  /** A generic OpenID Connect provider found through the issuer's discovery document. */
  addOidcProvider(name: string, client: CustomClient, opts: OidcProviderOptions): Promise<void>
  /** Sign in with Apple; rejects when the private key cannot be loaded. */
  addAppleProvider(config: AppleConfig, keyLoader: AppleKeyLoader): Promise<void>
  /** Telegram-bot login (polls the Bot API in the background while the app runs). */
  addTelegramProvider(opts: TelegramOptions): void
}

export function providerMethods (auth: GatehouseAuth): ProviderMethods {
  const ignore = (_p: AuthProvider | void): void => {}
  return {
    addProvider (name, cid, csecret, overrides) {
      if (name === 'dev') { addDevProvider(auth); return }
      ignore(addOAuth2Provider(auth, name, cid, csecret, overrides))
    },
    addDevProvider: (port, opts) => addDevProvider(auth, port, opts),
    addVerifProvider (name, template, sender, opts) { addVerifProvider(auth, name, template, sender, opts) },
    addCustomProvider (name, client, opts) { ignore(addCustomProvider(auth, name, client, opts)) },
    async addOidcProvider (name, client, opts) { ignore(await addOidcProvider(auth, name, client, opts)) },
    async addAppleProvider (config, keyLoader) { ignore(await addAppleProvider(auth, config, keyLoader)) },
    addTelegramProvider (opts) { ignore(addTelegramProvider(auth, opts)) }
  }
}
