/**
 * The servers of the hook ladder (`npm run bench -- ladder`), each run in a process of its own by
 * bench/peer-server.ts: one GET route `/r` answering `{ ok: true }`, and one step more per rung:
 * - `ladder-bare`: nothing else;
 * - `ladder-async-hook`, `ladder-callback-hook`: an empty route `onRequest` hook, async (a promise per request)
 *   or callback-style (`(request, reply, done) => done()`);
 * - `ladder-empty-onsend`: an empty callback-style `onSend` hook on every route (as @fastify/cookie adds);
 * - `ladder-decorators`: the request and reply decorators with values that the root plugin declares (`user`,
 *   `cookies`, and @fastify/cookie's two reply symbols), without any hook;
 * - `ladder-cookie-onsend`: @fastify/cookie registered without its parsing hook (`hook: false`), which leaves
 *   its global `onSend` hook and its request and reply decorators: what the root plugin registers of it;
 * - `ladder-root`: the root plugin (`authPlugin`) registered, the route without any of its hooks;
 * - `ladder-auth-onrequest`, `ladder-auth-prehandler`: `authenticate` as the route's onRequest or preHandler;
 * - `ladder-auth-callback`: `authenticate` as a callback-style onRequest hook that calls `done()` synchronously
 *   when the session is served from the verified-session cache (bench/callback-auth.ts: a wrapper of the bench,
 *   not the product's hook);
 * - `ladder-admin`, `ladder-rbac`, `ladder-trace`: `admin`, `rbac(['bench'])` and `trace` as onRequest (the
 *   ladder's user is an admin holding that role; `trace` is measured on a request without credentials);
 * - `ladder-fastify-jwt-cache`: @fastify/jwt with its verify cache, `jwtVerify()` as onRequest (the peer to beat).
 * Every server verifies the same session (same secret and options as `ladderSession`, which the bench uses to
 * make the one request all of them receive).
 */
import Fastify, { type FastifyInstance, type RouteShorthandOptions } from 'fastify'
import cookie from '@fastify/cookie'
import { authPlugin, type AuthOptions } from '../auth.js'
import { MemoryStateStore } from '../stores/state/memory.js'
import type { TokenPairResponse } from '../plugins/core/base/types.js'
import { benchKey, proofSigner } from './dpop-proofs.js'
import type { Peer } from './peer-apps.js'
import { callbackAuthenticate } from './callback-auth.js'
import type { BenchRequest } from './lib.js'

const SECRET = 'bench-ladder-secret-0123456789abcdef-0123456789abcdef'
// Tokens of 2 hours: a run under callgrind (ladder:ir) outlasts the default 15 minutes, and an expired Bearer token
// is refused (a cookie one is refreshed), which would end the count with 401s.
const AUTH = { secret: () => SECRET, url: 'http://127.0.0.1', session: { tokenDuration: '2h' } }
// An admin holding the role the rbac rung asks for: one token serves every rung (authenticate, admin, rbac).
const USER = { name: 'bench', id: 'local_0123456789abcdef0123456789abcdef01234567', role: 'bench', attrs: { admin: true } }
/** The role the rbac rung requires. */
const ROLE = 'bench'

const ok = async (): Promise<{ ok: boolean }> => ({ ok: true })

type Setup = (app: FastifyInstance) => Promise<RouteShorthandOptions>

function ladderApp (setup: Setup): () => Promise<Peer> {
  return async () => {
    const app = Fastify()
    app.get('/r', await setup(app), ok)
    await app.ready()
    return { app, cookies: [], headers: {} }
  }
}

const withAuth = (route: (app: FastifyInstance) => RouteShorthandOptions): Setup => async (app) => {
  await app.register(authPlugin, AUTH)
  await app.after()
  return route(app)
}

export const LADDER_APPS: Record<string, () => Promise<Peer>> = {
  'ladder-bare': ladderApp(async () => ({})),
  'ladder-async-hook': ladderApp(async () => ({ onRequest: async () => {} })),
  'ladder-callback-hook': ladderApp(async () => ({ onRequest: (_req, _reply, done) => { done() } })),
  'ladder-empty-onsend': ladderApp(async (app) => { app.addHook('onSend', (_req, _reply, _payload, done) => { done() }); return {} }),
  'ladder-decorators': ladderApp(async (app) => {
    // Untyped: the package's and @fastify/cookie's declarations type these two as they are, not as null.
    const decorateRequest = app.decorateRequest.bind(app) as (name: string, value: unknown) => FastifyInstance
    decorateRequest('user', null)
    decorateRequest('cookies', null)
    app.decorateReply(Symbol('setCookies'), null)
    app.decorateReply(Symbol('setCookiesHookRan'), false)
    return {}
  }),
  'ladder-cookie-onsend': ladderApp(async (app) => { await app.register(cookie, { hook: false }); return {} }),
  'ladder-root': ladderApp(withAuth(() => ({}))),
  'ladder-auth-onrequest': ladderApp(withAuth((app) => ({ onRequest: app.auth.authenticate }))),
  'ladder-auth-prehandler': ladderApp(withAuth((app) => ({ preHandler: app.auth.authenticate }))),
  'ladder-auth-callback': ladderApp(withAuth((app) => ({ onRequest: callbackAuthenticate(app) }))),
  'ladder-admin': ladderApp(withAuth((app) => ({ onRequest: app.auth.admin }))),
  'ladder-rbac': ladderApp(withAuth((app) => ({ onRequest: app.auth.rbac([ROLE]) }))),
  'ladder-trace': ladderApp(withAuth((app) => ({ onRequest: app.auth.trace }))),
  'ladder-fastify-jwt-cache': ladderApp(fastifyJwtCache),
  // A registered client's tokens (bench/dpop.ts): the same route, Bearer against DPoP.
  'ladder-auth-client': ladderApp(async (app) => {
    await app.register(authPlugin, clientAuth())
    await app.after()
    return { onRequest: app.auth.authenticate }
  })
}

/**
 * The root plugin's options with a registered client (`bench-cli`), for the client-token rungs. The state store is
 * the in-memory one with room for the proofs' `jti` entries of a whole run from one session (by default a session
 * may have 1,000 live ones, about 14 requests a second: docs/guide/api-clients.md), since the bench is one client.
 */
function clientAuth (): AuthOptions {
  return { ...AUTH, clients: [{ id: 'bench-cli', kind: 'device' }], stateStore: new MemoryStateStore({ maxEntries: 10_000_000, maxBytes: 8 * 1024 ** 3, maxPerClient: 10_000_000 }) }
}

/**
 * The requests of the client-token rungs: a pair of `bench-cli` without a proof, its access token as
 * `Authorization: Bearer`; and a pair bound to a bench key (`tokens.issuePair` in a route of the app with a proof),
 * its access token as `Authorization: DPoP`, each request with a fresh proof of that key (`dpop`).
 */
export async function clientSessions (): Promise<{ bearer: BenchRequest; dpop: BenchRequest; jkt: string }> {
  const app = Fastify()
  await app.register(authPlugin, clientAuth())
  app.post('/pair', async (request) => await app.auth.tokens.issuePair(request, 'bench-cli', { user: USER }))
  await app.ready()
  try {
    const { key, jwk, jkt } = benchKey()
    const pair = async (headers: Record<string, string>): Promise<TokenPairResponse> => (await app.inject({ method: 'POST', url: '/pair', headers })).json()
    const plain = await pair({})
    const bound = await pair({ dpop: proofSigner({ key, jwk, htu: `${AUTH.url}/pair` }, 'POST')() })
    if (plain.token_type !== 'Bearer' || bound.token_type !== 'DPoP') throw new Error(`bench pairs: ${plain.token_type} and ${bound.token_type}`)
    return {
      bearer: { path: '/r', headers: { authorization: `Bearer ${plain.access_token}` } },
      dpop: { path: '/r', headers: { authorization: `DPoP ${bound.access_token}` }, dpop: { key, jwk, htu: `${AUTH.url}/r`, token: bound.access_token } },
      jkt
    }
  } finally {
    await app.close()
  }
}

/**
 * @fastify/jwt verifying the ladder's session cookie (same secret) as its documentation shows: `request.jwtVerify()`
 * in an onRequest hook, @fastify/cookie parsing the Cookie header, `verify: { cache: true }` (fast-jwt's cache of
 * verified tokens, 1,000 entries, LRU; the claims still checked against the clock).
 */
async function fastifyJwtCache (app: FastifyInstance): Promise<RouteShorthandOptions> {
  // A computed specifier: its declarations redeclare `request.user`, which the package's own declare too.
  const jwt = ((await import('@fastify/jwt' as string)) as { default: never }).default
  await app.register(cookie)
  await app.register(jwt, { secret: SECRET, cookie: { cookieName: 'JWT', signed: false }, verify: { cache: true } })
  return { onRequest: async (request) => { await (request as unknown as { jwtVerify: () => Promise<unknown> }).jwtVerify() } }
}

/**
 * The request every rung receives: a session of the ladder's servers, as a cookie pair with the XSRF header, or
 * (`bearer`) the same token in `Authorization: Bearer`.
 */
export async function ladderSession (bearer = false): Promise<BenchRequest> {
  const app = Fastify()
  await app.register(authPlugin, AUTH)
  await app.ready()
  try {
    const { token, claims } = await app.auth.tokens.create({ user: USER })
    if (bearer) return { path: '/r', headers: { authorization: `Bearer ${token}` } }
    return { path: '/r', headers: { cookie: `JWT=${token}; XSRF-TOKEN=${claims.jti}`, 'x-xsrf-token': claims.jti } }
  } finally {
    await app.close()
  }
}
