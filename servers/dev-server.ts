/**
 * The `dev` provider's fake OAuth2 server: any user name signs in. Development only, hence the fixed,
 * well-known client credentials. Listens on loopback, port 8084 by default.
 */
import { startAuthServer } from './server.js'
import { DEV_SERVER_PORT } from './dev-port.js'
import type { ClientCredentials } from './types.js'
import { listenHost, resolveClient, resolveCommon, resolvePort, type CommonServerOptions } from './options.js'
import { providerOptionsFor, type LocalProviderOptions } from './provider-options.js'

export { DEV_SERVER_PORT } from './dev-port.js'
/** The dev server's client credentials unless others are given. Public by design: dev only. */
export const DEV_CLIENT: Readonly<ClientCredentials> = Object.freeze({ cid: 'dev', csecret: 'dev-secret' })

/** Options of `startDevServer`. */
export interface DevServerOptions extends CommonServerOptions {
  /** Port; 0 picks a free one. Default 8084. */
  port?: number | undefined
  /** Address to listen on. Default `127.0.0.1`. */
  host?: string | undefined
  /** Client credentials. Default `DEV_CLIENT`. */
  client?: ClientCredentials | undefined
}

/** A running OAuth2 server and what a client needs to use it. */
export interface RunningOAuth2Server {
  /** Base URL with the bound port, e.g. `http://127.0.0.1:8084`. */
  url: string
  /** Options of a custom provider on this server: `app.register(oauth2Provider, { name, ...providerOptions })`. */
  providerOptions: LocalProviderOptions
  /** Stops listening; resolves once the port is free. Safe to call twice. */
  close(): Promise<void>
}

/** Starts the dev server; resolves once it listens. The login page is on unless `withLoginPage: false`. */
export async function startDevServer (opts: DevServerOptions = {}): Promise<RunningOAuth2Server> {
  const host = listenHost('startDevServer.host', opts.host ?? '127.0.0.1')
  const client = opts.client === undefined ? { ...DEV_CLIENT } : resolveClient('startDevServer.client', opts.client)
  const server = await startAuthServer({
    ...resolveCommon('startDevServer', opts, true),
    label: 'dev-oauth2',
    host,
    port: resolvePort('startDevServer.port', opts.port ?? DEV_SERVER_PORT),
    publicHost: publicHostOf(host),
    client
  })
  return { url: server.url, close: server.close, providerOptions: providerOptionsFor(server.url, client, server.registerRedirectUri) }
}

/** Wildcard listen addresses are reached through loopback. */
export function publicHostOf (host: string): string {
  return host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host
}
