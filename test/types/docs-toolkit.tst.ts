/**
 * The examples of the toolkit pages (docs/toolkit/*.md) that the README's table does not already carry, compiled
 * (lines as written there; test/docs/readme-examples.test.ts checks they stay the same).
 */
import Fastify from 'fastify'
import authPlugin from '../../index.js'
import { basicAuthPlugin, maybePlugin, rejectPlugin } from '../../toolkit.js'

declare const hash: string

const app = Fastify()
await app.register(authPlugin, { secret: () => 's'.repeat(32), url: 'http://localhost' })
await app.register(async (app) => {
  app.register(maybePlugin, { when: (req) => req.method !== 'GET', hook: app.auth.authenticate })
  app.register(rejectPlugin, { when: (req) => !req.headers['x-key'], status: 403, message: 'key required' })
  app.register(basicAuthPlugin, { user: 'ops', bcryptHash: hash, throttle: true })
})
