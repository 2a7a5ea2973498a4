/**
 * Child process of fastify-jwt.test.ts: the root plugin, then @fastify/jwt with its default `decoratorName`.
 * @fastify/jwt's declaration of `request.user` throws where the registering code cannot catch it, so the
 * outcome is printed from here: `ready` or the code of the error that ended startup.
 */
import Fastify from 'fastify'
import jwt from '@fastify/jwt'
import { authPlugin } from '../../../auth.js'

process.on('uncaughtException', (err: Error & { code?: string }) => {
  process.stdout.write(`startup failed: ${err.code ?? 'no code'}: ${err.message}\n`)
  process.exit(3)
})
const app = Fastify()
await app.register(authPlugin, { secret: () => 'gatehouse-secret-gatehouse-secret-01', url: 'http://127.0.0.1' })
await app.register(jwt, { secret: 'service-secret-service-secret-0123' })
await app.ready()
process.stdout.write('ready\n')
await app.close()
