/**
 * The embeddable local OAuth2 server: started in the background at a given URL, it yields the
 * options to register a custom provider on it. Client credentials are generated unless given.
 */
import { randomBytes } from 'node:crypto'
import { OptionsError } from '../lib/errors.js'
import { startAuthServer } from './server.js'
import type { ClientCredentials } from './types.js'
import { listenHost, resolveClient, resolveCommon, resolvePort, type CommonServerOptions } from './options.js'
import { providerOptionsFor } from './provider-options.js'
import { publicHostOf, type RunningOAuth2Server } from './dev-server.js'

/** Options of `startLocalOAuth2Server`. */
export interface LocalOAuth2ServerOptions extends CommonServerOptions {
  /** Address of the server with port, e.g. `http://localhost:9096`; port 0 picks a free one. Required. */
  url: string
  /** Show a login page (true) or sign `autoLoginUser` in at once (false, the default). */
  withLoginPage?: boolean | undefined
  /** Client credentials. Default: generated per start. */
  client?: ClientCredentials | undefined
  /** Address to listen on. Default: from `url` (`localhost` → 127.0.0.1). */
  host?: string | undefined
}

/** Starts a local OAuth2 server; resolves once it listens, with the options of a custom provider on it. */
export async function startLocalOAuth2Server (opts: LocalOAuth2ServerOptions): Promise<RunningOAuth2Server> {
  if (opts === null || typeof opts !== 'object') throw new OptionsError('startLocalOAuth2Server', 'needs an options object with url')
  const url = parseServerUrl(opts.url)
  const host = listenHost('startLocalOAuth2Server.host', opts.host ?? url.hostname)
  const client = opts.client === undefined
    ? { cid: `local-${randomBytes(6).toString('hex')}`, csecret: randomBytes(32).toString('base64url') }
    : resolveClient('startLocalOAuth2Server.client', opts.client)
  const server = await startAuthServer({
    ...resolveCommon('startLocalOAuth2Server', opts, false),
    label: 'local-oauth2',
    host,
    port: resolvePort('startLocalOAuth2Server.url', url.port === '' ? 80 : Number(url.port)),
    publicHost: publicHostOf(url.hostname.replace(/^\[(.*)\]$/, '$1')),
    client
  })
  return { url: server.url, close: server.close, providerOptions: providerOptionsFor(server.url, client, server.registerRedirectUri) }
}

function parseServerUrl (value: unknown): URL {
  if (typeof value !== 'string' || value === '') throw new OptionsError('startLocalOAuth2Server.url', 'is required (e.g. http://localhost:9096)')
  let url: URL
  try { url = new URL(value) } catch { throw new OptionsError('startLocalOAuth2Server.url', `is not a valid URL: ${value}`) }
  if (url.protocol !== 'http:') throw new OptionsError('startLocalOAuth2Server.url', 'must be http (the server speaks plain HTTP on loopback)')
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '') throw new OptionsError('startLocalOAuth2Server.url', 'must be an origin without path or query')
  return url
}
