/**
 * Type test: fastify-gatehouse beside @fastify/jwt, as the README shows (its lines verbatim below). Both
 * declare `request.user`; the FastifyJWT declaration makes @fastify/jwt's user type the gatehouse user, so the
 * two declarations agree.
 */
import Fastify from 'fastify'
import jwt from '@fastify/jwt'
import authPlugin, { type User } from '../../index.js'
declare module '@fastify/jwt' { interface FastifyJWT { user: User | null } }

const app = Fastify()
const secret = (): string => 's'.repeat(32)
const url = 'http://localhost'
const serviceSecret = 'j'.repeat(32)
await app.register(authPlugin, { secret, url })
await app.register(jwt, { secret: serviceSecret, decoratorName: 'jwtUser' })   // request.jwtVerify() fills request.jwtUser
app.get('/api', { preHandler: app.auth.authenticate }, async (request) => request.user?.name)
app.get('/service', async (request) => {
  const payload = await request.jwtVerify<{ sub: string }>()
  return payload.sub
})
