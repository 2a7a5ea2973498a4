/**
 * Custom OAuth2 providers: any third-party OAuth2 or OpenID Connect server, under any name that is not
 * a built-in's. Several clients of one provider may be registered under different names.
 */
import type { Duration } from '../../lib/duration.js'
import { OptionsError } from '../../lib/errors.js'
import type { MapUserFn, OAuth2ProviderConfig } from './engine.js'
import type { OidcSettings } from './idtoken.js'
import type { KeepTokensOptions } from './provider-tokens.js'
import { refuseReservedName } from './builtins.js'
import type { StateStoreOption } from '../../stores/state/resolve.js'

/** Client credentials of a custom provider. */
export interface CustomClient {
  /** Client id. */
  cid: string
  /** Client secret. */
  csecret: string
}

/** Options of a custom OAuth2 provider. */
export interface CustomProviderOptions {
  /** Authorization and token endpoints. */
  endpoint: { authURL: string; tokenURL: string }
  /** Endpoint returning the signed-in user's data; optional when `oidc` is set (ID-token claims are used). */
  infoURL?: string | undefined
  /**
   * Converts the userinfo JSON (and its raw bytes) into `{id, name, picture?, email?, attrs?, role?}`. `id` is
   * the provider's user id; the session's id becomes `<name>_<sha1 hex of id>`.
   */
  mapUser: MapUserFn
  /** Minimal scopes needed to read the user's info. */
  scopes?: string[] | undefined
  /** OpenID Connect: sends a nonce and verifies the ID token (signature via `jwksURL`, iss, aud, exp, nonce). */
  oidc?: OidcSettings | undefined
  /** PKCE S256. Default true (RFC 7636 servers without PKCE ignore it). */
  pkce?: boolean | undefined
  /** Client authentication at the token endpoint. Default `basic` (the one RFC 6749 requires servers to take). */
  tokenAuth?: 'basic' | 'post' | undefined
  /** Authorization scheme of the userinfo request. Default `Bearer`. */
  infoAuthScheme?: string | undefined
  /** Extra authorization-request parameters (e.g. `prompt`). */
  authParams?: Record<string, string> | undefined
  /** Deadline of each call to the provider: ms or `'10s'`. Default 10 seconds. */
  timeout?: Duration | undefined
  /** Lifetime of the login handshake: ms or `'10m'`. Default 10 minutes. */
  handshakeTtl?: Duration | undefined
  /** Where used login states are remembered (StateStore or `redis://` address). Default: root `stateStore`, else memory. */
  stateStore?: StateStoreOption | undefined
  /**
   * Called once with this provider's callback URL when the provider is set up. The `providerOptions` of a local
   * OAuth2 server set it, so that the server accepts exactly this callback as `redirect_uri`.
   */
  onRedirectUri?: ((uri: string) => void) | undefined
  /**
   * Keep the provider's access and refresh tokens for the app, sealed with AES-256-GCM under `key` in the state
   * store: `getProviderToken(request, name)` answers a fresh one (refreshed when expired), the logout revokes them
   * at `revocationURL` (RFC 7009) and drops them. Default off.
   */
  keepTokens?: KeepTokensOptions | undefined
}

/** The engine configuration of a custom provider. Throws OptionsError on a reserved name or bad options. */
export function customConfig (name: string, client: CustomClient, opts: CustomProviderOptions): OAuth2ProviderConfig {
  const label = `oauth2.${String(name)}`
  refuseReservedName(`${label}.name`, name)
  if (client === null || typeof client !== 'object') throw new OptionsError(`${label}.client`, 'must be {cid, csecret}')
  if (opts === null || typeof opts !== 'object') throw new OptionsError(label, 'options are required')
  if (opts.endpoint === null || typeof opts.endpoint !== 'object') throw new OptionsError(`${label}.endpoint`, 'must be {authURL, tokenURL}')
  return {
    name,
    cid: client.cid,
    csecret: client.csecret,
    authURL: opts.endpoint.authURL,
    tokenURL: opts.endpoint.tokenURL,
    infoURL: opts.infoURL,
    infoAuthScheme: opts.infoAuthScheme,
    scopes: opts.scopes ?? [],
    pkce: opts.pkce ?? true,
    tokenAuth: opts.tokenAuth ?? 'basic',
    authParams: opts.authParams,
    oidc: opts.oidc,
    mapUser: opts.mapUser,
    timeout: opts.timeout,
    handshakeTtl: opts.handshakeTtl,
    stateStore: opts.stateStore,
    onRedirectUri: opts.onRedirectUri,
    keepTokens: opts.keepTokens
  }
}
