/**
 * The OAuth2 family as plugins, all on the one engine (engine.ts):
 * - `oauth2Provider`: a built-in (`name: 'github'`, …, with optional endpoint overrides) or, under any other
 *   name, a custom OAuth2/OIDC server (`endpoint`, `infoURL`, `mapUser`, …);
 * - `oidcProvider`: a generic OpenID Connect provider configured from its discovery document;
 * - `appleProvider`: Sign in with Apple (form_post callback, ES256 client secret).
 * Each depends on the auth core and mounts one provider at `{authPrefix}/<name>/…`.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { OptionsError } from '../../lib/errors.js'
import { checkKeys } from '../../lib/options.js'
import { providerKit, type ProviderKit } from '../../plugins/core/kit.js'
import { createOAuth2Provider, type OAuth2ProviderConfig } from './engine.js'
import { registerKeeper } from './provider-tokens.js'
import { builtinConfig, isBuiltinName, OAUTH2_BUILTIN_NAMES, type BuiltinProviderName, type OAuth2Overrides } from './builtins.js'
import type { ProviderSettings } from './builtin-spec.js'
import { customConfig, type CustomProviderOptions } from './custom.js'
import { oidcConfig, type OidcProviderOptions } from './oidc.js'
import { appleConfig, type AppleConfig, type AppleKeyLoader } from './apple.js'

/** Client credentials every OAuth2 provider is registered with. */
export interface OAuth2Client {
  /** Route name: `{authPrefix}/<name>/…`; for a built-in, its name. */
  name: string
  /** Client id. */
  cid: string
  /** Client secret. */
  csecret: string
}

/**
 * A built-in provider: its name, client credentials, optional overrides and, for a provider that needs them, its
 * settings (`issuer`, `domain`, `tenant`, `userPool`, `baseURL`: see its section in the built-ins page).
 */
export interface BuiltinProviderOptions extends OAuth2Client, OAuth2Overrides, ProviderSettings { name: BuiltinProviderName }
/** A custom OAuth2 provider: any name that is not a built-in's, endpoints and a mapping function. */
export interface CustomOAuth2ProviderOptions extends OAuth2Client, CustomProviderOptions {}
/** Options of `oauth2Provider`. */
export type OAuth2ProviderOptions = BuiltinProviderOptions | CustomOAuth2ProviderOptions
/** Options of `oidcProvider`. */
export interface OidcPluginOptions extends OAuth2Client, OidcProviderOptions {}
/** Options of `appleProvider`: the Apple configuration and the loader of its private key. */
export interface AppleProviderOptions extends AppleConfig {
  /** Loads the PKCS#8 private key (e.g. `appleKeyFromFile(path)`); a failure fails registration. */
  keyLoader: AppleKeyLoader
}

/** Mounts an engine provider, its state store being its own option or the core's. */
async function mountEngine (fastify: FastifyInstance, kit: ProviderKit, cfg: OAuth2ProviderConfig): Promise<void> {
  const store = await kit.openStateStore(cfg.stateStore, `oauth2.${cfg.name}.stateStore`)
  kit.mount(await createOAuth2Provider(kit, cfg, store, (keeper) => { registerKeeper(fastify, keeper) }))
}

function client (opts: unknown, family: string): OAuth2Client & Record<string, unknown> {
  if (opts === null || typeof opts !== 'object') throw new OptionsError(family, 'options must be an object')
  const o = opts as OAuth2Client & Record<string, unknown>
  if (typeof o.name !== 'string' || o.name === '') throw new OptionsError(`${family}.name`, 'is required')
  for (const k of ['cid', 'csecret'] as const) {
    if (typeof o[k] !== 'string' || o[k] === '') throw new OptionsError(`${family}.${o.name}.${k}`, `is required (the client ${k === 'cid' ? 'id' : 'secret'})`)
  }
  return o
}

async function oauth2 (fastify: FastifyInstance, opts: OAuth2ProviderOptions): Promise<void> {
  const kit = providerKit(fastify, 'oauth2')
  const { name, cid, csecret, ...rest } = client(opts, 'oauth2')
  if (isBuiltinName(name)) {
    if (rest.endpoint !== undefined) throw new OptionsError(`oauth2.${name}.name`, `"${name}" is a built-in provider; a custom provider needs another name`)
    return await mountEngine(fastify, kit, builtinConfig(name, cid, csecret, rest))
  }
  if (rest.endpoint === undefined) {
    throw new OptionsError(`oauth2.${name}.endpoint`, `is required: "${name}" is not a built-in (${OAUTH2_BUILTIN_NAMES.join(', ')})`)
  }
  const custom = checkKeys(rest, CUSTOM_KEYS, `oauth2.${name}`) as unknown as CustomProviderOptions
  await mountEngine(fastify, kit, customConfig(name, { cid, csecret }, custom))
}

const CUSTOM_KEYS = [
  'endpoint', 'infoURL', 'mapUser', 'scopes', 'oidc', 'pkce', 'tokenAuth', 'infoAuthScheme', 'authParams',
  'timeout', 'handshakeTtl', 'stateStore', 'onRedirectUri', 'keepTokens'
]

async function oidc (fastify: FastifyInstance, opts: OidcPluginOptions): Promise<void> {
  const kit = providerKit(fastify, 'oidc')
  const { name, cid, csecret, ...rest } = client(opts, 'oidc')
  checkKeys(rest, ['issuer', 'scopes', 'mapUser', 'authParams', 'timeout', 'handshakeTtl', 'stateStore', 'mfa'], `oidc.${name}`)
  await mountEngine(fastify, kit, await oidcConfig(name, { cid, csecret }, rest as unknown as OidcProviderOptions))
}

async function apple (fastify: FastifyInstance, opts: AppleProviderOptions): Promise<void> {
  const kit = providerKit(fastify, 'apple')
  const o = checkKeys(opts, [
    'clientId', 'teamId', 'keyId', 'responseMode', 'scopes', 'authURL', 'tokenURL', 'jwksURL', 'issuer', 'timeout',
    'handshakeTtl', 'stateStore', 'keyLoader'
  ], 'apple') as unknown as AppleProviderOptions
  const { keyLoader, ...config } = o
  await mountEngine(fastify, kit, await appleConfig(config, keyLoader))
}

/**
 * A configuration validated already (`fastify.auth.addAppleProvider` prepares Apple's when it is called, so that
 * a bad key rejects that call), mounted as it is: not validated a second time.
 */
async function prepared (fastify: FastifyInstance, opts: { config: OAuth2ProviderConfig }): Promise<void> {
  await mountEngine(fastify, providerKit(fastify, opts.config.name), opts.config)
}

// No `dependencies`: a provider registered before the core fails with the kit's OptionsError naming it.
const meta = (name: string) => ({ name, fastify: '5.x' })

/** A built-in or custom OAuth2 provider (`gatehouse-oauth2`). Register once per provider. */
export const oauth2Provider = fp(oauth2, meta('gatehouse-oauth2'))
/** A generic OpenID Connect provider found through its discovery document (`gatehouse-oidc`). */
export const oidcProvider = fp(oidc, meta('gatehouse-oidc'))
/** Sign in with Apple (`gatehouse-apple`); registration fails when the private key cannot be loaded. */
export const appleProvider = fp(apple, meta('gatehouse-apple'))
/** Internal: an engine configuration prepared and validated by the caller (see `prepared`). */
export const preparedOAuth2Provider = fp(prepared, meta('gatehouse-oauth2-prepared'))
