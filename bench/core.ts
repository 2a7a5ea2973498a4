/**
 * Issue 2 benchmark: a bare route, the same route behind `fastify.auth.authenticate` with a cookie session and
 * the XSRF header, and the same route behind @fastify/jwt's `request.jwtVerify()` reading a cookie.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import cookie from '@fastify/cookie'
import { authPlugin } from '../plugins/auth.js'
import { measure, printTable } from './lib.js'

const SECRET = 'bench-secret-0123456789abcdef-0123456789abcdef'

async function bare (): Promise<FastifyInstance> {
  const app = Fastify()
  app.get('/r', async () => ({ ok: true }))
  return app
}

async function gatehouse (): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1' })
  app.get('/r', { preHandler: app.auth.authenticate }, async () => ({ ok: true }))
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

export async function benchCore (): Promise<void> {
  // One session created with the real service: the cookie pair a browser would send.
  const issuer = await gatehouse()
  await issuer.ready()
  const { token, claims } = await issuer.auth.tokens.create({ user: { name: 'bench', id: 'local_bench' } })
  await issuer.close()
  const jwtApp = Fastify()
  await jwtApp.register((await import(String('@fastify/jwt'))).default, { secret: SECRET })
  await jwtApp.ready()
  const competitorToken = (jwtApp as unknown as { jwt: { sign: (p: object) => string } }).jwt.sign({ user: { name: 'bench' } })
  await jwtApp.close()

  const base = { label: 'bare route', rps: await measure('bare', bare, { path: '/r' }) }
  const rows = [
    { label: 'authenticate (cookie + XSRF)', rps: await measure('gatehouse', gatehouse, { path: '/r', headers: { cookie: `JWT=${token}; XSRF-TOKEN=${claims.jti}`, 'x-xsrf-token': claims.jti } }) },
    { label: '@fastify/jwt jwtVerify (cookie)', rps: await measure('fastify-jwt', fastifyJwt, { path: '/r', headers: { cookie: `JWT=${competitorToken}` } }) }
  ]
  printTable('auth core: authenticate vs bare vs @fastify/jwt', base, rows)
  console.log(`authenticate / @fastify/jwt: ${(rows[0]!.rps / rows[1]!.rps).toFixed(2)}x`)
}
