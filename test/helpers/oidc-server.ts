/**
 * A real OpenID Provider for tests: the `oidc-provider` package on 127.0.0.1 (port from the OS), PKCE required,
 * ID tokens signed by keys made here (one RS256 key `k1` unless told), its development login and consent pages.
 * `routes` answers extra paths on the same server (a picture) before the provider sees the request, or watches
 * them (answering false). The provider can be restarted on the same address with other keys (`rotate`: a signing-
 * key rotation at the IdP), and a test can replace the ID token of its token endpoint's answers (`idToken`), to
 * serve a token the provider would never issue.
 */
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { exportJWK, generateKeyPair, type JWK } from 'jose'
import type { Browser, Navigation } from './oauth2-browser.js'

interface KoaContext { method: string; path: string; status: number; body: unknown }
interface OidcServer {
  callback(): (req: IncomingMessage, res: ServerResponse) => void
  use(fn: (ctx: KoaContext, next: () => Promise<void>) => Promise<void>): void
}
type OidcServerClass = new (issuer: string, config: Record<string, unknown>) => OidcServer
type Handler = (req: IncomingMessage, res: ServerResponse) => boolean

export interface StartedOidcServer {
  issuer: string
  /** The private signing keys (JWKs with `kid` and `alg`) the provider holds now. */
  keys: JWK[]
  /** Restarts the provider on the same address with `keys` (a key rotation); logins in progress are lost. */
  rotate(keys: JWK[]): void
  /** When set, the `id_token` of every token endpoint answer is replaced by what it returns. */
  idToken: ((issued: string) => string | Promise<string>) | undefined
  close(): Promise<void>
}

/** A new private signing key as the provider takes it: RS256 unless told, with its `kid`. */
export async function signingKey (kid: string, alg: 'RS256' | 'ES256' = 'RS256'): Promise<JWK> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true })
  return { ...(await exportJWK(privateKey)), kid, alg, use: 'sig' }
}

/**
 * Starts the provider with `config` (clients, claims, findAccount, …: its own configuration, to which the
 * signing keys, cookie keys, PKCE and the development pages are added). `issuer` is known only once the server
 * listens: `config` may be a function of it.
 */
export async function startOidcServer (config: (issuer: string) => Record<string, unknown>, routes?: Handler, keys?: JWK[]): Promise<StartedOidcServer> {
  // The package ships no type declarations; only its constructor, use() and callback() are used.
  const { default: Provider } = await import('oidc-provider' as string) as { default: OidcServerClass }
  const http = createServer()
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(http.address() as { port: number }).port}`
  const cookieKey = randomBytes(32).toString('hex')
  let handle: (req: IncomingMessage, res: ServerResponse) => void = () => {}
  const started: StartedOidcServer = {
    issuer,
    keys: keys ?? [await signingKey('k1')],
    idToken: undefined,
    rotate (keys) {
      started.keys = keys
      const op = new Provider(issuer, {
        pkce: { required: () => true },
        cookies: { keys: [cookieKey] },
        jwks: { keys },
        features: { devInteractions: { enabled: true } },
        ...config(issuer)
      })
      op.use(async (ctx, next) => {
        await next()
        const body = ctx.body as Record<string, unknown> | undefined
        if (started.idToken !== undefined && ctx.method === 'POST' && ctx.path === '/token' && typeof body?.id_token === 'string') {
          ctx.body = { ...body, id_token: await started.idToken(body.id_token) }
        }
      })
      handle = op.callback()
    },
    close: async () => await new Promise<void>((resolve) => { http.closeAllConnections(); http.close(() => resolve()) })
  }
  started.rotate(started.keys)
  http.on('request', (req, res) => { if (routes?.(req, res) !== true) handle(req, res) })
  return started
}

/** Runs the provider's login and consent pages from `start` like a user would; the navigation that left them. */
export async function signInAt (browser: Browser, issuer: string, start: string, login: string): Promise<Navigation> {
  let nav = await browser.navigate(start)
  const hops = [...nav.hops]
  for (let step = 0; step < 4; step++) {
    if (nav.res.status !== 200 || !nav.url.startsWith(issuer)) break
    const fields: Record<string, string> = /name="login"/.test(nav.body) ? { login, password: 'any' } : {}
    nav = await browser.submitForm(nav.url, nav.body, fields)
    hops.push(...nav.hops)
  }
  return { ...nav, hops }
}
