/**
 * What a client of a local OAuth2 server registers: the shape `addCustomProvider(name, client, opts)` takes.
 */
import { userId, type UserData } from '../../plugins/core/user.js'
import { serverEndpoints, type ClientCredentials } from './server.js'
import type { LocalUserInfo } from './token.js'

/** Scopes a client asks for; the server needs none to answer userinfo, this names the intent. */
export const LOCAL_SCOPES: readonly string[] = Object.freeze(['user'])

/** Custom-provider options for a local server (SPEC §3 "custom OAuth2"). */
export interface LocalProviderOptions {
  client: ClientCredentials
  endpoint: { authURL: string; tokenURL: string }
  infoURL: string
  scopes: string[]
  /** Userinfo JSON → User, ids as `userId(<provider name>, data.id)`. Throws on a malformed answer. */
  mapUser: (data: unknown, raw?: unknown) => UserData
}

/**
 * The userinfo mapper for a provider registered under `providerName`. The picture stays the server's
 * link: the login engine hands it to the avatar proxy, which replaces it.
 */
export function localUserMapper (providerName: string): (data: unknown, raw?: unknown) => UserData {
  return (data) => {
    const info = data as Partial<LocalUserInfo> | null
    if (info === null || typeof info !== 'object' || typeof info.id !== 'string' || info.id === '' || typeof info.name !== 'string') {
      throw new Error('userinfo answer must be an object with string id and name')
    }
    const user: UserData = { id: userId(providerName, info.id), name: info.name }
    if (typeof info.picture === 'string' && info.picture !== '') user.picture = info.picture
    if (typeof info.email === 'string' && info.email !== '') user.email = info.email
    return user
  }
}

export function providerOptionsFor (url: string, client: ClientCredentials, providerName: string): LocalProviderOptions {
  const { authURL, tokenURL, infoURL } = serverEndpoints(url)
  return { client: { ...client }, endpoint: { authURL, tokenURL }, infoURL, scopes: [...LOCAL_SCOPES], mapUser: localUserMapper(providerName) }
}
