/**
 * The `dev` provider: the OAuth2 engine against the fake authorization server of servers/, where any user name
 * signs in. The server follows the Fastify instance: it starts when the app becomes ready (so its real port is
 * known even for port 0) and stops when the app closes. The server's code (and its dependencies) is loaded
 * only then.
 */
import type { Duration } from '../../lib/duration.js'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { HttpError, OptionsError } from '../../lib/errors.js'
import { checkKeys, optionInt } from '../../lib/options.js'
import type { StateStoreOption } from '../../stores/state/resolve.js'
import { builtinKit, type AuthProvider } from '../../plugins/core/kit.js'
import type { LoginRequest } from '../../lib/login/login-request.js'
import type { DevServerOptions, RunningOAuth2Server } from '../../servers/dev-server.js'
import { createOAuth2Provider } from './engine.js'

import { DEV_SERVER_PORT } from '../../servers/dev-port.js'

export { DEV_PORT } from '../../servers/dev-port.js'

/** Options of the dev provider: the dev server's (login page, email function, …) plus client-side ones. */
export interface DevProviderOptions extends Omit<DevServerOptions, 'port'> {
  /** Port of the fake OAuth2 server (loopback). Default 8084; 0 picks a free one. */
  port?: number | undefined
  /** Deadline of each call to the dev server: ms or `'10s'`. Default 10 seconds. */
  timeout?: Duration | undefined
  /** Where used login states are remembered. Default: the core's state store. */
  stateStore?: StateStoreOption | undefined
  /** Called with the running server once the app is ready (its `url` is then known, even for port 0). */
  onServer?: ((server: RunningOAuth2Server) => void) | undefined
}

const KEYS = [
  'port', 'timeout', 'stateStore', 'onServer', 'host', 'client', 'withLoginPage', 'loginPageHandler', 'autoLoginUser', 'emailFn',
  'redirectUris', 'logger', 'codeTtl', 'tokenTtl', 'loginTtl'
]

async function dev (fastify: FastifyInstance, opts: DevProviderOptions): Promise<void> {
  const { port: rawPort, timeout, stateStore, onServer, ...serverOpts } = checkKeys(opts ?? {}, KEYS, 'dev') as DevProviderOptions
  const port = optionInt('dev.port', rawPort, DEV_SERVER_PORT)
  if (port > 65535) throw new OptionsError('dev.port', 'must be an integer port 0..65535')
  const kit = builtinKit(fastify, 'dev')
  const store = await kit.openStateStore(stateStore, 'dev.stateStore')
  let server: RunningOAuth2Server | undefined
  let engine: AuthProvider | undefined

  const started = (): AuthProvider => {
    if (engine === undefined) throw new HttpError(503, 'dev provider not ready', 'the dev OAuth2 server is not running')
    return engine
  }
  kit.mount({
    name: 'dev',
    login: (request: FastifyRequest, reply: FastifyReply, login: LoginRequest) => started().login(request, reply, login),
    callback: (request: FastifyRequest, reply: FastifyReply) => started().callback!(request, reply)
  })
  fastify.addHook('onReady', async () => {
    const { startDevServer } = await import('../../servers/dev-server.js')
    // Only our own callback may receive codes: with the public dev credentials, an open redirect_uri would make
    // the dev server a code-leaking redirector on loopback.
    const callback = `${kit.url}${kit.authPrefix}/dev/callback`
    // The server logs through the package's logger (its own start line included) unless given another.
    server = await startDevServer({ redirectUris: [callback], logger: kit.logger, ...serverOpts, port })
    const p = server.providerOptions
    engine = await createOAuth2Provider(kit, {
      name: 'dev',
      cid: p.cid,
      csecret: p.csecret,
      authURL: p.endpoint.authURL,
      tokenURL: p.endpoint.tokenURL,
      infoURL: p.infoURL,
      scopes: p.scopes,
      pkce: true,
      tokenAuth: 'basic',
      mapUser: p.mapUser,
      timeout
    }, store)
    // Its users' pictures are on its own loopback address, which the avatar fetch guard refuses: that one origin
    // (not loopback at large) is let through.
    kit.trustAvatarOrigin(server.url)
    onServer?.(server)
  })
  fastify.addHook('onClose', async () => {
    await server?.close()
    server = undefined
    engine = undefined
  })
}

/** The dev provider and its fake OAuth2 server, started and stopped with the app (`gatehouse-dev`). */
export const devProvider = fp(dev, { name: 'gatehouse-dev', fastify: '5.x' })
