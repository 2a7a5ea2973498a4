/**
 * Test helper for the registered clients: an app whose `url` is its own address (so that the RFC 8414 issuer is what
 * a standard OAuth 2 client discovers), with a `mobile` (native) and a `cli` (device) client, a direct provider
 * `local` that lets anyone in, `/private` (authenticate), and `/app/pair`, where the app hands a signed-in cookie
 * user a first token pair of `mobile` (`tokens.issuePair`). Every audit event is kept.
 *
 * The app answers over `inject` (openid-client's requests included, through its `customFetch`): no socket, no
 * connection to wait for. `{ listen: true }` puts it on a free loopback port, for a real browser.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import type FakeTimers from '@sinonjs/fake-timers'
import * as oidc from 'openid-client'
import { authPlugin, type AuthOptions } from '../../auth.js'
import type { AuditEvent } from '../../lib/audit/events.js'
import { freePort } from './redis-server.js'
import { INJECT_BASE, injectFetch, type InjectFetch } from './app.js'

export const CLIENTS_SECRET = 'clients-tests-secret-0123456789abcdef-0123'

export interface ClientsApp {
  app: FastifyInstance
  base: string
  events: AuditEvent[]
  /** `fetch` for the app: over `inject`, or the real one when it listens. */
  fetch: InjectFetch
  /** A first pair of `client` for user `name` (id `u-<name>`), as the app's own sign-in would hand it. */
  pair (name: string, client?: string): Promise<{ access_token: string; refresh_token: string; expires_in: number }>
  /** openid-client's configuration of `clientId`, found by discovery (RFC 8414) on this app, sending through `fetch`. */
  discover (clientId?: string): Promise<oidc.Configuration>
  close (): Promise<void>
}

export interface ClientsAppOptions {
  /** On a free loopback port (for a real browser); otherwise over `inject`. */
  listen?: boolean
  /** Adds routes before the app is ready. */
  setup?: (app: FastifyInstance) => void
}

export async function clientsApp (opts: Partial<AuthOptions> = {}, { listen = false, setup }: ClientsAppOptions = {}): Promise<ClientsApp> {
  const port = listen ? await freePort() : undefined
  const base = port === undefined ? INJECT_BASE : `http://127.0.0.1:${port}`
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
  if (port === undefined) await app.ready()
  else await app.listen({ port, host: '127.0.0.1' })
  const send: InjectFetch = port === undefined ? injectFetch(app) : async (input, init) => await fetch(input, init)
  return {
    app,
    base,
    events,
    fetch: send,
    async pair (name, client) {
      const r = await app.inject({ method: 'POST', url: '/app/pair', payload: { name, client } })
      if (r.statusCode !== 200) throw new Error(`pair answered ${r.statusCode}: ${r.body}`)
      return r.json()
    },
    async discover (clientId = 'mobile') {
      return await oidc.discovery(new URL(`${base}/auth`), clientId, undefined, oidc.None(), {
        algorithm: 'oauth2', execute: [oidc.allowInsecureRequests], [oidc.customFetch]: async (url, init) => await send(url, init as RequestInit)
      })
    },
    close: async () => { await app.close() }
  }
}

/**
 * openid-client's device polling (RFC 8628) with the device's waits on `clock`, a fake `Date` clock the app reads:
 * each poll is sent at once here and `da.interval` seconds after the previous one on the app's clock, so that the
 * app sees a device that polls exactly as told, and no test sleeps. `beforePoll(n)` runs before the n-th poll (from
 * 1) and may wait for the test (the person deciding on another device). `answers` lists each poll's answer: its
 * `error`, or `tokens`.
 */
export function pollOnClock (s: ClientsApp, config: oidc.Configuration, da: oidc.DeviceAuthorizationResponse, clock: ReturnType<typeof FakeTimers.install>,
  beforePoll: (n: number) => unknown = () => {}): { polled: Promise<oidc.TokenEndpointResponse | Error>; answers: string[] } {
  const answers: string[] = []
  let n = 0
  config[oidc.customFetch] = async (url, init) => {
    const poll = url.endsWith('/auth/token') && String(init.body).includes('device_code')
    if (poll) {
      await beforePoll(++n)
      clock.tick((da.interval ?? 5) * 1000)
    }
    const res = await s.fetch(url, init as RequestInit)
    if (poll) answers.push(((await res.clone().json()) as { error?: string }).error ?? 'tokens')
    return res
  }
  // The device's own wait is the clock's: none here.
  const polled = oidc.pollDeviceAuthorizationGrant(config, { ...da, interval: 0 }).catch((e: unknown) => e as Error)
  return { polled, answers }
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
