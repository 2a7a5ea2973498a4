/**
 * Test helper for the session tests: an app with the root plugin, a direct provider `local` that lets anyone in,
 * and routes `/private` (authenticate) and `/whoami` (trace). It answers over `inject` (test/helpers/app.ts): no
 * socket, nothing of the wire under test here; `fetch` and `client()` send through it.
 */
import type { FastifyInstance } from 'fastify'
import { authPlugin, type AuthOptions } from '../../auth.js'
import type { CoreTokenService } from '../../plugins/core/sessions/tokens.js'
import { coreOf } from '../../plugins/core/signin/internals.js'
import { client as httpClient, CookieJar, listen, type Client } from './client.js'
import { injectApp, type InjectedApp, type InjectFetch } from './app.js'

/** `injectApp`'s shape over a real port. */
async function listening (setup: (app: FastifyInstance) => Promise<void> | void): Promise<InjectedApp> {
  const { app, base } = await listen(setup)
  const send: InjectFetch = async (input, init) => await fetch(input, init)
  return { app, base, fetch: send, client: (jar = new CookieJar()) => httpClient(base, jar) }
}

export const SECRET = 'session-tests-secret-0123456789abcdef-0123'

export interface SessionApp {
  app: FastifyInstance
  base: string
  /** `fetch` for the app (over `inject`): `s.fetch(`${s.base}/private`, …)`. */
  fetch: InjectFetch
  /** A client of the app with its own cookie jar (or `jar`). */
  client (jar?: CookieJar): Client
  /** Signs `name` in with cookies (and `query` appended to the login URL). */
  login (name: string, query?: string): Promise<Client>
  /** GET `path` with the client's cookies and its XSRF header. */
  get (c: Client, path?: string): Promise<Response>
  /** The core's token service, with its cache. */
  tokens: CoreTokenService
  close (): Promise<void>
}

/**
 * The session app over `inject`; with `{ listen: true }` on a free loopback port (for a peer in another process,
 * which can reach it only over the wire), `fetch` and `client()` then sending over HTTP.
 */
export async function sessionApp (opts: Partial<AuthOptions> = {}, setup?: (app: FastifyInstance) => void, { listen: onPort = false } = {}): Promise<SessionApp> {
  const { app, base, fetch, client } = await (onPort ? listening : injectApp)(async (app) => {
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
    fetch,
    client: (jar = new CookieJar()) => client(jar),
    async login (name, query = '') {
      const c = client()
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
