/**
 * Test helper for the session tests: an app with the root plugin, a direct provider `local` that lets anyone in,
 * and routes `/private` (authenticate) and `/whoami` (trace), over real HTTP on loopback.
 */
import type { FastifyInstance } from 'fastify'
import { authPlugin, type AuthOptions } from '../../auth.js'
import type { CoreTokenService } from '../../plugins/core/tokens.js'
import { coreOf } from '../../plugins/core/internals.js'
import { client, listen, type Client } from './client.js'

export const SECRET = 'session-tests-secret-0123456789abcdef-0123'

export interface SessionApp {
  app: FastifyInstance
  base: string
  /** Signs `name` in with cookies (and `query` appended to the login URL). */
  login (name: string, query?: string): Promise<Client>
  /** GET `path` with the client's cookies and its XSRF header. */
  get (c: Client, path?: string): Promise<Response>
  /** The core's token service, with its cache. */
  tokens: CoreTokenService
  close (): Promise<void>
}

export async function sessionApp (opts: Partial<AuthOptions> = {}, setup?: (app: FastifyInstance) => void): Promise<SessionApp> {
  const { app, base } = await listen(async (app) => {
    await app.register(authPlugin, {
      secret: () => SECRET,
      url: 'http://127.0.0.1',
      providers: [{ kind: 'direct', name: 'local', checker: () => true }],
      ...opts
    } as AuthOptions)
    app.get('/private', { preHandler: app.auth.authenticate }, async (req) => ({ name: req.user!.name }))
    app.get('/whoami', { preHandler: app.auth.trace }, async (req) => ({ user: req.user?.name ?? null }))
    setup?.(app)
  })
  return {
    app,
    base,
    async login (name, query = '') {
      const c = client(base)
      const r = await c.fetch(`/auth/local/login${query}`, { method: 'POST', form: { user: name, passwd: 'x' } })
      if (r.status !== 200) throw new Error(`login of ${name} answered ${r.status}: ${await r.text()}`)
      return c
    },
    get: (c, path = '/private') => c.fetch(path, { headers: { 'x-xsrf-token': c.jar.get(xsrfName(c)) ?? '' } }),
    tokens: coreOf(app).tokens,
    close: () => app.close()
  }
}

/** The XSRF cookie's name in a jar (`__Host-XSRF-TOKEN` on https apps). */
export function xsrfName (c: Client): string {
  return c.jar.get('__Host-XSRF-TOKEN') !== undefined ? '__Host-XSRF-TOKEN' : 'XSRF-TOKEN'
}

/** The session token of a signed-in client. */
export function tokenOf (c: Client): string {
  return c.jar.get('JWT') ?? c.jar.get('__Host-JWT')!
}

/** The payload of a token, unverified (for assertions). */
export function payloadOf (token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>
}
