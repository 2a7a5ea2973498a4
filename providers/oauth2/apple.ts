/**
 * Sign in with Apple on the OAuth2 engine.
 *
 * - The client secret is an ES256 JWT signed with the developer's private key (header `kid` = keyId; claims
 *   iss = teamId, sub = clientId, aud = https://appleid.apple.com), made fresh for each code exchange.
 * - With a scope requested, Apple answers by `form_post`: the callback is a cross-site POST of a form
 *   (`code`, `state`, and at first sign-up only `user`, a JSON with the name).
 * - Apple has no userinfo endpoint: the user id is the verified ID token's `sub` (nonce, iss, aud, exp checked
 *   against Apple's JWKS); the name comes from `user` at first sign-up only, `noname_…` afterwards.
 */
import type { Duration } from '../../lib/duration.js'
import { readFile } from 'node:fs/promises'
import type { KeyObject, webcrypto } from 'node:crypto'
import { OptionsError } from '../../lib/errors.js'
import { missingText } from '../../lib/options.js'
import type { MapUserFn, OAuth2ProviderConfig } from './engine.js'
import { idAt, text } from './fields.js'
import type { StateStoreOption } from '../../stores/state/resolve.js'

/** A private key: PKCS#8 PEM text (Apple's `.p8` file) or an imported key. */
export type ApplePrivateKey = string | webcrypto.CryptoKey | KeyObject
/** Loads the private key; called once, at registration. */
export type AppleKeyLoader = () => Promise<ApplePrivateKey>

/** Apple sign-in configuration. */
export interface AppleConfig {
  /** Services ID (web) or App ID used for sign-in; the ID token's `aud`. */
  clientId: string
  /** Developer team id: `iss` of the client secret. */
  teamId: string
  /** Id of the private key: `kid` of the client secret. */
  keyId: string
  /** `form_post` (default; required by Apple when scopes are requested) or `query` (no scopes). */
  responseMode?: 'form_post' | 'query' | undefined
  /** Scopes. Default `['name']` (email is not needed to sign in). */
  scopes?: string[] | undefined
  /** Authorization endpoint. Default `https://appleid.apple.com/auth/authorize`. */
  authURL?: string | undefined
  /** Token endpoint. Default `https://appleid.apple.com/auth/token`. */
  tokenURL?: string | undefined
  /** Apple's JWKS. Default `https://appleid.apple.com/auth/keys`. */
  jwksURL?: string | undefined
  /** Expected ID-token `iss`, also the client secret's `aud`. Default `https://appleid.apple.com`. */
  issuer?: string | undefined
  /** Deadline of each call to Apple: ms or `'10s'`. Default 10 seconds. */
  timeout?: Duration | undefined
  /** Lifetime of the login handshake: ms or `'10m'`. Default 10 minutes. */
  handshakeTtl?: Duration | undefined
  /** Where used login states are remembered (StateStore or `redis://` address). Default: root `stateStore`, else memory. */
  stateStore?: StateStoreOption | undefined
}

const APPLE = 'https://appleid.apple.com'
/** Lifetime of one client secret; it is made per exchange, so a few minutes is plenty (Apple allows 6 months). */
const CLIENT_SECRET_TTL = '5m'

/** The built-in key loader: reads a PKCS#8 PEM file (Apple's `AuthKey_<keyId>.p8`). */
export function appleKeyFromFile (path: string): AppleKeyLoader {
  return async () => readFile(path, 'utf8')
}

/**
 * The engine configuration of Sign in with Apple (mounted at `{authPrefix}/apple/…`). Loads the key now;
 * rejects with an OptionsError (`apple.keyLoader`, the loader's error as its cause) when the loader fails or the
 * key is not an ES256 (P-256) private key.
 */
export async function appleConfig (config: AppleConfig, keyLoader: AppleKeyLoader): Promise<OAuth2ProviderConfig> {
  const fail = (why: string, option = 'apple', cause?: unknown): never => {
    throw new OptionsError(option, why, cause === undefined ? undefined : { cause })
  }
  if (config === null || typeof config !== 'object') fail('needs {clientId, teamId, keyId}')
  for (const k of ['clientId', 'teamId', 'keyId'] as const) if (typeof config[k] !== 'string' || config[k] === '') fail(missingText(config[k], `Apple's ${k}, required`), `apple.${k}`)
  if (typeof keyLoader !== 'function') fail('is required (e.g. appleKeyFromFile(path))', 'apple.keyLoader')
  const responseMode = config.responseMode ?? 'form_post'
  if (responseMode !== 'form_post' && responseMode !== 'query') fail('must be "form_post" or "query"', 'apple.responseMode')
  const scopes = config.scopes ?? ['name']
  if (responseMode === 'query' && scopes.length > 0) fail('must be "form_post" when scopes are requested (Apple requires it)', 'apple.responseMode')

  let loaded: ApplePrivateKey
  try {
    loaded = await keyLoader()
  } catch (err) {
    return fail(`could not load the private key: ${(err as Error)?.message ?? String(err)}`, 'apple.keyLoader', err)
  }
  // jose is loaded when Apple is configured, not when the package is imported.
  const { importPKCS8, SignJWT } = await import('jose')
  let key: webcrypto.CryptoKey | KeyObject
  try {
    key = typeof loaded === 'string' ? await importPKCS8(loaded, 'ES256') : loaded
  } catch (err) {
    return fail(`gave a key that is not a PKCS#8 P-256 key: ${(err as Error).message}`, 'apple.keyLoader', err)
  }
  const issuer = config.issuer ?? APPLE
  const makeSecret = (): Promise<string> => new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: config.keyId })
    .setIssuer(config.teamId)
    .setSubject(config.clientId)
    .setAudience(issuer)
    .setIssuedAt()
    .setExpirationTime(CLIENT_SECRET_TTL)
    .sign(key)
  // Sign once now, so a key of the wrong type fails registration, not the first login.
  try { await makeSecret() } catch (err) { fail(`gave a key that cannot sign ES256: ${(err as Error).message}`, 'apple.keyLoader', err) }

  return {
    name: 'apple',
    cid: config.clientId,
    csecret: makeSecret,
    authURL: config.authURL ?? `${APPLE}/auth/authorize`,
    tokenURL: config.tokenURL ?? `${APPLE}/auth/token`,
    scopes,
    pkce: false, // not documented by Apple
    tokenAuth: 'post',
    responseMode,
    oidc: { issuer, jwksURL: config.jwksURL ?? `${APPLE}/auth/keys`, keepLastGoodKeys: true },
    mapUser: mapAppleUser,
    timeout: config.timeout,
    handshakeTtl: config.handshakeTtl,
    stateStore: config.stateStore
  }
}

/** `sub` from the verified ID token; the name from the first sign-up's `user` form field when present. */
const mapAppleUser: MapUserFn = (claims, _raw, ctx) => ({ id: idAt(claims, 'sub'), name: nameFromUserField(ctx.form?.user) })

function nameFromUserField (field: string | undefined): string | undefined {
  if (field === undefined) return undefined
  try {
    const v = JSON.parse(field) as { name?: { firstName?: unknown; lastName?: unknown } | undefined }
    const parts = [text(v?.name?.firstName), text(v?.name?.lastName)].filter((p) => p !== undefined)
    return parts.length > 0 ? parts.join(' ') : undefined
  } catch {
    return undefined // the field is unsigned browser input; a broken one only costs the display name
  }
}
