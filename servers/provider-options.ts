/**
 * What a client of a local OAuth2 server registers: the options of a custom provider, so that
 * `app.register(oauth2Provider, { name, ...server.providerOptions })` works as is.
 */
import type { ClientCredentials } from './types.js'
import { serverEndpoints } from './endpoints.js'
import type { LocalUserInfo } from './token.js'

/** Scopes a client asks for; the server needs none to answer userinfo, this names the intent. */
export const LOCAL_SCOPES: readonly string[] = Object.freeze(['user'])

/**
 * A user as a custom provider's mapping function returns it: `id` is the server's own user id; the login
 * engine turns it into `<provider name>_<sha1 hex>`, so the provider name is not needed here.
 */
export interface LocalMappedUser { id: string; name: string; picture?: string | undefined; email?: string | undefined }

/** Custom-provider options for a local server: client credentials, endpoints, scopes and the mapping. */
export interface LocalProviderOptions {
  /** Client id. */
  cid: string
  /** Client secret. */
  csecret: string
  endpoint: { authURL: string; tokenURL: string }
  infoURL: string
  scopes: string[]
  /** Userinfo JSON → user. Throws on a malformed answer (the engine reports that as a provider failure). */
  mapUser: (data: unknown, raw?: unknown) => LocalMappedUser
  /** Registers the provider's callback with the server (called by the OAuth2 engine when the provider is set up). */
  onRedirectUri: (uri: string) => void
}

/**
 * Maps a local server's userinfo answer. The picture stays the server's link: the login engine hands it
 * to the avatar proxy, which stores it and links its own copy.
 */
export function mapLocalUser (data: unknown): LocalMappedUser {
  const info = data as Partial<LocalUserInfo> | null
  if (info === null || typeof info !== 'object' || typeof info.id !== 'string' || info.id === '' || typeof info.name !== 'string') {
    throw new Error('userinfo answer must be an object with string id and name')
  }
  const user: LocalMappedUser = { id: info.id, name: info.name }
  if (typeof info.picture === 'string' && info.picture !== '') user.picture = info.picture
  if (typeof info.email === 'string' && info.email !== '') user.email = info.email
  return user
}

/** Everything a client needs to use the server at `url` with these credentials. */
export function providerOptionsFor (url: string, client: ClientCredentials, registerRedirectUri: (uri: string) => void): LocalProviderOptions {
  const { authURL, tokenURL, infoURL } = serverEndpoints(url)
  return {
    cid: client.cid,
    csecret: client.csecret,
    endpoint: { authURL, tokenURL },
    infoURL,
    scopes: [...LOCAL_SCOPES],
    mapUser: mapLocalUser,
    onRedirectUri: registerRedirectUri
  }
}
