/**
 * A host app exactly as the docs start one: `Fastify({ logger: true })` (pino writing JSON lines to stdout), the
 * auth plugin with a password provider, and an API route of the app's own taking query sessions. Started by
 * request-log.test.ts with an IPC channel: sends `{ port }` once it listens, closes on any message (flushing the
 * log) and exits.
 */
import Fastify from 'fastify'
import { authPlugin } from '../../../auth.js'

const app = Fastify({ logger: true })
// Registered before the auth plugin: masked all the same.
app.get('/api/early', async () => ({ early: true }))
await app.register(authPlugin, {
  secret: 'request-log-child-secret-0123456789abcdef',
  url: 'http://127.0.0.1',
  tokenSources: { query: true },
  providers: [{ kind: 'direct', name: 'local', checker: (user, passwd) => user === 'alice' && passwd === 'alice-pw' }]
})
app.get('/api/items', { preHandler: app.auth.authenticate }, async (request) => ({ items: [], user: request.user!.name }))
await app.listen({ port: 0, host: '127.0.0.1' })
process.once('message', () => { void app.close().then(() => { process.exit(0) }) })
process.on('disconnect', () => { process.exit(0) })
process.send!({ port: (app.server.address() as { port: number }).port })
