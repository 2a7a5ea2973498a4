/**
 * The session ladder: what each layer of an authenticated request costs over HTTP. Every case but the refresh
 * receives the same request bytes (the session cookie pair and the XSRF header a browser sends):
 *   bare route → + @fastify/cookie → + `authenticate` (cached session) → `authenticate` on a token that is refreshed
 *   on every request → @fastify/jwt's `request.jwtVerify()` reading the same cookie.
 * Alternating rounds, medians (bench/lib.ts). Targets: `authenticate` >= 0.95x the bare route and >= 2x @fastify/jwt.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import cookie from '@fastify/cookie'
import FakeTimers from '@sinonjs/fake-timers'
import { authPlugin } from '../auth.js'
import { alternate, printTable, type BenchRequest } from './lib.js'

const SECRET = 'bench-secret-0123456789abcdef-0123456789abcdef'
const USER = { name: 'bench', id: 'local_0123456789abcdef0123456789abcdef01234567' }
const BARE_TARGET = 0.95
const JWT_TARGET = 2

const handler = async (): Promise<{ ok: boolean }> => ({ ok: true })

async function bare (): Promise<FastifyInstance> {
  const app = Fastify()
  app.get('/r', handler)
  return app
}

async function withCookie (): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(cookie)
  app.get('/r', handler)
  return app
}

async function gatehouse (): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1' })
  app.get('/r', { preHandler: app.auth.authenticate }, handler)
  return app
}

/** @fastify/jwt is loaded through a computed specifier: its types redeclare `request.user`, which ours own. */
async function fastifyJwt (): Promise<FastifyInstance> {
  const jwtPlugin = (await import(String('@fastify/jwt'))).default
  const app = Fastify()
  await app.register(cookie)
  await app.register(jwtPlugin, { secret: SECRET, cookie: { cookieName: 'JWT', signed: false } })
  app.get('/r', async (req) => { await (req as unknown as { jwtVerify: () => Promise<unknown> }).jwtVerify(); return { ok: true } })
  return app
}

/** A session created with the real service (at `at` ms, when given): the request a browser would send. */
async function sessionRequest (at?: number): Promise<BenchRequest> {
  const clock = at === undefined ? undefined : FakeTimers.install({ toFake: ['Date'], now: at })
  try {
    const issuer = await gatehouse()
    await issuer.ready()
    const { token, claims } = await issuer.auth.tokens.create({ user: USER })
    await issuer.close()
    return { path: '/r', headers: { cookie: `JWT=${token}; XSRF-TOKEN=${claims.jti}`, 'x-xsrf-token': claims.jti } }
  } finally {
    clock?.uninstall()
  }
}

export async function benchCore (): Promise<void> {
  const same = await sessionRequest()
  // Issued 20 minutes ago with the default 15-minute token lifetime: every request refreshes it.
  const expired = await sessionRequest(Date.now() - 20 * 60_000)
  const results = await alternate([
    { label: 'bare route (same request bytes)', build: bare, req: same },
    { label: '+ @fastify/cookie', build: withCookie, req: same },
    { label: '+ authenticate (cached session)', build: gatehouse, req: same },
    { label: 'authenticate, refresh on every request', build: gatehouse, req: expired },
    { label: '@fastify/jwt jwtVerify (same cookie)', build: fastifyJwt, req: same }
  ])
  const [base, cookieRow, auth, refresh, jwt] = results.map((r) => ({ label: r.label, rps: r.median, cpuUs: r.cpuUs }))
  printTable(`session ladder (median of ${results[0]!.runs.length} alternating rounds, req/s)`, base!, [
    cookieRow!, { ...auth!, target: BARE_TARGET }, refresh!, jwt!
  ])
  const vsJwt = auth!.rps / jwt!.rps
  console.log(`authenticate / @fastify/jwt: ${vsJwt.toFixed(2)}x req/s, ${(jwt!.cpuUs / auth!.cpuUs).toFixed(2)}x CPU per request; target >= ${JWT_TARGET.toFixed(2)}x ${vsJwt >= JWT_TARGET ? 'ok' : 'BELOW'}`)
}
