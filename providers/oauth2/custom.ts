/**
 * Custom OAuth2 providers (SPEC §3): any third-party OAuth2 or OpenID Connect server, under any name that is not
 * a built-in's. Several clients of one provider may be registered under different names.
 */
import type { AuthProvider, GatehouseAuth } from '../../plugins/core/types.js'
import { addOAuth2Engine, type MapUserFn, type OidcSettings } from './engine.js'
import { RESERVED_PROVIDER_NAMES } from './builtins.js'
import type { StateStoreOption } from '../../plugins/state-store/resolve.js'

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
  infoURL?: string
  /**
   * Converts the userinfo JSON (and its raw bytes) into `{id, name, picture?, email?, attrs?, role?}`. `id` is
   * the provider's user id; the session's id becomes `<name>_<sha1 hex of id>`.
   */
  mapUser: MapUserFn
  /** Minimal scopes needed to read the user's info. */
  scopes?: string[]
  /** OpenID Connect: sends a nonce and verifies the ID token (signature via `jwksURL`, iss, aud, exp, nonce). */
  oidc?: OidcSettings
  /** PKCE S256. Default true (RFC 7636 servers without PKCE ignore it). */
  pkce?: boolean
  /** Client authentication at the token endpoint. Default `basic` (the one RFC 6749 requires servers to take). */
  tokenAuth?: 'basic' | 'post'
  /** Authorization scheme of the userinfo request. Default `Bearer`. */
  infoAuthScheme?: string
  /** Extra authorization-request parameters (e.g. `prompt`). */
  authParams?: Record<string, string>
  /** Deadline of each call to the provider, ms. Default 10 000. */
  timeoutMs?: number
  /** Lifetime of the login handshake, ms. Default 10 minutes. */
  handshakeTtlMs?: number
  /** Where used login states are remembered (StateStore or `redis://` address). Default: root `stateStore`, else memory. */
  stateStore?: StateStoreOption
}

/** Registers a custom OAuth2 provider at `{authPrefix}/<name>/…`. Throws on a reserved name or bad options. */
export function addCustomProvider (auth: GatehouseAuth, name: string, client: CustomClient, opts: CustomProviderOptions): AuthProvider {
  const fail = (why: string): never => { throw new Error(`fastify-gatehouse: custom provider "${String(name)}": ${why}`) }
  if (RESERVED_PROVIDER_NAMES.includes(name)) fail(`"${name}" is a built-in provider name; choose another`)
  if (client === null || typeof client !== 'object') fail('client must be {cid, csecret}')
  if (typeof client.csecret !== 'string') fail('client.csecret must be a string')
  if (opts === null || typeof opts !== 'object') fail('options are required')
  if (opts.endpoint === null || typeof opts.endpoint !== 'object') fail('endpoint must be {authURL, tokenURL}')
  return addOAuth2Engine(auth, {
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
    timeoutMs: opts.timeoutMs,
    handshakeTtlMs: opts.handshakeTtlMs,
    stateStore: opts.stateStore
  })
}
