/**
 * The examples of the toolkit pages (docs/toolkit/*.md) that the README's table does not already carry, compiled
 * (lines as written there; test/docs/readme-examples.test.ts checks they stay the same).
 */
import Fastify from 'fastify'
import authPlugin from '../../index.js'
import {
  basicAuthPlugin, cacheControlHook, cacheControlPlugin, cleanPath, cleanPathPlugin, corsPlugin, crossOriginProtectionHook,
  crossOriginProtectionPlugin, gzipPlugin, maybePlugin, rejectPlugin, secureHeadersPlugin, stripSlashes, stripSlashesPlugin,
  timeoutHook, timeoutPlugin
} from '../../toolkit.js'

declare const hash: string

const app = Fastify()
await app.register(authPlugin, { secret: () => 's'.repeat(32), url: 'http://localhost' })
await app.register(async (app) => {
  app.register(maybePlugin, { when: (req) => req.method !== 'GET', hook: app.auth.authenticate })
  app.register(rejectPlugin, { when: (req) => !req.headers['x-key'], status: 403, message: 'key required' })
  app.register(basicAuthPlugin, { user: 'ops', bcryptHash: hash, throttle: true })
})

// go-pkgz/rest v1.21-v1.24's middleware (cors.md, secure-headers.md, cross-origin-protection.md, timeout.md,
// cache-control.md, clean-path.md, gzip.md).
const ok = async (): Promise<string> => 'ok'
await app.register(async (app) => {
  app.register(corsPlugin, { origins: ['https://app.example.com'], credentials: true })
  app.register(secureHeadersPlugin, { hsts: { maxAge: 63072000, preload: true } })
  app.register(crossOriginProtectionPlugin, { trustedOrigins: ['https://sso.example.com'] })
  app.register(timeoutPlugin, { timeout: 5000 })
  app.register(cacheControlPlugin, { maxAge: 3600, version: '1.4.2' })
  app.register(cleanPathPlugin)
  app.register(stripSlashesPlugin)
  app.register(gzipPlugin, { onlyContentTypes: ['text/', 'application/json'] })
  app.post('/form', { onRequest: crossOriginProtectionHook() }, ok)
  app.get('/slow', { onRequest: timeoutHook(2000) }, ok)
  app.get('/tenant', { onRequest: cacheControlHook({ maxAge: 60, version: (req) => String(req.headers['x-tenant']) }) }, ok)
  // cache-control.md: after the auth hooks, in preHandler.
  app.get('/me', { preHandler: [app.auth.authenticate, cacheControlHook({ maxAge: 60, version: (req) => String(req.headers['x-tenant']) })] }, ok)
  const opts = { maxAge: 60, version: '1.4.2' }
  app.get('/me/settings', { preHandler: [app.auth.authenticate, cacheControlHook(opts)] }, ok)
})
const clean = Fastify({ rewriteUrl: (req) => stripSlashes(cleanPath(req.url ?? '/')) })
await clean.close()
