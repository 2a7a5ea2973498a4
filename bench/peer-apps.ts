/**
 * The servers of the peer table (`npm run bench -- peers`): one GET route `/r` answering `{ ok: true }` behind
 * each library's session check, built the way its documentation shows, with a session created in the same
 * process (memory stores live there). Each peer also names the check its route makes, callable in process, so
 * the cost of the check alone can be timed without HTTP.
 *
 * What each check does (the README's peer table repeats this):
 * - gatehouse `authenticate`: HS256 signature and claims of the JWT cookie, XSRF header against its cookie,
 *   revocation (the verified-session cache answers a token seen before; revocation on, the default).
 * - @fastify/jwt `request.jwtVerify()` from a cookie (gatehouse's, same secret): HS256 signature and claims
 *   (fast-jwt), no revocation; with `verify: { cache: true }`, fast-jwt's cache of verified tokens (1,000
 *   tokens, LRU) answers a token seen before, its claims still checked against the clock.
 * - @fastify/secure-session: decrypts and authenticates the cookie (libsodium secretbox), no store, no revocation.
 * - @fastify/session (memory store): unsigns the session-id cookie (HMAC), reads the store; by its defaults
 *   (`rolling`, `saveUninitialized`) it saves the session and sets the cookie again on every answer.
 * - better-auth `getSession` with its memory adapter: a session-token cookie (HMAC-signed) looked up in the
 *   database on every call; with `cookieCache` on, a signed cookie holding the session answers instead of the
 *   database until it expires (set here to outlive the run).
 */
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import cookie from '@fastify/cookie'
import { authPlugin } from '../auth.js'
import { IDLE_REPLY } from './lib.js'

export const PEER_NAMES = ['bare', 'gatehouse', 'fastify-jwt-cache', 'fastify-jwt', 'secure-session', 'fastify-session', 'better-auth-cache', 'better-auth'] as const
export type PeerName = typeof PEER_NAMES[number]

/** A peer's server, the cookies and headers a browser holding its session sends, and its check in process. */
export interface Peer {
  app: FastifyInstance
  /** The port to listen on, when the app must know it beforehand (its public `url`); default a free one. */
  port?: number
  /** Counters the server keeps besides CPU time (sent with each CPU reading). */
  stats?: () => object
  /** `name=value` pairs. */
  cookies: string[]
  headers: Record<string, string>
  /**
   * One session check as the route makes it, on the request every peer receives: its headers, and its cookies
   * parsed (as @fastify/cookie hands them to a route; a peer that parses the header itself gets only headers).
   */
  check?: (headers: Record<string, string>, cookies: Record<string, string>) => Promise<unknown>
}

const SECRET = 'bench-peers-secret-0123456789abcdef-0123456789abcdef'
const USER = { name: 'bench', id: 'local_0123456789abcdef0123456789abcdef01234567' }
const ok = async (): Promise<{ ok: boolean }> => ({ ok: true })

/** Loads a package by a computed specifier: some redeclare `request.user` or `request.session`, which ours own. */
async function load<T> (specifier: string): Promise<T> {
  return (await import(specifier)) as T
}

/** Parses the Cookie header as a browser sends it into the `cookies` object Fastify's cookie plugin makes. */
export function cookieObject (header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0) out[part.slice(0, eq).trim()] = decodeURIComponent(part.slice(eq + 1).trim())
  }
  return out
}

async function bare (): Promise<Peer> {
  const app = Fastify()
  app.get('/r', ok)
  return { app, cookies: [], headers: {}, check: async () => undefined }
}

async function gatehouse (): Promise<Peer> {
  const app = Fastify()
  await app.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1' })
  app.get('/r', { preHandler: app.auth.authenticate }, ok)
  await app.ready()
  const { token, claims } = await app.auth.tokens.create({ user: USER })
  const authenticate = app.auth.authenticate
  return {
    app,
    cookies: [`JWT=${token}`, `XSRF-TOKEN=${claims.jti}`],
    headers: { 'x-xsrf-token': claims.jti },
    check: async (headers, cookies) => {
      const req = { method: 'GET', headers, cookies, query: {} } as unknown as FastifyRequest
      await authenticate.call(app, req, IDLE_REPLY)
      if ((req as { user?: unknown }).user == null) throw new Error('gatehouse: not authenticated')
    }
  }
}

type JwtApp = FastifyInstance & { jwt: { verify: (t: string) => unknown } }

/**
 * @fastify/jwt verifies gatehouse's own session cookie (same secret, as in the core ladder), so both check the same
 * token: the shared request always holds it, since gatehouse is one of the peers.
 */
async function fastifyJwt (cache: boolean): Promise<Peer> {
  const jwtPlugin = (await load<{ default: never }>('@fastify/jwt')).default
  const app = Fastify()
  await app.register(cookie)
  await app.register(jwtPlugin, { secret: SECRET, cookie: { cookieName: 'JWT', signed: false }, ...(cache ? { verify: { cache: true } } : {}) })
  app.get('/r', async (req) => { await (req as unknown as { jwtVerify: () => Promise<unknown> }).jwtVerify(); return { ok: true } })
  await app.ready()
  const jwt = (app as unknown as JwtApp).jwt
  // What jwtVerify does for a cookie: read it from the parsed cookies, verify it.
  return { app, cookies: [], headers: {}, check: async (_headers, cookies) => jwt.verify(cookies.JWT!) }
}

type SecureSessionApp = FastifyInstance & {
  createSecureSession: (data: object) => unknown
  encodeSecureSession: (session: unknown) => string
  decodeSecureSession: (cookie: string) => { get: (key: string) => unknown } | null
}

async function secureSession (): Promise<Peer> {
  const plugin = (await load<{ default: never }>('@fastify/secure-session')).default
  const app = Fastify()
  await app.register(plugin, { key: Buffer.from(SECRET.slice(0, 32)), cookieName: 'ssession', cookie: { path: '/', secure: false } })
  app.get('/r', async (req, reply) => {
    const user = (req as unknown as { session: { get: (k: string) => unknown } }).session.get('user')
    return user === undefined ? reply.code(401).send({ error: 'unauthorized' }) : { ok: true }
  })
  await app.ready()
  const s = app as unknown as SecureSessionApp
  const value = s.encodeSecureSession(s.createSecureSession({ user: USER }))
  return {
    app,
    cookies: [`ssession=${encodeURIComponent(value)}`],
    headers: {},
    check: async (_headers, cookies) => {
      if (s.decodeSecureSession(cookies.ssession!)?.get('user') === undefined) throw new Error('secure-session: no user')
    }
  }
}

type SessionApp = FastifyInstance & { decryptSession: (id: string, req: object, done: (err?: Error) => void) => void }

async function fastifySession (): Promise<Peer> {
  const plugin = (await load<{ default: never }>('@fastify/session')).default
  const app = Fastify()
  await app.register(cookie)
  // Its documented defaults, but for `secure`, which would keep the cookie off plain-HTTP loopback.
  await app.register(plugin, { secret: SECRET, cookie: { secure: false } })
  app.post('/login', async (req) => { (req as unknown as { session: { set: (k: string, v: unknown) => void } }).session.set('user', USER); return { ok: true } })
  app.get('/r', async (req, reply) => {
    const user = (req as unknown as { session: { get: (k: string) => unknown } }).session.get('user')
    return user === undefined ? reply.code(401).send({ error: 'unauthorized' }) : { ok: true }
  })
  const login = await app.inject({ method: 'POST', url: '/login' })
  const sid = login.cookies.find((c) => c.name === 'sessionId')
  if (sid === undefined) throw new Error('@fastify/session: no session cookie')
  const s = app as unknown as SessionApp
  return {
    app,
    cookies: [`sessionId=${encodeURIComponent(sid.value)}`],
    headers: {},
    check: (_headers, cookies) => new Promise((resolve, reject) => {
      const req = {} as { session?: { get: (k: string) => unknown } }
      s.decryptSession(cookies.sessionId!, req, (err) => {
        if (err !== undefined && err !== null) reject(err)
        else if (req.session?.get('user') === undefined) reject(new Error('@fastify/session: no user'))
        else resolve(undefined)
      })
    })
  }
}

interface BetterAuth {
  handler: (request: Request) => Promise<Response>
  api: { getSession: (ctx: { headers: Headers }) => Promise<unknown> }
}

/** better-auth on Fastify as its integration guide mounts it: a catch-all route handing a Web Request to `auth.handler`. */
async function betterAuth (cookieCache: boolean): Promise<Peer> {
  const { betterAuth: create } = await load<{ betterAuth: (o: object) => BetterAuth }>('better-auth')
  const { memoryAdapter } = await load<{ memoryAdapter: (db: object) => unknown }>('better-auth/adapters/memory')
  const { fromNodeHeaders } = await load<{ fromNodeHeaders: (h: object) => Headers }>('better-auth/node')
  const prefix = cookieCache ? 'ba-cached' : 'ba'
  const auth = create({
    secret: SECRET,
    baseURL: 'http://127.0.0.1',
    database: memoryAdapter({ user: [], session: [], account: [], verification: [] }),
    emailAndPassword: { enabled: true },
    // The cache must outlive a full run, or it would be measured half cached, half not.
    session: { cookieCache: { enabled: cookieCache, maxAge: 24 * 3600 } },
    // Two better-auth servers share the request: each its own cookie names.
    advanced: { cookiePrefix: prefix },
    logger: { disabled: true },
    telemetry: { enabled: false }
  })
  const app = Fastify()
  app.route({
    method: ['GET', 'POST'],
    url: '/api/auth/*',
    handler: async (request, reply) => {
      const url = new URL(request.url, `http://${request.headers.host ?? '127.0.0.1'}`)
      const init: RequestInit = { method: request.method, headers: fromNodeHeaders(request.headers) }
      if (request.body !== undefined) init.body = JSON.stringify(request.body)
      const response = await auth.handler(new Request(url, init))
      reply.status(response.status)
      response.headers.forEach((value, key) => { reply.header(key, value) })
      return reply.send(response.body === null ? null : await response.text())
    }
  })
  app.get('/r', async (req, reply) => {
    const session = await auth.api.getSession({ headers: fromNodeHeaders(req.headers) })
    return session === null ? reply.code(401).send({ error: 'unauthorized' }) : { ok: true }
  })
  const signUp = await app.inject({
    method: 'POST',
    url: '/api/auth/sign-up/email',
    headers: { origin: 'http://127.0.0.1' },
    payload: { email: 'bench@example.com', password: 'bench-password-0123', name: 'bench' }
  })
  const cookies = signUp.cookies.filter((c) => c.name.startsWith(`${prefix}.`)).map((c) => `${c.name}=${c.value}`)
  if (!cookies.some((c) => c.startsWith(`${prefix}.session_token=`))) throw new Error(`better-auth: sign-up answered ${signUp.statusCode} without a session cookie`)
  if (cookieCache && !cookies.some((c) => c.startsWith(`${prefix}.session_data=`))) throw new Error('better-auth: no cookie-cache cookie')
  return {
    app,
    cookies,
    headers: {},
    check: async (headers) => {
      if (await auth.api.getSession({ headers: fromNodeHeaders(headers) }) === null) throw new Error('better-auth: no session')
    }
  }
}

export const PEERS: Record<PeerName, () => Promise<Peer>> = {
  bare,
  gatehouse,
  'fastify-jwt-cache': () => fastifyJwt(true),
  'fastify-jwt': () => fastifyJwt(false),
  'secure-session': secureSession,
  'fastify-session': fastifySession,
  'better-auth-cache': () => betterAuth(true),
  'better-auth': () => betterAuth(false)
}
