/**
 * Test helper for the registered clients: an app on a free loopback port whose `url` is its own address (so that
 * the RFC 8414 issuer is what a standard OAuth 2 client discovers), with a `mobile` (native) and a `cli` (device)
 * client, a direct provider `local` that lets anyone in, `/private` (authenticate), and `/app/pair`, where the app
 * hands a signed-in cookie user a first token pair of `mobile` (`tokens.issuePair`). Every audit event is kept.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import * as oidc from 'openid-client'
import { authPlugin, type AuthOptions } from '../../auth.js'
import type { AuditEvent } from '../../lib/audit/events.js'
import { freePort } from './redis-server.js'

export const CLIENTS_SECRET = 'clients-tests-secret-0123456789abcdef-0123'

export interface ClientsApp {
  app: FastifyInstance
  base: string
  events: AuditEvent[]
  /** A first pair of `client` for user `name` (id `u-<name>`), as the app's own sign-in would hand it. */
  pair (name: string, client?: string): Promise<{ access_token: string; refresh_token: string; expires_in: number }>
  /** openid-client's configuration of `clientId`, found by discovery (RFC 8414) on this app. */
  discover (clientId?: string): Promise<oidc.Configuration>
  close (): Promise<void>
}

export async function clientsApp (opts: Partial<AuthOptions> = {}, port?: number, setup?: (app: FastifyInstance) => void): Promise<ClientsApp> {
  port ??= await freePort()
  const base = `http://127.0.0.1:${port}`
  const events: AuditEvent[] = []
  const app = Fastify()
  await app.register(authPlugin, {
    secret: () => CLIENTS_SECRET,
    url: base,
    providers: [{ kind: 'direct', name: 'local', checker: () => true }],
    clients: [
      { id: 'mobile', kind: 'native', name: 'Demo phone app', redirectUris: ['com.example.app:/callback', 'http://127.0.0.1/callback'] },
      { id: 'cli', kind: 'device', name: 'Demo CLI' }
    ],
    onEvent: (e) => { events.push(e) },
    ...opts
  } as AuthOptions)
  app.get('/private', { preHandler: app.auth.authenticate }, async (req) => ({ name: req.user!.name }))
  app.post<{ Body: { name: string; client?: string } }>('/app/pair', async (req) =>
    await app.auth.tokens.issuePair(req, req.body.client ?? 'mobile', { user: { id: `u-${req.body.name}`, name: req.body.name } }))
  setup?.(app)
  await app.listen({ port, host: '127.0.0.1' })
  return {
    app,
    base,
    events,
    async pair (name, client) {
      const r = await app.inject({ method: 'POST', url: '/app/pair', payload: { name, client } })
      if (r.statusCode !== 200) throw new Error(`pair answered ${r.statusCode}: ${r.body}`)
      return r.json()
    },
    async discover (clientId = 'mobile') {
      return await oidc.discovery(new URL(`${base}/auth`), clientId, undefined, oidc.None(), { algorithm: 'oauth2', execute: [oidc.allowInsecureRequests] })
    },
    close: async () => { await app.close() }
  }
}

/**
 * The app's own sign-in page at `/sign-in` (use with `loginPage: '/sign-in'`): a plain password form for `local`
 * that posts with the `from` it was given, so that a browser comes back to the authorization or device page.
 */
export function addSignInPage (app: FastifyInstance): void {
  app.get('/sign-in', async (request, reply) => {
    const from = String((request.query as Record<string, unknown>).from ?? '/')
    return await reply.type('text/html').send(`<!doctype html><form method="post" action="/auth/local/login?from=${encodeURIComponent(from)}">
<input name="user" id="user"><input name="passwd" id="passwd" type="password"><button id="go">Sign in</button></form>`)
  })
}
