/**
 * The per-group examples of docs/reference/options.md, compiled (lines as written there;
 * test/docs/readme-examples.test.ts checks they stay the same).
 */
import Fastify from 'fastify'
import authPlugin from '../../index.js'

declare const secret: () => string
declare const url: string

const app = Fastify()
await app.register(authPlugin, { secret, url, session: { tokenDuration: '15m', maxAge: '31d', idleTimeout: '8h', cacheSize: 10_000 } })
await app.register(authPlugin, { secret, url, cookies: { sameSite: 'Strict', secure: true, domain: 'example.com' } })
await app.register(authPlugin, { secret, url, xsrf: { headerName: 'X-CSRF-Token', ignoreMethods: ['GET', 'HEAD'] } })
await app.register(authPlugin, { secret, url, tokenSources: { header: 'X-Session', query: false } })
await app.register(authPlugin, { secret, url, basicAuth: { adminPasswd: process.env.ADMIN_PASSWD! } })
await app.register(authPlugin, { secret, url, revocation: { recheckInterval: '10s' } })
await app.register(authPlugin, { secret, url, revocation: { sessionList: { maxPerUser: 50, ip: 'hash' } } })
await app.register(authPlugin, { secret, url, revocation: { sessionList: false } })
await app.register(authPlugin, { secret, url, revocation: { recheckInterval: '10s', sessionList: { maxPerUser: 50, ip: 'hash' } } })
await app.register(authPlugin, { secret, url, rateLimit: { login: { max: 10, window: '1m' }, failures: { perAccount: 5, lockout: '1m', maxLockout: '1h' }, sends: { perAddress: 3, window: '1h' } } })
await app.register(authPlugin, { secret, url, crossSite: { trustedOrigins: ['https://app.example.com'], allowSameSite: false } })
await app.register(authPlugin, { secret, url, avatar: { store: 'bolt:///var/lib/app/avatars.db', resizeLimit: 256, maxAge: '1h', fetch: { maxBytes: 1_048_576, allowedHosts: ['avatars.githubusercontent.com'], loginWait: '1s' } } })
