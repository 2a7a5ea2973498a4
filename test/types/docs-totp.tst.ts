/**
 * The example of docs/providers/totp.md, compiled (lines as written there; test/docs/readme-examples.test.ts checks
 * they stay the same).
 */
import Fastify, { type RouteHandlerMethod } from 'fastify'
import authPlugin, { totpProvider } from '../../index.js'
import type { CredChecker } from '../../index.js'

declare const secret: () => string
declare const url: string
declare const checker: CredChecker
declare const changePassword: RouteHandlerMethod

const app = Fastify()
await app.register(authPlugin, { secret, url, providers: [{ kind: 'direct', name: 'local', checker }] })
await app.register(totpProvider, {
  encryptionKey: process.env.TOTP_KEY!, // 32 random bytes: `openssl rand -base64 32`
  store: 'redis://127.0.0.1:6379/0',    // shared by every instance
  secondFactor: ['local']               // password logins of `local` also need a code, once the user added an app
})
// Routes that need a second factor confirmed within 5 minutes:
app.post('/account/password', { preHandler: app.auth.stepUp({ within: '5m' }) }, changePassword)
