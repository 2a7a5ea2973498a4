/**
 * The one OAuth2 authorization server behind the `dev` server and the embeddable local server: a real
 * Fastify app on loopback speaking the authorization-code grant (RFC 6749 §4.1) with PKCE S256
 * (RFC 7636), a Bearer-token userinfo endpoint (RFC 6750) and a picture per user.
 *
 * Endpoints (GitHub's paths, plus the short names most OAuth2 servers use):
 *   GET  /login/oauth/authorize | /authorize     authorization request → login page or auto-login
 *   POST /login/oauth/authorize | /authorize     login form submit → redirect with code and state
 *   POST /login/oauth/access_token | /token      code → access token
 *   GET  /user | /userinfo                       `{ id, name, picture, email? }`
 *   GET  /picture/<sha1>.png                     the user's picture
 */
import Fastify, { type FastifyInstance } from 'fastify'
import formbody from '@fastify/formbody'
import cookie from '@fastify/cookie'
import type { AddressInfo } from 'node:net'
import { OAuthError, sendOAuthError } from './protocol.js'
import { denyFraming } from '../lib/html.js'
import { registerAuthorizeRoutes } from './authorize.js'
import { registerTokenRoutes } from './token.js'
import { isPictureFile, renderPicture } from './picture.js'
import { SecretStore } from './secret-store.js'
import { serverEndpoints } from './endpoints.js'
import type { AuthServerConfig, RunningAuthServer, ServerContext } from './types.js'

/** Builds the app, listens, and resolves once it accepts connections. */
export async function startAuthServer (config: AuthServerConfig): Promise<RunningAuthServer> {
  const ctx: ServerContext = {
    config,
    url: '',
    browserCookie: '',
    logins: new SecretStore(config.loginTtlMs),
    codes: new SecretStore(config.codeTtlMs),
    tokens: new SecretStore(config.tokenTtlMs)
  }
  const app = buildApp(ctx)
  try {
    await app.listen({ host: config.host, port: config.port })
  } catch (err) {
    // A busy port or bad host: leave nothing half-started behind.
    await app.close()
    throw err
  }
  const port = (app.server.address() as AddressInfo).port
  ctx.url = `http://${config.publicHost.includes(':') ? `[${config.publicHost}]` : config.publicHost}:${port}`
  ctx.browserCookie = `gh_oauth2_browser_${port}`
  config.logger.logf('[INFO] [%s] OAuth2 server listening on %s', config.label, ctx.url)
  let closing: Promise<void> | undefined
  return {
    url: ctx.url,
    registerRedirectUri (uri: string) {
      const { redirectUris } = config
      if (redirectUris.includes(uri)) return
      if (config.redirectUrisFixed) {
        config.logger.logf('[WARN] [%s] %s is not among the redirectUris given: logins through it will be refused', config.label, uri)
        return
      }
      redirectUris.push(uri)
    },
    close: async () => {
      closing ??= app.close().then(() => { config.logger.logf('[INFO] [%s] OAuth2 server on %s stopped', config.label, ctx.url) })
      await closing
    }
  }
}

function buildApp (ctx: ServerContext): FastifyInstance {
  // Small bodies only: a token request is a few hundred bytes.
  const app = Fastify({ logger: false, bodyLimit: 16 * 1024 })
  // Forms and JSON only: anything else (text/plain included, which Fastify parses by default) is a 415.
  app.removeContentTypeParser('text/plain')
  void app.register(formbody)
  void app.register(cookie)

  app.addHook('onSend', async (_request, reply) => {
    // Codes, tokens and user data must never be cached (RFC 6749 §5.1), nor leak through Referer.
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
    reply.header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer')
    // Nothing this server answers may be framed (its login page least of all).
    denyFraming(reply)
  })

  app.setErrorHandler((err: unknown, _request, reply) => {
    if (err instanceof OAuthError) return sendOAuthError(reply, err)
    const status = (err as { statusCode?: unknown }).statusCode
    if (typeof status === 'number' && status >= 400 && status < 500) {
      // Fastify's own refusals: unparsable JSON, unsupported content type, body too large.
      return sendOAuthError(reply, new OAuthError(status, 'invalid_request', (err as Error).message))
    }
    ctx.config.logger.logf('[ERROR] [%s] internal error: %v', ctx.config.label, err)
    return sendOAuthError(reply, new OAuthError(500, 'server_error', 'internal error'))
  })
  app.setNotFoundHandler((request, reply) => sendOAuthError(reply, new OAuthError(404, 'not_found', `no route ${request.method} ${request.url.split('?')[0]}`)))

  app.get('/', async () => ({ issuer: ctx.url, ...serverEndpoints(ctx.url) }))
  registerAuthorizeRoutes(app, ctx)
  registerTokenRoutes(app, ctx)

  app.get<{ Params: { file: string } }>('/picture/:file', async (request, reply) => {
    if (!isPictureFile(request.params.file)) throw new OAuthError(404, 'not_found', 'no such picture')
    // The picture is a pure function of its name: cache it freely.
    return reply.type('image/png').header('cache-control', 'public, max-age=86400').send(await renderPicture(request.params.file))
  })
  return app
}
