/**
 * Type test: fastify-gatehouse beside @fastify/jwt, as the README shows. Both declare `request.user`; the
 * FastifyJWT declaration below makes @fastify/jwt's user type the gatehouse user, so the two declarations agree.
 */
import Fastify from 'fastify'
import jwt from '@fastify/jwt'
import authPlugin, { type User } from '../../index.js'

declare module '@fastify/jwt' {
  interface FastifyJWT { user: User | null }
}

const app = Fastify()
await app.register(authPlugin, { secret: () => 's'.repeat(32), url: 'http://localhost' })
await app.register(jwt, { secret: 'j'.repeat(32), decoratorName: 'jwtUser' })
app.get('/api', { preHandler: app.auth.authenticate }, async (request) => request.user?.name)
app.get('/service', async (request) => {
  const payload = await request.jwtVerify<{ sub: string }>()
  return payload.sub
})
