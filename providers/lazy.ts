/**
 * The provider plugins as the entries export them: each one a small plugin (same name, same options) that loads
 * its implementation when it is registered, so importing `fastify-gatehouse` loads no provider an app does not
 * register (issue 46 item 3: the import cost). The implementations are the modules named below; the root's
 * `providers` option and go-pkgz/auth's `add*` methods register these plugins too.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyPluginAsync, FastifyPluginOptions } from 'fastify'
import type { DirectProviderOptions } from './direct.js'
import type { AppleProviderOptions, OAuth2ProviderOptions, OidcPluginOptions } from './oauth2/plugins.js'
import type { DevProviderOptions } from './oauth2/dev.js'
import type { EmailProviderOptions } from './email/provider.js'
import type { TelegramProviderOptions } from './telegram/options.js'
import type { PasskeyProviderOptions } from './passkey/options.js'
import type { TotpProviderOptions } from './totp/options.js'
import type { HandlerProviderOptions } from './handler.js'

/**
 * A plugin named `name` that imports its implementation (`load`) on registration and registers it with the same
 * options, in the same context (both are fastify-plugin plugins: nothing is encapsulated between them).
 */
function lazyPlugin<Options extends FastifyPluginOptions> (name: string, load: () => Promise<FastifyPluginAsync<Options>>): FastifyPluginAsync<Options> {
  const plugin: FastifyPluginAsync<Options> = async (fastify: FastifyInstance, opts: Options) => {
    await fastify.register(await load() as FastifyPluginAsync, opts)
  }
  return fp(plugin, { name, fastify: '5.x' })
}

/** Direct (credential-checker) login: `{ name, checker }`. */
export const directProvider = lazyPlugin<DirectProviderOptions>('gatehouse-direct', async () => (await import('./direct.js')).directProvider)
/** A built-in OAuth2 provider (`name: 'github'`, …) or, under any other name, a custom OAuth2/OIDC server. */
export const oauth2Provider = lazyPlugin<OAuth2ProviderOptions>('gatehouse-oauth2', async () => (await import('./oauth2/plugins.js')).oauth2Provider)
/** A generic OpenID Connect provider configured from its discovery document (`issuer`). */
export const oidcProvider = lazyPlugin<OidcPluginOptions>('gatehouse-oidc', async () => (await import('./oauth2/plugins.js')).oidcProvider)
/** Sign in with Apple (form_post callback, ES256 client secret). */
export const appleProvider = lazyPlugin<AppleProviderOptions>('gatehouse-apple', async () => (await import('./oauth2/plugins.js')).appleProvider)
/** The `dev` provider and its fake OAuth2 server, started and stopped with the app (development only). */
export const devProvider = lazyPlugin<DevProviderOptions>('gatehouse-dev', async () => (await import('./oauth2/dev.js')).devProvider)
/** E-mail (verified, confirmation-token) login: a link or a code sent by mail (go-pkgz/auth's "verified" provider). */
export const emailProvider = lazyPlugin<EmailProviderOptions>('gatehouse-email', async () => (await import('./email/provider.js')).emailProvider)
/**
 * The e-mail provider under its first name.
 * @deprecated Use `emailProvider` (`verify` also means token verification); goes in 1.0.
 */
export const verifyProvider = lazyPlugin<EmailProviderOptions>('gatehouse-verify', async () => (await import('./email/provider.js')).verifyProvider)
/** The e-mail provider as `addVerifProvider` registers it (options named `verify.<name>.…`); in no entry. */
export const verifyFamilyProvider = lazyPlugin<EmailProviderOptions>('gatehouse-verify', async () => (await import('./email/provider.js')).verifyFamilyProvider)
/** Telegram-bot login (polls the Bot API in the background while the app runs). */
export const telegramProvider = lazyPlugin<TelegramProviderOptions>('gatehouse-telegram', async () => (await import('./telegram/provider.js')).telegramProvider)
/** Passkeys (WebAuthn): sign-in, or a second factor after a password. */
export const passkeyProvider = lazyPlugin<PasskeyProviderOptions>('gatehouse-passkey', async () => (await import('./passkey/provider.js')).passkeyProvider)
/** Authenticator-app codes (TOTP) and recovery codes as a second factor. */
export const totpProvider = lazyPlugin<TotpProviderOptions>('gatehouse-totp', async () => (await import('./totp/provider.js')).totpProvider)
/** A self-implemented provider (`{ provider }`: the provider, or `(kit) => provider`), behind the same login prelude. */
export const handlerProvider = lazyPlugin<HandlerProviderOptions>('gatehouse-handler', async () => (await import('./handler.js')).handlerProvider)
