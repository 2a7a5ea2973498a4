/**
 * The built-in OAuth2 providers (the first nine here; the others in builtins-social.ts and builtins-presets.ts):
 * each is data (endpoints as its provider documents them, minimal scopes, whether it takes PKCE, how the client
 * authenticates) plus a mapping from its documented user document to a user. Everything runs on the one engine. Every endpoint is overridable (tests, self-hosted variants such as
 * GitHub Enterprise, other API versions).
 */
import type { Duration } from '../../lib/duration.js'
import { OptionsError } from '../../lib/errors.js'
import { checkKeys } from '../../lib/options.js'
import type { MapUserFn, OAuth2ProviderConfig } from './engine.js'
import type { OidcSettings } from './idtoken.js'
import { idAt, objectAt, text } from './fields.js'
import type { StateStoreOption } from '../../stores/state/resolve.js'
import { resolveSpec, settingNames, type BuiltinEntry, type BuiltinSpec } from './builtin-spec.js'
import { SOCIAL_BUILTINS } from './builtins-social.js'
import { PRESET_BUILTINS } from './builtins-presets.js'
import type { KeepTokensOptions } from './provider-tokens.js'

/** Endpoint and behaviour overrides of a built-in provider. */
export interface OAuth2Overrides {
  /** Authorization endpoint. */
  authURL?: string | undefined
  /** Token endpoint. */
  tokenURL?: string | undefined
  /** Userinfo endpoint. */
  infoURL?: string | undefined
  /** JWKS of an OpenID Connect provider. */
  jwksURL?: string | undefined
  /** Expected ID-token issuer of an OIDC provider; `{tenantid}` is replaced by the token's `tid`. */
  issuer?: string | string[] | undefined
  /** Replaces the minimal scopes. */
  scopes?: string[] | undefined
  /** Deadline of each call to the provider: ms or `'10s'`. Default 10 seconds. */
  timeout?: Duration | undefined
  /** Lifetime of the login handshake: ms or `'10m'`. Default 10 minutes. */
  handshakeTtl?: Duration | undefined
  /** Where used login states are remembered (StateStore or `redis://` address). Default: root `stateStore`, else memory. */
  stateStore?: StateStoreOption | undefined
  /**
   * Keep the provider's access and refresh tokens for the app, sealed with AES-256-GCM under `key` in the state
   * store (`getProviderToken`, `revokeProviderToken`; revoked at `revocationURL` and dropped at logout). Default off.
   */
  keepTokens?: KeepTokensOptions | undefined
  /**
   * Which field of the provider's user document becomes the user id (`<name>_<sha1 of it>`), for `github` and
   * `microsoft` only. GitHub: `'id'` (the numeric account id, which a renamed or recycled login does not change;
   * the default) or `'login'` (the login, go-pkgz/auth's default: ids equal to a Go service's). Microsoft: `'sub'`
   * (the OpenID Connect subject; the default) or `'graph'` (the Graph `/me` `id`, go-pkgz/auth's: adds the
   * `User.Read` scope and reads `https://graph.microsoft.com/v1.0/me`). See the migration guide's id table.
   */
  idFrom?: 'id' | 'login' | 'sub' | 'graph' | undefined
  /**
   * The Microsoft Entra tenant of the `microsoft` provider (go-pkgz/auth's `MicrosoftTenant`): `common` (the
   * default: work and personal accounts), `organizations`, `consumers`, a tenant id (GUID: the ID token's issuer
   * is then pinned to that tenant) or a verified domain (`contoso.onmicrosoft.com`). The `entra` preset requires
   * it, as a tenant id (GUID).
   */
  tenant?: string | undefined
}


const github: BuiltinSpec = {
  authURL: 'https://github.com/login/oauth/authorize',
  tokenURL: 'https://github.com/login/oauth/access_token',
  infoURL: 'https://api.github.com/user',
  scopes: [], // public profile needs no scope
  mapUser: (d) => ({ id: idAt(d, 'id'), name: text(d.name) ?? text(d.login), picture: text(d.avatar_url) })
}

/** GitHub with go-pkgz/auth's default id: the login (a renamed account gets a new id, a freed login an old one). */
const githubByLogin: BuiltinSpec = {
  ...github,
  mapUser: (d) => ({ id: idAt(d, 'login'), name: text(d.name) ?? text(d.login), picture: text(d.avatar_url) })
}

const google: BuiltinSpec = {
  authURL: 'https://accounts.google.com/o/oauth2/v2/auth',
  tokenURL: 'https://oauth2.googleapis.com/token',
  infoURL: 'https://openidconnect.googleapis.com/v1/userinfo',
  scopes: ['openid', 'profile'],
  oidc: { issuer: ['https://accounts.google.com', 'accounts.google.com'], jwksURL: 'https://www.googleapis.com/oauth2/v3/certs' },
  mapUser: (d) => ({ id: idAt(d, 'sub'), name: text(d.name) ?? text(d.given_name), picture: text(d.picture) })
}

const facebook: BuiltinSpec = {
  authURL: 'https://www.facebook.com/v21.0/dialog/oauth',
  tokenURL: 'https://graph.facebook.com/v21.0/oauth/access_token',
  infoURL: 'https://graph.facebook.com/v21.0/me?fields=id,name,picture',
  scopes: ['public_profile'],
  mapUser: (d) => {
    // `picture` is `{data: {url, is_silhouette}}`; the grey silhouette is left to the identicon fallback.
    const pic = d.picture === undefined ? undefined : objectAt(objectAt(d, 'picture'), 'data')
    return { id: idAt(d, 'id'), name: text(d.name), picture: pic !== undefined && pic.is_silhouette !== true ? text(pic.url) : undefined }
  }
}

const microsoft: BuiltinSpec = {
  authURL: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
  tokenURL: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
  infoURL: 'https://graph.microsoft.com/oidc/userinfo',
  scopes: ['openid', 'profile'],
  oidc: { issuer: 'https://login.microsoftonline.com/{tenantid}/v2.0', jwksURL: 'https://login.microsoftonline.com/common/discovery/v2.0/keys' },
  // Its `picture` link needs the access token, so the avatar proxy could not fetch it: identicon instead.
  mapUser: (d) => ({ id: idAt(d, 'sub'), name: text(d.name) ?? [text(d.given_name), text(d.family_name)].filter(Boolean).join(' ') })
}

/**
 * Microsoft with go-pkgz/auth's id: the Graph `/me` document's `id` (the account's object id), which differs from
 * the OIDC `sub` (a per-application value). The ID token is still verified; Graph is read with the access token
 * of the same answer.
 */
const microsoftByGraph: BuiltinSpec = {
  ...microsoft,
  infoURL: 'https://graph.microsoft.com/v1.0/me',
  scopes: ['openid', 'profile', 'User.Read'],
  mapUser: (d) => ({ id: idAt(d, 'id'), name: text(d.displayName) ?? [text(d.givenName), text(d.surname)].filter(Boolean).join(' ') })
}

const yandex: BuiltinSpec = {
  authURL: 'https://oauth.yandex.com/authorize',
  tokenURL: 'https://oauth.yandex.com/token',
  infoURL: 'https://login.yandex.ru/info?format=json',
  infoAuthScheme: 'OAuth',
  scopes: ['login:info', 'login:avatar'],
  mapUser: (d) => {
    const avatar = d.is_avatar_empty === true ? undefined : text(d.default_avatar_id)
    return {
      id: idAt(d, 'id'),
      name: text(d.display_name) ?? text(d.real_name) ?? text(d.login),
      picture: avatar === undefined ? undefined : `https://avatars.yandex.net/get-yapic/${encodeURIComponent(avatar)}/islands-200`
    }
  }
}

const battlenet: BuiltinSpec = {
  authURL: 'https://oauth.battle.net/authorize',
  tokenURL: 'https://oauth.battle.net/token',
  infoURL: 'https://oauth.battle.net/userinfo',
  scopes: [], // userinfo (id, battletag) needs no scope; Battle.net has no avatar
  pkce: false,
  tokenAuth: 'basic',
  mapUser: (d) => ({ id: idAt(d, d.id !== undefined ? 'id' : 'sub'), name: text(d.battletag) })
}

const patreon: BuiltinSpec = {
  authURL: 'https://www.patreon.com/oauth2/authorize',
  tokenURL: 'https://www.patreon.com/api/oauth2/token',
  infoURL: 'https://www.patreon.com/api/oauth2/v2/identity?fields%5Buser%5D=full_name,image_url',
  scopes: ['identity'],
  pkce: false,
  mapUser: (d) => {
    // JSON:API document: `{data: {id, type: "user", attributes: {full_name, image_url}}}`.
    const data = objectAt(d, 'data')
    const attrs = data.attributes === undefined ? {} : objectAt(data, 'attributes')
    return { id: idAt(data, 'id'), name: text(attrs.full_name), picture: text(attrs.image_url) }
  }
}

const discord: BuiltinSpec = {
  authURL: 'https://discord.com/oauth2/authorize',
  tokenURL: 'https://discord.com/api/oauth2/token',
  infoURL: 'https://discord.com/api/users/@me',
  scopes: ['identify'],
  // PKCE: code_challenge_methods_supported ["S256"] in https://discord.com/.well-known/oauth-authorization-server
  mapUser: (d) => {
    const id = idAt(d, 'id')
    const hash = text(d.avatar)
    return {
      id,
      name: text(d.global_name) ?? text(d.username),
      picture: hash === undefined ? undefined : `https://cdn.discordapp.com/avatars/${encodeURIComponent(id)}/${encodeURIComponent(hash)}.png`
    }
  }
}

const twitter: BuiltinSpec = {
  authURL: 'https://x.com/i/oauth2/authorize',
  tokenURL: 'https://api.x.com/2/oauth2/token',
  infoURL: 'https://api.x.com/2/users/me?user.fields=profile_image_url',
  scopes: ['users.read', 'tweet.read'], // users.read requires tweet.read
  // PKCE is required by X (the default here)
  tokenAuth: 'basic', // X's confidential clients authenticate with HTTP Basic
  mapUser: (d) => {
    const data = objectAt(d, 'data')
    return { id: idAt(data, 'id'), name: text(data.name) ?? text(data.username), picture: text(data.profile_image_url) }
  }
}

// The others are in builtins-social.ts and builtins-presets.ts.
const BUILTINS = { github, google, facebook, microsoft, yandex, battlenet, patreon, discord, twitter, ...SOCIAL_BUILTINS, ...PRESET_BUILTINS }

/** A built-in OAuth2 provider's name. */
export type BuiltinProviderName = keyof typeof BUILTINS

/** Names of the built-in OAuth2 providers. */
export const OAUTH2_BUILTIN_NAMES: readonly string[] = Object.freeze(Object.keys(BUILTINS))

/**
 * The built-in OAuth2/OpenID Connect providers' names, each registered with `oauth2Provider({ name, cid, csecret })`
 * (or `fastify.auth.addProvider(name, cid, csecret)`); their endpoints and settings: docs/providers/builtins.md.
 */
export const builtinProviders: readonly BuiltinProviderName[] = OAUTH2_BUILTIN_NAMES as readonly BuiltinProviderName[]

/**
 * Every name a custom provider may not take: the OAuth2 built-ins, the other built-in login methods
 * (apple, telegram) and the dev provider.
 */
export const RESERVED_PROVIDER_NAMES: readonly string[] = Object.freeze([...OAUTH2_BUILTIN_NAMES, 'apple', 'telegram', 'dev'])

/**
 * Refuses a reserved name for a provider of another kind (custom OAuth2, direct, e-mail): a direct provider named
 * `github` would take the routes and the user ids of the built-in one. OptionsError naming `option`.
 */
export function refuseReservedName (option: string, name: string): void {
  if (RESERVED_PROVIDER_NAMES.includes(name)) throw new OptionsError(option, `"${name}" is a built-in provider name; choose another`)
}

/** True for the name of a built-in OAuth2 provider. */
export function isBuiltinName (name: unknown): name is BuiltinProviderName {
  return typeof name === 'string' && Object.hasOwn(BUILTINS, name)
}

const OVERRIDES = ['authURL', 'tokenURL', 'infoURL', 'jwksURL', 'issuer', 'scopes', 'timeout', 'handshakeTtl', 'stateStore', 'keepTokens', 'idFrom', 'tenant']

/** The `idFrom` values each provider takes, its default first. */
const ID_SOURCES: Partial<Record<BuiltinProviderName, readonly string[]>> = { github: ['id', 'login'], microsoft: ['sub', 'graph'] }

/** The built-in's spec for its `idFrom` and (Microsoft) `tenant` options. Throws OptionsError. */
function specFor (name: BuiltinProviderName, entry: BuiltinEntry, o: OAuth2Overrides, label: string): BuiltinSpec {
  const sources = ID_SOURCES[name]
  if (o.idFrom !== undefined && (sources === undefined || !sources.includes(o.idFrom))) {
    throw new OptionsError(`${label}.idFrom`, sources === undefined
      ? 'applies only to github and microsoft'
      : `must be ${sources.map((v) => `'${v}'`).join(' or ')}`)
  }
  if (name === 'github') return o.idFrom === 'login' ? githubByLogin : github
  if (name !== 'microsoft') {
    // A settings-built preset (entra) reads its own `tenant`; to any other provider it means nothing.
    if (o.tenant !== undefined && !settingNames(entry).includes('tenant')) throw new OptionsError(`${label}.tenant`, 'applies only to microsoft and entra')
    return resolveSpec(entry, o as Record<string, unknown>, label)
  }
  return withTenant(o.idFrom === 'graph' ? microsoftByGraph : microsoft, o.tenant, label)
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const TENANT_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}))*$/

/**
 * Microsoft's endpoints for one tenant. The tenant goes into URL paths, so only a GUID or a host-name-like word
 * is taken (go-pkgz/auth falls back to `common` on a bad one; a typo here is a startup error instead). With a
 * tenant id the ID token's issuer is that tenant's, so a token from another tenant is refused.
 */
function withTenant (spec: BuiltinSpec, tenant: string | undefined, label: string): BuiltinSpec {
  if (tenant === undefined || tenant === 'common') return spec
  if (typeof tenant !== 'string' || tenant.length > 253 || !TENANT_NAME.test(tenant)) {
    throw new OptionsError(`${label}.tenant`, "must be 'common', 'organizations', 'consumers', a tenant id (GUID) or a domain name")
  }
  const at = (url: string): string => url.replace('/common/', `/${tenant}/`)
  const issuer = GUID.test(tenant) ? `https://login.microsoftonline.com/${tenant.toLowerCase()}/v2.0` : spec.oidc!.issuer
  return { ...spec, authURL: at(spec.authURL), tokenURL: at(spec.tokenURL), oidc: { issuer, jwksURL: at(spec.oidc!.jwksURL) } }
}

/** The engine configuration of a built-in provider with the caller's overrides. Throws OptionsError. */
export function builtinConfig (name: BuiltinProviderName, cid: string, csecret: string, overrides: OAuth2Overrides = {}): OAuth2ProviderConfig {
  const label = `oauth2.${name}`
  const entry: BuiltinEntry = BUILTINS[name]
  const o = checkKeys(overrides, [...OVERRIDES, ...settingNames(entry)], label) as OAuth2Overrides
  const spec = specFor(name, entry, o, label)
  if ((o.jwksURL !== undefined || o.issuer !== undefined) && spec.oidc === undefined) {
    throw new OptionsError(`${label}.jwksURL`, 'and issuer apply only to OpenID Connect providers')
  }
  const oidc: OidcSettings | undefined = spec.oidc === undefined
    ? undefined
    : { issuer: o.issuer ?? spec.oidc.issuer, jwksURL: o.jwksURL ?? spec.oidc.jwksURL }
  return {
    ...spec,
    pkce: spec.pkce ?? true,
    tokenAuth: spec.tokenAuth ?? 'post',
    name,
    cid,
    csecret,
    authURL: o.authURL ?? spec.authURL,
    tokenURL: o.tokenURL ?? spec.tokenURL,
    infoURL: o.infoURL ?? spec.infoURL,
    scopes: o.scopes ?? spec.scopes,
    oidc,
    timeout: o.timeout,
    handshakeTtl: o.handshakeTtl,
    stateStore: o.stateStore,
    keepTokens: o.keepTokens
  }
}

export type { MapUserFn }
