/**
 * The `dev` provider: the OAuth2 engine against the fake authorization server of providers/oauth2-server,
 * where any user name signs in. The server follows the Fastify instance: it starts when the app becomes ready
 * (so its real port is known even for port 0) and stops when the app closes.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AuthProvider, GatehouseAuth } from '../../plugins/core/types.js'
import { HttpError } from '../../plugins/shared/errors.js'
import { resolveStateStore, type StateStoreOption } from '../../plugins/state-store/resolve.js'
import { DEV_SERVER_PORT, startDevServer, type DevServerOptions, type RunningOAuth2Server } from '../oauth2-server/index.js'
import { createOAuth2Provider } from './engine.js'

/** Options of the dev provider: the dev server's (login page, email function, …) plus client-side ones. */
export interface DevProviderOptions extends Omit<DevServerOptions, 'port'> {
  /** Deadline of each call to the dev server, ms. Default 10 000. */
  timeoutMs?: number
  /** Where used login states are remembered. Default: root `stateStore`, else memory. */
  stateStore?: StateStoreOption
}

/** The mounted dev provider; `server` is the running fake server once the app is ready. */
export interface DevProvider extends AuthProvider {
  readonly server: RunningOAuth2Server | undefined
}

/**
 * Registers the `dev` provider and ties its fake OAuth2 server (default port 8084, loopback) to the app's
 * lifecycle. Call before the app is ready.
 */
export function addDevProvider (auth: GatehouseAuth, port: number = DEV_SERVER_PORT, opts: DevProviderOptions = {}): DevProvider {
  if (opts === null || typeof opts !== 'object') throw new Error('fastify-gatehouse: dev provider: options must be an object')
  const { timeoutMs, stateStore, ...serverOpts } = opts
  const store = resolveStateStore(auth, stateStore)
  let server: RunningOAuth2Server | undefined
  let engine: AuthProvider | undefined

  const started = (): AuthProvider => {
    if (engine === undefined) throw new HttpError(503, 'dev provider not ready', 'the dev OAuth2 server is not running')
    return engine
  }
  const provider: DevProvider = {
    name: 'dev',
    get server () { return server },
    login: (request: FastifyRequest, reply: FastifyReply) => started().login(request, reply),
    callback: (request: FastifyRequest, reply: FastifyReply) => started().callback(request, reply),
    logout: (request: FastifyRequest, reply: FastifyReply) => started().logout(request, reply)
  }
  if (auth.providerNames().includes('dev')) throw new TypeError('fastify-gatehouse: provider "dev" is already registered')
  // Hooks first: after the app started this throws, before anything is mounted.
  auth.instance.addHook('onReady', async () => {
    // Only our own callback may receive codes: with the public dev credentials, an open redirect_uri would make
    // the dev server a code-leaking redirector on loopback.
    const callback = `${auth.options.url}${auth.options.authPrefix}/dev/callback`
    // The server logs through the package's logger (its own start line included) unless given another.
    server = await startDevServer({ redirectUris: [callback], logger: auth.logger, ...serverOpts, port })
    const p = server.providerOptions
    engine = createOAuth2Provider(auth, {
      name: 'dev',
      cid: p.client.cid,
      csecret: p.client.csecret,
      authURL: p.endpoint.authURL,
      tokenURL: p.endpoint.tokenURL,
      infoURL: p.infoURL,
      scopes: p.scopes,
      pkce: true,
      tokenAuth: 'basic',
      mapUser: p.mapUser,
      timeoutMs,
      stateStore: store
    })
  })
  auth.instance.addHook('onClose', async () => {
    await server?.close()
    server = undefined
    engine = undefined
  })
  auth.addCustomHandler(provider)
  return provider
}
