/**
 * The server examples of docs/guide/spa.md, compiled (lines as written there; test/docs/readme-examples.test.ts
 * checks they stay the same). Two apps: the cookie session for a sibling subdomain, and the spa client.
 */
import Fastify from 'fastify'
import authPlugin from '../../index.js'
import { corsPlugin } from '../../toolkit.js'

/** The app's own password check. */
declare const checkPassword: (user: string, passwd: string) => Promise<boolean>

{
  const app = Fastify()
  await app.register(corsPlugin, { origins: ['https://app.example.com'], credentials: true, allowedHeaders: ['Content-Type', 'X-XSRF-TOKEN'] })
  await app.register(authPlugin, {
    secret: process.env.AUTH_SECRET!,
    url: 'https://api.example.com',
    cookies: { domain: 'example.com' },
    login: { crossSite: { trustedOrigins: ['https://app.example.com'] } },
    providers: [{ kind: 'direct', name: 'local', checker: async (user, passwd) => await checkPassword(user, passwd) }]
  })
  app.get('/api/me', { onRequest: app.auth.authenticate }, async (request) => ({ name: request.user!.name }))
}
{
  const app = Fastify()
  await app.register(corsPlugin, { origins: ['https://spa.example.com'] })
  await app.register(authPlugin, {
    secret: process.env.AUTH_SECRET!,
    url: 'https://api.example.com',
    login: { page: true },
    clients: [{ id: 'web', kind: 'spa', name: 'Example web app', redirectUris: ['https://spa.example.com/callback'], accessToken: { maxAge: '5m' }, refreshToken: { idleTimeout: '1d', maxAge: '7d' } }],
    providers: [{ kind: 'direct', name: 'local', checker: async (user, passwd) => await checkPassword(user, passwd) }]
  })
  app.get('/api/me', { onRequest: app.auth.authenticate }, async (request) => ({ name: request.user!.name }))
}
