/**
 * A real OpenID Provider for tests: the `oidc-provider` package on 127.0.0.1 (port from the OS), PKCE required,
 * RS256 ID tokens signed by a key made here, its development login and consent pages. `routes` answers extra
 * paths on the same server (a picture) before the provider sees the request.
 */
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { exportJWK, generateKeyPair } from 'jose'

interface OidcServer { callback(): (req: IncomingMessage, res: ServerResponse) => void }
type OidcServerClass = new (issuer: string, config: Record<string, unknown>) => OidcServer
type Handler = (req: IncomingMessage, res: ServerResponse) => boolean

export interface StartedOidcServer {
  issuer: string
  close(): Promise<void>
}

/**
 * Starts the provider with `config` (clients, claims, findAccount, …: its own configuration, to which the
 * signing key, cookie keys, PKCE and the development pages are added). `issuer` is known only once the server
 * listens: `config` may be a function of it.
 */
export async function startOidcServer (config: (issuer: string) => Record<string, unknown>, routes?: Handler): Promise<StartedOidcServer> {
  // The package ships no type declarations; only its constructor and callback() are used.
  const { default: Provider } = await import('oidc-provider' as string) as { default: OidcServerClass }
  const http = createServer()
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(http.address() as { port: number }).port}`
  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  const op = new Provider(issuer, {
    pkce: { required: () => true },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] },
    features: { devInteractions: { enabled: true } },
    ...config(issuer)
  })
  const callback = op.callback()
  http.on('request', (req, res) => { if (routes?.(req, res) !== true) callback(req, res) })
  return {
    issuer,
    close: async () => await new Promise<void>((resolve) => { http.closeAllConnections(); http.close(() => resolve()) })
  }
}
