/**
 * The README's HTTP-toolkit table, compiled: each example there (a registration, route hooks, a constructor
 * option) appears below as written; test/docs/readme-examples.test.ts checks they stay the same.
 */
import Fastify from 'fastify'
import authPlugin from '../../index.js'
import {
  appInfoPlugin, benchmarksPlugin, blackWordsPlugin, deprecationPlugin, fileServerPlugin, gzipPlugin, headersPlugin, healthPlugin, maybe,
  metricsPlugin, noCacheHook, noCachePlugin, onlyFromHook, pingPlugin, profilerPlugin, realIpPlugin, recovererPlugin, reject,
  requestLoggerPlugin, rewriteUrl, sizeLimitHook, sizeLimitPlugin, requestIdPlugin, withBcryptHash
} from '../../toolkit.js'
import { publish, stdLogger, type Logger } from '../../compat.js'

declare const db: { ping (): Promise<void> }
declare const logger: Logger
declare const queue: unknown[]
declare const hash: string
declare const root: string

const app = Fastify()
await app.register(authPlugin, { secret: () => 's'.repeat(32), url: 'http://localhost' })
const ok = async (): Promise<string> => 'ok'

await app.register(appInfoPlugin, { name: 'api', version: '1.2.0', org: 'acme' })
await app.register(pingPlugin)
await app.register(healthPlugin, { path: '/health', checks: [{ name: 'db', check: () => db.ping() }] })
await app.register(requestLoggerPlugin, { logger: stdLogger(), maskIp: (ip) => ip.replace(/\.\d+$/, '.0'), maskKeys: ['pin'] })
await app.register(recovererPlugin, { logger })
app.get('/internal', { preHandler: onlyFromHook(['10.0.0.0/8', '::1']) }, ok)
await app.register(metricsPlugin, { allow: ['127.0.0.1'] }); publish('jobs', () => queue.length)
await app.register(blackWordsPlugin, { words: ['viagra'] })
await app.register(sizeLimitPlugin, { limit: 1024 })
app.post('/upload', { preParsing: sizeLimitHook(1024) }, ok)
await app.register(requestIdPlugin)
await app.register(deprecationPlugin, { date: new Date('2027-01-01'), link: '/docs/v2' })
const rewritten = Fastify({ rewriteUrl: rewriteUrl([{ from: '^/api/v1/(.*)$', to: '/api/v2/$1' }]) })
await app.register(noCachePlugin)
app.get('/fresh', { onRequest: noCacheHook }, ok)
await app.register(headersPlugin, { headers: ['X-Frame-Options:DENY', 'Link:<https://x>; rel=a'] })
await app.register(gzipPlugin, { threshold: 1024 })
await app.register(realIpPlugin)
app.post('/maybe', { preHandler: maybe((req) => req.method !== 'GET', app.auth.authenticate) }, ok)
app.get('/keyed', { onRequest: reject((req) => !req.headers['x-key'], 403, 'key required') }, ok)
await app.register(benchmarksPlugin, { path: '/bench' })
await app.register(profilerPlugin, { prefix: '/debug' })
app.get('/ops', { onRequest: withBcryptHash('ops', hash) }, ok)
await app.register(fileServerPlugin, { root })

void rewritten
