/**
 * Generic OpenID Connect provider configured from the issuer's discovery document
 * (`{issuer}/.well-known/openid-configuration`, OpenID Connect Discovery 1.0): endpoints, JWKS, client
 * authentication method and PKCE support come from the server, so only issuer, client id and secret are needed.
 */
import type { Duration } from '../../lib/duration.js'
import { HttpError, OptionsError } from '../../lib/errors.js'
import { optionDuration } from '../../lib/options.js'
import type { MapUserFn, OAuth2ProviderConfig } from './engine.js'
import { customConfig, type CustomClient, type CustomProviderOptions } from './custom.js'
import { mapStandardClaims } from './fields.js'
import type { StateStoreOption } from '../../stores/state/resolve.js'
import { callProvider, causeOf, DEFAULT_TIMEOUT_MS, jsonObject } from './upstream.js'
import { resolveIdpMfa, type IdpMfaOptions } from './idp-mfa.js'

/** Options of `addOidcProvider`. */
export interface OidcProviderOptions {
  /** Issuer URL; its discovery document must name exactly this issuer. */
  issuer: string
  /** Scopes. Default `openid profile`. */
  scopes?: string[] | undefined
  /** Mapping from userinfo (or ID-token claims). Default: `sub`, `name`/`preferred_username`/`nickname`, `picture`. */
  mapUser?: MapUserFn | undefined
  /** Extra authorization-request parameters. */
  authParams?: Record<string, string> | undefined
  /** Deadline of each call to the provider (discovery included): ms or `'10s'`. Default 10 seconds. */
  timeout?: Duration | undefined
  /** Lifetime of the login handshake: ms or `'10m'`. Default 10 minutes. */
  handshakeTtl?: Duration | undefined
  /** Where used login states are remembered (StateStore or `redis://` address). Default: root `stateStore`, else memory. */
  stateStore?: StateStoreOption | undefined
  /**
   * When the provider's own multi-factor sign-in counts as this session's second factor (ASVS 5.0 6.8.4): an ID token
   * whose `amr` names one of `amr` or whose `acr` is one of `acr`, with an `auth_time` at most `maxAge` ago (default
   * 5 minutes), confirms the factor `idp` for the new session at that time (`recent()`). Default: never.
   */
  mfa?: IdpMfaOptions | undefined
}

export { mapStandardClaims }

const LOOPBACK_HOST = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i


/**
 * Reads the issuer's discovery document and returns custom-provider options for it.
 * Rejects with a clear error when the document is unreachable, malformed, or names another issuer.
 */
export async function discoverOidc (issuer: string, opts: Omit<OidcProviderOptions, 'issuer'> = {}): Promise<CustomProviderOptions> {
  const fail = (why: string): never => { throw new OptionsError('oidc.issuer', `${issuer}: discovery failed: ${why}`) }
  let url: URL
  try { url = new URL(issuer.replace(/\/+$/, '') + '/.well-known/openid-configuration') } catch { return fail('issuer is not a URL') }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') fail('issuer must be an http(s) URL')
  // Over plain http the client secret, the codes and the keys that sign ID tokens cross the network in clear:
  // only an IdP on this machine (development) may be reached that way.
  if (url.protocol === 'http:' && !LOOPBACK_HOST.test(url.hostname)) fail('an http:// issuer is accepted only on loopback (localhost, 127.0.0.0/8, [::1]); use https')
  const timeoutMs = optionDuration('oidc.timeout', opts.timeout, DEFAULT_TIMEOUT_MS)
  let doc: Record<string, unknown> | undefined
  try {
    const ans = await callProvider(url.href, { headers: { accept: 'application/json' } }, 'discovery endpoint', timeoutMs)
    if (ans.status !== 200) fail(`status ${ans.status}`)
    doc = jsonObject(ans.body)
  } catch (err) {
    // A registration-time error for the operator: the cause (address, network error) helps here.
    const cause = causeOf(err)
    fail(err instanceof HttpError ? `${err.message} (${err.details ?? ''})${cause === '' ? '' : `: ${cause}`}` : (err as Error).message)
  }
  if (doc === undefined) return fail('the document is not JSON')
  // Discovery §4.3: the document must be about exactly the issuer asked for (a mix-up defence).
  if (doc.issuer !== issuer) fail(`the document names issuer ${JSON.stringify(doc.issuer)}`)
  const str = (key: string, required: boolean): string | undefined => {
    const v = doc![key]
    if (typeof v === 'string' && v !== '') return v
    if (required) fail(`"${key}" is missing`)
    return undefined
  }
  const methods = Array.isArray(doc.token_endpoint_auth_methods_supported) ? doc.token_endpoint_auth_methods_supported : ['client_secret_basic']
  let tokenAuth: 'basic' | 'post'
  if (methods.includes('client_secret_basic')) tokenAuth = 'basic'
  else if (methods.includes('client_secret_post')) tokenAuth = 'post'
  else return fail('the server takes neither client_secret_basic nor client_secret_post')
  const challenge = doc.code_challenge_methods_supported
  const infoURL = str('userinfo_endpoint', false)
  const out: CustomProviderOptions = {
    endpoint: { authURL: str('authorization_endpoint', true)!, tokenURL: str('token_endpoint', true)! },
    mapUser: opts.mapUser ?? mapStandardClaims,
    scopes: opts.scopes ?? ['openid', 'profile'],
    oidc: { issuer, jwksURL: str('jwks_uri', true)!, ...(opts.mfa === undefined ? {} : { mfa: opts.mfa }) },
    // Absent means "not advertised", not "refused": PKCE is then still sent (servers ignore unknown parameters).
    pkce: !Array.isArray(challenge) || challenge.includes('S256'),
    tokenAuth,
    timeout: timeoutMs
  }
  if (infoURL !== undefined) out.infoURL = infoURL
  if (opts.authParams !== undefined) out.authParams = opts.authParams
  if (opts.handshakeTtl !== undefined) out.handshakeTtl = opts.handshakeTtl
  if (opts.stateStore !== undefined) out.stateStore = opts.stateStore
  return out
}

/** Discovers the issuer and returns the engine configuration of a custom provider for it. Throws OptionsError. */
export async function oidcConfig (name: string, client: CustomClient, opts: OidcProviderOptions): Promise<OAuth2ProviderConfig> {
  if (opts === null || typeof opts !== 'object' || typeof opts.issuer !== 'string') throw new OptionsError('oidc.issuer', 'is required')
  const { issuer, ...rest } = opts
  // Checked before the discovery call: a bad option fails the start without a request to the provider.
  resolveIdpMfa(`oidc.${String(name)}`, opts.mfa)
  return customConfig(name, client, await discoverOidc(issuer, rest))
}
