/**
 * The servers of the hook ladder (`npm run bench -- ladder`, issue 39 item 3): where the CPU of an authenticated
 * request goes, one step at a time, each server in a process of its own (bench/peer-server.ts). Every server gets
 * the same request bytes (the session cookie pair and the XSRF header) and answers `{ ok: true }` on `/r`.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import cookie from '@fastify/cookie'
import { authPlugin } from '../auth.js'
import type { Peer } from './peer-apps.js'

export const LADDER_NAMES = ['ladder-bare', 'ladder-async-hook', 'ladder-callback-hook', 'ladder-cookie', 'ladder-root', 'ladder-auth-onrequest', 'ladder-auth-prehandler', 'ladder-trace'] as const
export type LadderName = typeof LADDER_NAMES[number]

const SECRET = 'bench-ladder-secret-0123456789abcdef-0123456789abcdef'
const USER = { name: 'bench', id: 'local_0123456789abcdef0123456789abcdef01234567' }
const ok = async (): Promise<{ ok: boolean }> => ({ ok: true })

/** A server without the package, given the same cookie and header bytes as the others (they are ignored). */
async function plain (setup: (app: FastifyInstance) => void | Promise<void>): Promise<Peer> {
  const app = Fastify()
  await setup(app)
  return { app, cookies: [], headers: {} }
}

/** `authPlugin` registered, `/r` set up by `route`; the session its cookie pair carries. */
async function withRoot (route: (app: FastifyInstance) => void): Promise<Peer> {
  const app = Fastify()
  await app.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1', avatar: false })
  route(app)
  await app.ready()
  const { token, claims } = await app.auth.tokens.create({ user: USER })
  return { app, cookies: [`JWT=${token}`, `XSRF-TOKEN=${claims.jti}`], headers: { 'x-xsrf-token': claims.jti } }
}

export const LADDER_APPS: Record<LadderName, () => Promise<Peer>> = {
  'ladder-bare': async () => await plain((app) => { app.get('/r', ok) }),
  'ladder-async-hook': async () => await plain((app) => { app.get('/r', { onRequest: async () => {} }, ok) }),
  'ladder-callback-hook': async () => await plain((app) => { app.get('/r', { onRequest: (_req, _reply, done) => { done() } }, ok) }),
  'ladder-cookie': async () => await plain(async (app) => { await app.register(cookie); app.get('/r', ok) }),
  'ladder-root': async () => await withRoot((app) => { app.get('/r', ok) }),
  'ladder-auth-onrequest': async () => await withRoot((app) => { app.get('/r', { onRequest: app.auth.authenticate }, ok) }),
  'ladder-auth-prehandler': async () => await withRoot((app) => { app.get('/r', { preHandler: app.auth.authenticate }, ok) }),
  'ladder-trace': async () => await withRoot((app) => { app.get('/r', { preHandler: app.auth.trace }, ok) })
}
